/** Plain domain shapes: what the service knows, independent of proto and SQL. */

export const PERMISSIONS = ["VIEW", "TRANSACT", "MANAGE"] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ENVIRONMENTS = ["SANDBOX", "PRODUCTION"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export const TRANSACTION_TYPES = ["OUTGOING", "INCOMING"] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

export interface Platform {
  id: string;
  name: string;
  environment: Environment;
  isRegulated: boolean;
  createdAt: Date;
}

export interface Token {
  id: string;
  platformId: string;
  name: string;
  permissions: Permission[];
  clientId: string;
  createdAt: Date;
  updatedAt: Date;
}

/** A token as stored: the secret only as its SHA-256 (hex). */
export interface StoredToken extends Token {
  secretSha256: string;
  deletedAt: Date | null;
}

export interface CounterpartyField {
  name: string;
  mandatory: boolean;
}

export interface SupportedCurrency {
  currencyCode: string;
  /** Minor units. */
  minAmount: bigint;
  /** Minor units. */
  maxAmount: bigint;
  requiredCounterpartyFields: CounterpartyField[];
  enabledTransactionTypes: string[];
  providerRequiredCustomerFields: string[];
  providerRequiredCounterpartyCustomerFields: string[];
}

export interface PlatformConfig {
  id: string;
  platformId: string;
  umaDomain: string;
  proxyUmaSubdomain: string;
  webhookEndpoint: string;
  supportedCurrencies: SupportedCurrency[];
  /** WebAuthn relying-party id of the platform's passkeys; "" = the deployment's default applies. */
  passkeyRelyingPartyId: string;
  /** Origins allowed in its WebAuthn ceremonies; empty exactly when passkeyRelyingPartyId is. */
  passkeyOrigins: string[];
  /** How its webhook event types are named: CORRIDOR (OUTGOING_PAYMENT_COMPLETED) or GRID (OUTGOING_PAYMENT.COMPLETED). */
  webhookEventNaming: WebhookEventNaming;
  /** Copied from the platform on every read; the operator sets it at creation only. */
  isRegulatedFinancialInstitution: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** Inclusive bounds; either may be absent. */
export interface TimeWindow {
  after?: Date;
  before?: Date;
}

export interface TokenFilter {
  platformId: string;
  name?: string;
  created?: TimeWindow;
  updated?: TimeWindow;
}

/** Who is calling, as answered to the gateway after a successful Basic check. */
export interface Principal {
  platformId: string;
  tokenId: string;
  permissions: Permission[];
  environment: Environment;
  secretSha256: string;
}

/** The names a platform's webhook event types take (docs/events.md, "Grid's event names"). */
export const WEBHOOK_EVENT_NAMINGS = ["CORRIDOR", "GRID"] as const;
export type WebhookEventNaming = (typeof WEBHOOK_EVENT_NAMINGS)[number];
