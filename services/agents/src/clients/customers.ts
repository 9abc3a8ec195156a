import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { CustomersKycService } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import type { CustomerDirectory } from "../domain/ports.js";
import { orNotFound } from "./errors.js";

/** customers-kyc GetCustomerSummary: another platform's customer is 404 there, so undefined here. */
export function customerDirectory(transport: () => Transport): CustomerDirectory {
  // Resolved on first use: a service may call another only at request time, never while starting.
  let client: Client<typeof CustomersKycService> | undefined;
  return {
    async customer(platformId, customerId) {
      client ??= createClient(CustomersKycService, transport());
      const res = await orNotFound(client.getCustomerSummary({ platformId, customerId }));
      const c = res?.customer;
      if (!c || c.platformId !== platformId) return undefined;
      return { platformCustomerId: c.platformCustomerId, isDeleted: c.isDeleted };
    },
  };
}
