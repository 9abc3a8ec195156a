import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { errors } from "@corridor/kit";
import { CustomersKycService } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import type { ScaCustomerDirectory } from "../domain/sca/ports.js";

/** ScaCustomerDirectory over CustomersKycService.GetCustomer (the transport is asked for at the first call). */
export function scaCustomers(transport: () => Transport): ScaCustomerDirectory {
  let client: Client<typeof CustomersKycService> | undefined;
  const kyc = () => (client ??= createClient(CustomersKycService, transport()));
  return {
    async get(platformId, customerId) {
      let customer;
      try {
        ({ customer } = await kyc().getCustomer({ platformId, customerId }));
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.NotFound) throw errors.notFound("Customer", customerId);
        throw err;
      }
      if (!customer || customer.platformId !== platformId || customer.isDeleted) throw errors.notFound("Customer", customerId);
      const country = (customer.address?.country || customer.businessInfo?.countryOfIncorporation || customer.region || "").toUpperCase();
      return { id: customer.id, country, email: customer.email };
    },
  };
}
