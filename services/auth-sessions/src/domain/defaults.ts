import type { Platform, SupportedCurrency } from "./types.js";

/**
 * What a new platform starts with. Every platform can transact in USD at once (both directions,
 * 1 cent to 1,000,000,000.00 USD per payment), and a sandbox platform gets a UMA domain of its own
 * under the sandbox UMA domain so its customers have addresses without any set-up. Production
 * platforms start without a UMA domain: theirs must be a domain they control.
 */
export const SANDBOX_UMA_PARENT_DOMAIN = "sandbox.uma.money";

export function defaultSupportedCurrencies(): SupportedCurrency[] {
  return [
    {
      currencyCode: "USD",
      minAmount: 1n,
      maxAmount: 100_000_000_000n,
      requiredCounterpartyFields: [],
      enabledTransactionTypes: ["OUTGOING", "INCOMING"],
      providerRequiredCustomerFields: [],
      providerRequiredCounterpartyCustomerFields: [],
    },
  ];
}

/** "<slug of name>-<last 8 hex digits of the platform id>.sandbox.uma.money"; unique per platform. */
export function defaultUmaDomain(platform: Platform): string {
  if (platform.environment !== "SANDBOX") return "";
  const slug =
    platform.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 40)
      .replace(/-+$/, "") || "platform";
  const suffix = platform.id.replace(/[^0-9a-f]/gi, "").slice(-8).toLowerCase();
  return `${slug}-${suffix}.${SANDBOX_UMA_PARENT_DOMAIN}`;
}
