import type { Platform, SupportedCurrency } from "./types.js";

/**
 * What a new platform starts with. Every platform can transact in USD at once (both directions,
 * 1 cent to 1,000,000,000.00 USD per payment), and gets a UMA domain of its own so its customers
 * have addresses without any set-up: a sandbox platform under the sandbox UMA domain, a production
 * platform under the operator's (CORRIDOR_UMA_DOMAIN). A platform may set a domain it controls
 * instead (PATCH /config umaDomain).
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

/**
 * "<slug of name>-<last 8 hex digits of the platform id>.<parent>", unique per platform: the parent
 * is sandbox.uma.money for sandbox platforms and the operator's domain (CORRIDOR_UMA_DOMAIN) for
 * production ones. One subdomain per platform, because a customer's handle is unique only within
 * its platform: two platforms' `$alice` must not be one address.
 */
export function defaultUmaDomain(platform: Pick<Platform, "id" | "name" | "environment">, operatorUmaDomain: string): string {
  const parent = platform.environment === "SANDBOX" ? SANDBOX_UMA_PARENT_DOMAIN : operatorUmaDomain;
  const slug =
    platform.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 40)
      .replace(/-+$/, "") || "platform";
  const suffix = platform.id.replace(/[^0-9a-f]/gi, "").slice(-8).toLowerCase();
  return `${slug}-${suffix}.${parent}`;
}
