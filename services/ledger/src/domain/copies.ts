import { errors, type Clock, type FieldError } from "@corridor/kit";
import type { LedgerStore } from "./ports.js";
import { accountType, open } from "./accounts.js";
import { WALLET_CURRENCY } from "./currencies.js";

/**
 * The event-fed copies of platforms and customers and the accounts they open (called by the
 * consumers inside their inbox transaction), and the customer holdings customers-kyc asks for
 * before it deletes a customer.
 */
export function createCopies(deps: { store: LedgerStore; clock: Clock }) {
  const { store, clock } = deps;
  return {
    async onPlatform(inbox: unknown, p: { platformId: string; environment?: string; currencies: string[]; at: Date }) {
      const trx = store.within(inbox);
      await trx.upsertPlatformCopy(p);
      // Currencies only ever gain accounts: a currency removed from the config keeps its account
      // (and its money).
      for (const currency of p.currencies) await open(trx, p.platformId, "PLATFORM", undefined, accountType(currency), currency, clock.now());
    },

    async onCustomer(inbox: unknown, c: { platformId: string; customerId: string; platformCustomerId: string; currencies: string[]; isDeleted: boolean; verificationStatus?: string; at: Date }) {
      const trx = store.within(inbox);
      const { closed } = await trx.upsertCustomerCopy(c);
      if (c.isDeleted) return;
      // Closed by the ledger (deletion in progress): no new accounts, whatever the event says.
      if (closed) return;
      const now = clock.now();
      for (const currency of c.currencies) await open(trx, c.platformId, "CUSTOMER", c.customerId, accountType(currency), currency, now);
      await open(trx, c.platformId, "CUSTOMER", c.customerId, "EMBEDDED_WALLET", WALLET_CURRENCY, now);
    },

    /**
     * What the customer holds (non-zero balances and holds, in-flight transactions); with `close`
     * and nothing held, the customer is closed in the same transaction (see data/customers.ts).
     */
    async customerHoldings(platformId: string, customerId: string, close: boolean) {
      const missing: FieldError[] = [];
      if (!customerId) missing.push({ field: "customerId", reason: "is required" });
      if (missing.length) throw errors.invalidInput(missing);
      return store.transaction((trx) => trx.holdingsOf({ platformId, customerId, close, now: clock.now() }));
    },
  };
}
