import { AppError, errors } from "@corridor/kit";
import type { UmaScenario } from "./ports.js";

/** The sandbox UMA domain (decisions §9). */
export const SANDBOX_UMA_DOMAIN = "sandbox.uma.money";

const UMA_ADDRESS = /^\$([a-z0-9][a-z0-9._+-]{0,63})@([a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+)$/i;

export function parseUmaAddress(address: string): { user: string; domain: string } | undefined {
  const m = UMA_ADDRESS.exec(address);
  return m ? { user: m[1]!.toLowerCase(), domain: m[2]!.toLowerCase() } : undefined;
}

export interface SandboxReceiver {
  scenario: UmaScenario;
  currencyCode: string;
  requiredPayerDataFields: { name: string; mandatory: boolean }[];
}

const BASIC_PAYER_DATA = [
  { name: "FULL_NAME", mandatory: true },
  { name: "BIRTH_DATE", mandatory: false },
];

/**
 * The spec's sandbox receivers ($<scenario>@sandbox.uma.money). $fail.compliance.usd asks for
 * more payer data (as a compliance-heavy receiver would); its lookup succeeds and the payment
 * fails later (see README: "UMA sandbox receivers").
 */
const SANDBOX_RECEIVERS: Record<string, SandboxReceiver> = {
  "success.usd": { scenario: "SUCCESS", currencyCode: "USD", requiredPayerDataFields: BASIC_PAYER_DATA },
  "success.eur": { scenario: "SUCCESS", currencyCode: "EUR", requiredPayerDataFields: BASIC_PAYER_DATA },
  "success.mxn": { scenario: "SUCCESS", currencyCode: "MXN", requiredPayerDataFields: BASIC_PAYER_DATA },
  "pending.long.usd": { scenario: "PENDING_LONG", currencyCode: "USD", requiredPayerDataFields: BASIC_PAYER_DATA },
  // Issue 10: the remaining transaction outcomes, reachable by address (README sandbox table).
  "fail.lnurlp.usd": { scenario: "FAIL_LNURLP", currencyCode: "USD", requiredPayerDataFields: BASIC_PAYER_DATA },
  "fail.payeedata.usd": { scenario: "FAIL_PAYEE_DATA", currencyCode: "USD", requiredPayerDataFields: BASIC_PAYER_DATA },
  "refunded.usd": { scenario: "REFUNDED", currencyCode: "USD", requiredPayerDataFields: BASIC_PAYER_DATA },
  "fail.compliance.usd": {
    scenario: "FAIL_COMPLIANCE",
    currencyCode: "USD",
    requiredPayerDataFields: [
      { name: "FULL_NAME", mandatory: true },
      { name: "BIRTH_DATE", mandatory: true },
      { name: "NATIONALITY", mandatory: true },
    ],
  },
};

export function sandboxReceiver(user: string, domain: string): SandboxReceiver | undefined {
  return domain === SANDBOX_UMA_DOMAIN ? SANDBOX_RECEIVERS[user] : undefined;
}

/** Receiver-side bounds of the sandbox receivers, receiving minor units (1.00 to 1,000,000.00). */
export const SANDBOX_RECEIVER_LIMITS = { min: 100n, max: 100_000_000n };

/** Countries whose currency is each sandbox receiver currency (the euro: the euro area). */
const COUNTRIES_OF_CURRENCY: Readonly<Record<string, readonly string[]>> = {
  USD: ["US"],
  MXN: ["MX"],
  EUR: ["AT", "BE", "CY", "DE", "EE", "ES", "FI", "FR", "GR", "HR", "IE", "IT", "LT", "LU", "LV", "MT", "NL", "PT", "SI", "SK"],
};

export interface UmaProviderView {
  name: string;
  domain: string;
  supportedRegions: string[];
  supportedCurrencies: string[];
}

/**
 * GET /uma-providers in the sandbox: the providers a sandbox platform can pay, which is the
 * sandbox UMA domain and its receivers ($success.usd, ...): their currencies and those
 * currencies' countries. Filters: an ISO 3166-1 alpha-2 country, a currency code.
 */
export function sandboxUmaProviders(filter: { countryCode?: string; currencyCode?: string }): UmaProviderView[] {
  const currencies = [...new Set(Object.values(SANDBOX_RECEIVERS).map((r) => r.currencyCode))].sort();
  const providers: UmaProviderView[] = [
    {
      name: "Corridor Sandbox UMA",
      domain: SANDBOX_UMA_DOMAIN,
      supportedRegions: [...new Set(currencies.flatMap((c) => COUNTRIES_OF_CURRENCY[c] ?? []))].sort(),
      supportedCurrencies: currencies,
    },
  ];
  return providers.filter(
    (p) => (!filter.countryCode || p.supportedRegions.includes(filter.countryCode)) && (!filter.currencyCode || p.supportedCurrencies.includes(filter.currencyCode)),
  );
}

/**
 * Production platforms in a deployment without a UMA connector: the UMA network is a payment rail
 * like any other, and a rail nobody serves is 400 PAYMENT_RAIL_NOT_AVAILABLE naming it
 * (decisions §1), never a 501. docs/connectors.md ("UMA") lists what a UMA connector provides.
 */
export function umaNotAvailable(what: string): AppError {
  return errors.badRequest("PAYMENT_RAIL_NOT_AVAILABLE", `No UMA connector is configured for production platforms in this deployment, so ${what} is not available (the operator deploys one: docs/connectors.md)`, { paymentRail: "UMA" });
}
