import { createClient, type Transport } from "@connectrpc/connect";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { CustomersKycService } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import type { Directory } from "./ledger.js";

/**
 * The Directory over Connect: auth-sessions says which environment a platform runs in,
 * customers-kyc who a customer is and whether it is verified. An environment never changes, so
 * it is remembered.
 */
export function connectDirectory(opts: { authSessions: Transport; customersKyc: Transport }): Directory {
  const auth = createClient(AuthSessionsService, opts.authSessions);
  const kyc = createClient(CustomersKycService, opts.customersKyc);
  const environments = new Map<string, "SANDBOX" | "PRODUCTION">();
  return {
    async environment(platformId) {
      const known = environments.get(platformId);
      if (known) return known;
      const res = await auth.getPlatform({ platformId });
      const env = res.platform?.environment === Environment.PRODUCTION ? "PRODUCTION" : "SANDBOX";
      environments.set(platformId, env);
      return env;
    },
    async transactionTypes(platformId, currency) {
      const res = await auth.getPlatformConfig({ platformId });
      const c = res.config?.supportedCurrencies.find((k) => k.currencyCode === currency);
      return c ? [...c.enabledTransactionTypes] : undefined;
    },
    async customer(platformId, customerId) {
      const res = await kyc.getCustomerSummary({ platformId, customerId });
      const c = res.customer;
      return { platformCustomerId: c?.platformCustomerId ?? "", verificationStatus: c?.verificationStatus ?? "UNVERIFIED", isDeleted: c?.isDeleted ?? false };
    },
  };
}
