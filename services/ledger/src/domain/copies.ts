import { errors, type Clock, type FieldError } from "@corridor/kit";
import { fundingInstructions, type FundingBank } from "./funding.js";
import type { LedgerStore, LedgerTx } from "./ports.js";
import { accountType, open } from "./accounts.js";
import { WALLET_CURRENCY } from "./currencies.js";

/**
 * The event-fed copies of platforms and customers and the accounts they open (called by the
 * consumers inside their inbox transaction), and the customer holdings customers-kyc asks for
 * before it deletes a customer.
 */
export function createCopies(deps: { store: LedgerStore; clock: Clock; fundingBanks?: readonly FundingBank[] }) {
  const { store, clock } = deps;
  /** The operator's bank account for a production platform's currency (none for sandbox platforms). */
  const placeOf = async (trx: LedgerTx, platformId: string) => {
    const production = (await trx.platformEnvironment(platformId)) === "PRODUCTION";
    return { production, bank: (currency: string) => (production ? deps.fundingBanks?.find((b) => b.currency === currency) : undefined) };
  };
  return {
    async onPlatform(inbox: unknown, p: { platformId: string; environment?: string; currencies: string[]; at: Date }) {
      const trx = store.within(inbox);
      await trx.upsertPlatformCopy(p);
      const place = await placeOf(trx, p.platformId);
      // Currencies only ever gain accounts: a currency removed from the config keeps its account
      // (and its money).
      for (const currency of p.currencies) await open(trx, p.platformId, "PLATFORM", undefined, accountType(currency), currency, clock.now(), place.bank(currency), place.production);
    },

    async onCustomer(inbox: unknown, c: { platformId: string; customerId: string; platformCustomerId: string; currencies: string[]; isDeleted: boolean; verificationStatus?: string; at: Date }) {
      const trx = store.within(inbox);
      const { closed } = await trx.upsertCustomerCopy(c);
      if (c.isDeleted) return;
      // Closed by the ledger (deletion in progress): no new accounts, whatever the event says.
      if (closed) return;
      const now = clock.now();
      const place = await placeOf(trx, c.platformId);
      for (const currency of c.currencies) await open(trx, c.platformId, "CUSTOMER", c.customerId, accountType(currency), currency, now, place.bank(currency), place.production);
      await open(trx, c.platformId, "CUSTOMER", c.customerId, "EMBEDDED_WALLET", WALLET_CURRENCY, now, undefined, place.production);
    },

    /**
     * Production fiat accounts whose funding instructions do not name the operator's configured
     * bank account for their currency get them (same reference): accounts opened before
     * LEDGER_FUNDING_BANK_ACCOUNTS was set or changed. Run at every start; answers how many changed.
     */
    async refreshFundingInstructions(): Promise<number> {
      const banks = deps.fundingBanks ?? [];
      let changed = 0;
      for (const a of await store.productionFiatAccounts(banks.map((b) => b.currency))) {
        const bank = banks.find((b) => b.currency === a.currency)!;
        const next = fundingInstructions({ currency: a.currency, reference: a.reference, isPlatformAccount: a.owner_kind === "PLATFORM", bank });
        if (JSON.stringify(next) === JSON.stringify(a.funding_instructions)) continue;
        await store.setFundingInstructions(a.id, next, clock.now());
        changed += 1;
      }
      return changed;
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
