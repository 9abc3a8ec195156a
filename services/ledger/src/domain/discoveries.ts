import { errors, findCurrency, type FieldError } from "@corridor/kit";
import { ACCOUNT_TYPES, PAYMENT_RAILS, accountCurrencies, type AccountType } from "./account-info.js";
import type { Directory, LedgerStatements } from "./ports.js";

/**
 * The countries a bank account type reaches: the country of its currency, and for euro accounts
 * the euro area, whose banks SEPA reaches (SEPA also reaches non-euro countries, but a EUR_ACCOUNT
 * there is the exception). Wallet types (SPARK_WALLET, LIGHTNING) are in no country and are not
 * discovered.
 */
export const ACCOUNT_COUNTRIES: Partial<Record<AccountType, readonly string[]>> = {
  USD_ACCOUNT: ["US"],
  BRL_ACCOUNT: ["BR"],
  AED_ACCOUNT: ["AE"],
  MXN_ACCOUNT: ["MX"],
  EUR_ACCOUNT: ["AT", "BE", "CY", "DE", "EE", "ES", "FI", "FR", "GR", "HR", "IE", "IT", "LT", "LU", "LV", "MT", "NL", "PT", "SI", "SK"],
};

/** Display names of the rails. */
const RAIL_NAMES: Record<string, string> = {
  ACH: "ACH",
  WIRE: "Fedwire",
  RTP: "RTP (The Clearing House)",
  FEDNOW: "FedNow",
  SEPA: "SEPA Credit Transfer",
  SEPA_INSTANT: "SEPA Instant Credit Transfer",
};

export interface Discovery {
  country: string;
  currency: string;
  /** "" for an account type no named rail reaches (the sandbox pays it; production has no route). */
  paymentRail: string;
  accountType: AccountType;
  displayName: string;
}

/**
 * GET /discoveries: the payment rails a platform can pay out over, per country and currency,
 * derived from the tables payouts use, so nothing listed is refused and nothing accepted is missing:
 * - the external account types and the currencies each holds, the rails each can be paid by and
 *   their countries (account-info.ts: what POST /customers/external-accounts validates);
 * - the platform's configuration: only currencies it supports with OUTGOING enabled (what quotes
 *   and transfers require, TRANSACTION_TYPE_NOT_ENABLED otherwise);
 * - the routing (rails.ts): a sandbox platform's payouts go to the simulator over every rail; a
 *   production platform's only over the rails the operator bound a connector to for that currency
 *   (else 400 PAYMENT_RAIL_NOT_AVAILABLE), so only those are listed.
 */
export function createDiscoveries(deps: { store: Pick<LedgerStatements, "railBindingsOf">; directory: Pick<Directory, "environment" | "transactionTypes"> }) {
  return {
    async listDiscoveries(platformId: string, f: { country?: string; currency?: string }): Promise<Discovery[]> {
      const bad: FieldError[] = [];
      if (f.country && !/^[A-Z]{2}$/.test(f.country)) bad.push({ field: "country", reason: "must be an ISO 3166-1 alpha-2 code" });
      if (f.currency && !findCurrency(f.currency)) bad.push({ field: "currency", reason: "must be a known ISO 4217 currency code" });
      if (bad.length) throw errors.invalidInput(bad);
      const environment = await deps.directory.environment(platformId);
      const out: Discovery[] = [];
      const enabled = new Map<string, Promise<boolean>>();
      const outgoing = (currency: string) => {
        let p = enabled.get(currency);
        if (!p) enabled.set(currency, (p = deps.directory.transactionTypes(platformId, currency).then((t) => !!t?.includes("OUTGOING"))));
        return p;
      };
      for (const type of ACCOUNT_TYPES) {
        const countries = ACCOUNT_COUNTRIES[type];
        if (!countries) continue;
        if (f.country && !countries.includes(f.country)) continue;
        for (const currency of accountCurrencies(type)) {
          if (f.currency && currency !== f.currency) continue;
          if (!(await outgoing(currency))) continue;
          let rails: readonly string[] = PAYMENT_RAILS[type]?.allowed ?? [""];
          if (environment === "PRODUCTION") {
            const bound = new Set((await deps.store.railBindingsOf(platformId, currency)).map((b) => b.payment_rail));
            rails = rails.filter((r) => r !== "" && bound.has(r));
          }
          const name = findCurrency(currency)?.name ?? currency;
          for (const country of f.country ? [f.country] : countries) {
            for (const rail of rails) {
              out.push({ country, currency, paymentRail: rail, accountType: type, displayName: rail ? `${RAIL_NAMES[rail] ?? rail} (${country})` : `${name} bank account (${country})` });
            }
          }
        }
      }
      return out.sort((a, b) => a.country.localeCompare(b.country) || a.currency.localeCompare(b.currency) || a.paymentRail.localeCompare(b.paymentRail));
    },
  };
}
