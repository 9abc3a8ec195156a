/**
 * Grid's published response schemas (lightsparkdev/grid-api, openapi/components/schemas) for the
 * routes whose answers e2e tests check against them, restated as the facts a Grid client relies on:
 * required fields, types, enums and discriminators. Kept to the JSON Schema subset `gridViolations`
 * checks. Grid's objects allow extra properties unless they say otherwise, and so does this.
 */
export type GridSchema = {
  type?: string | string[];
  required?: string[];
  properties?: Record<string, GridSchema>;
  items?: GridSchema;
  enum?: readonly (string | number | boolean | null)[];
  oneOf?: GridSchema[];
  format?: "date-time";
};

const str: GridSchema = { type: "string" };
const dateTime: GridSchema = { type: "string", format: "date-time" };
const nullable = (s: GridSchema): GridSchema => ({ ...s, type: [s.type as string, "null"] });
const WalletSignatureChallenge: GridSchema = {
  type: "object",
  required: ["method", "messageToSign", "expiresAt"],
  properties: { method: { type: "string", enum: ["WALLET_SIGNATURE"] }, messageToSign: str, expiresAt: dateTime },
};
const LivenessChallenge: GridSchema = {
  type: "object",
  required: ["method", "verificationLink", "expiresAt"],
  properties: { method: { type: "string", enum: ["LIVENESS"] }, verificationLink: str, token: str, expiresAt: dateTime },
};
const ScaFactor: GridSchema = { type: "string", enum: ["SMS_OTP", "TOTP", "PASSKEY"] };
/**
 * Grid's Card (openapi/components/schemas/cards/Card.yaml, the release whose CardState has
 * PROCESSING and whose POST /cards takes fundingSources and maxSpendPerTransaction): panEmbedUrl and
 * processorRef are optional there and not served here.
 */
const Card: GridSchema = {
  type: "object",
  required: ["id", "cardholderId", "state", "form", "fundingSources", "createdAt", "updatedAt"],
  properties: {
    id: str,
    cardholderId: str,
    platformCardId: str,
    state: { type: "string", enum: ["PENDING_KYC", "PROCESSING", "ACTIVE", "FROZEN", "CLOSED"] },
    stateReason: { type: ["string", "null"], enum: ["ISSUER_REJECTED", "CLOSED_BY_PLATFORM", "CLOSED_BY_GRID", null] },
    brand: { type: "string", enum: ["VISA", "MASTERCARD"] },
    form: { type: "string", enum: ["VIRTUAL"] },
    last4: str,
    expMonth: { type: "integer" },
    expYear: { type: "integer" },
    fundingSources: { type: "array", items: str },
    currency: str,
    issuerRef: str,
    createdAt: dateTime,
    updatedAt: dateTime,
  },
};

export const GRID = {
  ScaFactorList: { type: "object", required: ["factors"], properties: { factors: { type: "array", items: { type: "object", required: ["factor"], properties: { factor: ScaFactor, credentialId: str, name: str } } } } },
  /** ScaFactorEnrollStartOneOf, discriminated by `type`: the TOTP branch. */
  TotpEnrollmentStart: { type: "object", required: ["secret", "secretBase32Encoded", "totpUri"], properties: { type: { type: "string", enum: ["TOTP"] }, secret: str, secretBase32Encoded: str, totpUri: str } },
  TotpEnrollmentConfirmResponse: { type: "object", required: ["recoveryCodes"], properties: { type: { type: "string", enum: ["TOTP"] }, recoveryCodes: { type: "array", items: str } } },
  ScaLoginStart: {
    type: "object",
    required: ["factor"],
    properties: { factor: ScaFactor, challengeId: nullable(str), expiresAt: nullable(dateTime), passkeyOptions: { type: ["object", "null"] }, allowedOrigins: { type: ["array", "null"], items: str }, relyingPartyId: nullable(str) },
  },
  ScaLoginComplete: { type: "object", required: ["status"], properties: { status: str } },
  RecordSecurityEventResponse: {
    type: "object",
    required: ["eventType", "suspended", "failedAttempts"],
    properties: { eventType: { type: "string", enum: ["RESET_PASSWORD_COMPLETED", "FAILED_LOGIN_ATTEMPT"] }, suspended: { type: "boolean" }, lockedUntil: nullable(dateTime), failedAttempts: { type: "integer" } },
  },
  /** A reset's start: the handle, and the liveness handles omitted (or null) when the provider has none. */
  TwoFactorResetStart: { type: "object", required: ["resetId"], properties: { resetId: str, livenessAccessToken: nullable(str), verificationLink: nullable(str), expiresAt: nullable(dateTime) } },
  /** Grid passes the provider's status through as a string; its TwoFactorResetState names the values. */
  TwoFactorResetStatus: { type: "object", required: ["status"], properties: { status: { type: "string", enum: ["INITIATED", "PENDING_REVIEW", "LIVENESS_PASSED", "COMPLETED", "REJECTED", "EXPIRED"] } } },
  /** The verify answer: Grid's ExternalAccount (its accountInfo oneOf is not restated here). */
  ExternalAccount: {
    type: "object",
    required: ["id", "status", "currency", "accountInfo"],
    properties: { id: str, customerId: str, status: { type: "string", enum: ["PENDING", "ACTIVE", "PENDING_OWNERSHIP_VERIFICATION", "UNVERIFIED", "UNDER_REVIEW", "INACTIVE"] }, currency: str, accountInfo: { type: "object" } },
  },
  /**
   * The challenge route's 201 (OwnershipChallenge): a oneOf discriminated by `method` between
   * WalletSignatureChallenge {method WALLET_SIGNATURE, messageToSign, expiresAt} and
   * LivenessChallenge {method LIVENESS, verificationLink, token?, expiresAt}.
   */
  OwnershipChallenge: {
    type: "object",
    required: ["method"],
    oneOf: [WalletSignatureChallenge, LivenessChallenge],
  },
  Card,
  /** CardListResponse: data and hasMore required. */
  CardListResponse: { type: "object", required: ["data", "hasMore"], properties: { data: { type: "array", items: Card }, hasMore: { type: "boolean" }, nextCursor: str, totalCount: { type: "integer" } } },
  /** CardFundingSource with CardFundingSourceStatus. */
  CardFundingSource: {
    type: "object",
    required: ["id", "internalAccountId", "status"],
    properties: { id: str, internalAccountId: str, status: { type: "string", enum: ["ACTIVE", "PENDING_AUTH", "INACTIVE"] } },
  },
  /** DelegatedKey (auth/DelegatedKey.yaml): cardId is required. */
  DelegatedKey: {
    type: "object",
    required: ["id", "cardId", "accountId", "publicKey", "nickname", "status", "createdAt", "updatedAt"],
    properties: { id: str, cardId: str, accountId: str, publicKey: str, nickname: str, status: { type: "string", enum: ["PENDING", "ACTIVE", "REVOKED"] }, createdAt: dateTime, updatedAt: dateTime },
  },
  /** The 202 of signed-retry flows (DelegatedKeySignedRequestChallenge is this base). */
  SignedRequestChallenge: { type: "object", required: ["payloadToSign", "requestId", "expiresAt"], properties: { payloadToSign: str, requestId: str, expiresAt: dateTime } },
  /** Grid's Error shape (status, code, message, details) as every error answer carries it. */
  Error: { type: "object", required: ["status", "code", "message"], properties: { status: { type: "integer" }, code: str, message: str, details: { type: "object" } } },
  TransactionStatus: { type: "string", enum: ["CREATED", "PENDING", "PENDING_AUTHORIZATION", "PROCESSING", "COMPLETED", "REJECTED", "FAILED", "REFUNDED", "EXPIRED"] },
} satisfies Record<string, GridSchema>;

const typeOf = (v: unknown): string[] => {
  if (v === null) return ["null"];
  if (Array.isArray(v)) return ["array"];
  if (typeof v === "number") return Number.isInteger(v) ? ["integer", "number"] : ["number"];
  return [typeof v];
};

/** Where `value` breaks `schema` (empty when it conforms), each as `path: problem`. */
export function gridViolations(schema: GridSchema, value: unknown, path = "$"): string[] {
  const out: string[] = [];
  if (schema.oneOf) {
    const matching = schema.oneOf.filter((s) => gridViolations(s, value, path).length === 0).length;
    if (matching !== 1) out.push(`${path}: matches ${matching} of the oneOf branches, not exactly one`);
  }
  if (schema.type) {
    const allowed = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!typeOf(value).some((t) => allowed.includes(t))) return [...out, `${path}: ${JSON.stringify(value)} is not ${allowed.join(" or ")}`];
  }
  if (schema.enum && !schema.enum.includes(value as never)) out.push(`${path}: ${JSON.stringify(value)} is not one of ${schema.enum.join(", ")}`);
  if (schema.format === "date-time" && typeof value === "string" && !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value)) out.push(`${path}: ${value} is not an RFC 3339 date-time`);
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const r of schema.required ?? []) if (!(r in obj)) out.push(`${path}.${r}: required`);
    for (const [k, s] of Object.entries(schema.properties ?? {})) if (k in obj) out.push(...gridViolations(s, obj[k], `${path}.${k}`));
  }
  if (Array.isArray(value) && schema.items) value.forEach((v, i) => out.push(...gridViolations(schema.items!, v, `${path}[${i}]`)));
  return out;
}
