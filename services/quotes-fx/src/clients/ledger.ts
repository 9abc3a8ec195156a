import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import type { LedgerPort } from "../domain/ports.js";

/** Accounts from the ledger; a 404 there is "not found" here (undefined), anything else propagates. */
export function ledgerPort(transport: () => Transport): LedgerPort {
  let client: Client<typeof LedgerService> | undefined;
  const ledger = () => (client ??= createClient(LedgerService, transport()));
  const orNotFound = async <T>(call: Promise<T>): Promise<T | undefined> => {
    try {
      return await call;
    } catch (err) {
      if (ConnectError.from(err).code === Code.NotFound) return undefined;
      throw err;
    }
  };
  return {
    async internalAccount(platformId, accountId) {
      const res = await orNotFound(ledger().getInternalAccount({ platformId, accountId }));
      const a = res?.account;
      if (!a) return undefined;
      return { id: a.id, customerId: a.customerId, type: a.type, currency: a.currency?.code ?? "", available: a.available };
    },
    async checkPaymentRail(platformId, currency, d) {
      // Refusals (PAYMENT_RAIL_NOT_AVAILABLE) propagate as the ledger's public error.
      await ledger().checkPaymentRail({ platformId, currency, externalAccountId: d.externalAccountId, paymentRail: d.paymentRail });
    },
    async externalAccount(platformId, accountId) {
      // The ledger scopes external accounts by owner; the receiver may be a customer's or the platform's.
      for (const owner of ["CUSTOMER", "PLATFORM"]) {
        const res = await orNotFound(ledger().getExternalAccount({ platformId, owner, accountId }));
        const a = res?.account;
        if (a) {
          const accountType = a.accountInfo?.accountType;
          const beneficiary = a.accountInfo?.beneficiary;
          return {
            id: a.id,
            customerId: a.customerId,
            status: a.status,
            currency: a.currency,
            accountType: typeof accountType === "string" ? accountType : "",
            beneficiary: beneficiary && typeof beneficiary === "object" && !Array.isArray(beneficiary) ? (beneficiary as Record<string, unknown>) : undefined,
          };
        }
      }
      return undefined;
    },
  };
}
