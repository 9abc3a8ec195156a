import { createClient, type Transport } from "@connectrpc/connect";
import { platformFactsClient, type ConfigBoard } from "@corridor/kit";
import { CustomersKycService } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import type { Directory } from "../domain/ports.js";

/**
 * The Directory over Connect: auth-sessions (through the kit's platform-facts client) says which
 * environment a platform runs in and which transaction types its configuration enables,
 * customers-kyc who a customer is and whether it is verified. The domain asks its event-fed copies
 * first (domain/facts.ts) and this only as the fallback, never inside a database transaction.
 */
export function connectDirectory(opts: { authSessions: Transport; customersKyc: Transport; configBoard?: ConfigBoard }): Directory {
  const platforms = platformFactsClient(() => opts.authSessions, { board: opts.configBoard });
  const kyc = createClient(CustomersKycService, opts.customersKyc);
  return {
    environment: (platformId) => platforms.environment(platformId),
    async transactionTypes(platformId, currency) {
      const config = await platforms.config(platformId);
      const c = config.supportedCurrencies.find((k) => k.currencyCode === currency);
      return c ? [...c.enabledTransactionTypes] : undefined;
    },
    async customer(platformId, customerId) {
      const res = await kyc.getCustomerSummary({ platformId, customerId });
      const c = res.customer;
      return { platformCustomerId: c?.platformCustomerId ?? "", verificationStatus: c?.verificationStatus ?? "UNVERIFIED", isDeleted: c?.isDeleted ?? false };
    },
  };
}
