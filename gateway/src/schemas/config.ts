import { Type, type Static, type TSchema } from "typebox";
import { Iso8601 } from "./common.js";

/** Largest amount the API accepts, in minor units (decisions §3). */
export const MAX_AMOUNT_NUMBER = 9_000_000_000_000_000;

const Amount = (description: string) => Type.Integer({ minimum: 0, maximum: MAX_AMOUNT_NUMBER, description });

const CounterpartyFieldSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: "Field name, for example FULL_NAME." }),
    mandatory: Type.Boolean({ description: "Whether the field must be present." }),
  },
  { additionalProperties: false, description: "A field required about the counterparty of a payment." },
);

const FieldNames = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 100, description: "A field name." }), { maxItems: 100, uniqueItems: true, description });

export const SupportedCurrencySchema = Type.Object(
  {
    currencyCode: Type.String({ pattern: "^[A-Z]{3,5}$", description: "ISO 4217 or asset code: 3 to 5 uppercase letters." }),
    minAmount: Amount("Smallest amount per payment, in minor units."),
    maxAmount: Amount("Largest amount per payment, in minor units; at least minAmount."),
    requiredCounterpartyFields: Type.Array(CounterpartyFieldSchema, { maxItems: 100, description: "Counterparty fields required on quotes in this currency." }),
    enabledTransactionTypes: Type.Array(Type.Enum(["OUTGOING", "INCOMING"], { description: "A transaction direction." }), {
      uniqueItems: true,
      description: "Transaction types enabled in this currency.",
    }),
    providerRequiredCustomerFields: FieldNames("Customer fields the provider needs for this currency."),
    providerRequiredCounterpartyCustomerFields: FieldNames("Counterparty customer fields the provider needs for this currency."),
  },
  { $id: "SupportedCurrency", additionalProperties: false, description: "A currency the platform transacts in, with its limits." },
);

/**
 * A supported currency as PATCH /config takes it: code and limits are required; the field lists
 * may be left out and then default to none, and enabledTransactionTypes to both directions (what a
 * new platform starts with). The answer always carries every field (SupportedCurrency).
 */
export const SupportedCurrencyInputSchema = Type.Object(
  {
    currencyCode: SupportedCurrencySchema.properties.currencyCode,
    minAmount: SupportedCurrencySchema.properties.minAmount,
    maxAmount: SupportedCurrencySchema.properties.maxAmount,
    requiredCounterpartyFields: Type.Optional(
      Type.Array(CounterpartyFieldSchema, { maxItems: 100, description: "Counterparty fields required on quotes in this currency; default none." }),
    ),
    enabledTransactionTypes: Type.Optional(
      Type.Array(Type.Enum(["OUTGOING", "INCOMING"], { description: "A transaction direction." }), {
        uniqueItems: true,
        description: "Transaction types enabled in this currency; default both OUTGOING and INCOMING.",
      }),
    ),
    providerRequiredCustomerFields: Type.Optional(FieldNames("Customer fields the provider needs for this currency; default none.")),
    providerRequiredCounterpartyCustomerFields: Type.Optional(FieldNames("Counterparty customer fields the provider needs for this currency; default none.")),
  },
  { $id: "SupportedCurrencyInput", additionalProperties: false, description: "A currency the platform transacts in, with its limits, as PATCH /config takes it." },
);

const SupportedCurrencyInputRef = () =>
  Type.Unsafe<Static<typeof SupportedCurrencyInputSchema>>(Type.Ref("SupportedCurrencyInput", { description: "A supported currency." }));

/** A typed reference to SupportedCurrency (validated against the registered schema). */
const SupportedCurrencyRef = () =>
  Type.Unsafe<Static<typeof SupportedCurrencySchema>>(Type.Ref("SupportedCurrency", { description: "A supported currency." }));

export const PlatformConfigSchema = Type.Object(
  {
    id: Type.String({ description: "PlatformConfig:<uuidv7>." }),
    umaDomain: Type.Optional(Type.String({ description: "Domain of the platform's UMA addresses; absent when not set." })),
    proxyUmaSubdomain: Type.Union([Type.String(), Type.Null()], {
      description: "Proxy UMA subdomain; null when not set (Corridor's operator assigns none today, so it reads null).",
    }),
    webhookEndpoint: Type.Union([Type.String(), Type.Null()], { description: "URL that receives webhooks; null until set." }),
    supportedCurrencies: Type.Array(SupportedCurrencyRef(), {
      description: "Currencies the platform supports.",
    }),
    isRegulatedFinancialInstitution: Type.Boolean({ description: "Set by the operator at platform creation; read-only." }),
    passkeyRelyingPartyId: Type.Optional(
      Type.String({
        description: "WebAuthn relying-party id the platform's passkeys are registered and verified against; absent when not set (the deployment's default relying party applies).",
      }),
    ),
    passkeyOrigins: Type.Optional(
      Type.Array(Type.String({ description: "An origin, for example https://wallet.example.com." }), {
        description: "Origins allowed in the platform's WebAuthn ceremonies; absent when passkeyRelyingPartyId is.",
      }),
    ),
    webhookEventNaming: Type.Union([Type.Literal("CORRIDOR"), Type.Literal("GRID")], {
      description: "How webhook event types are named: CORRIDOR (OUTGOING_PAYMENT_COMPLETED, the default) or GRID (Grid's OBJECT.EVENT names, OUTGOING_PAYMENT.COMPLETED; docs/events.md). Every webhook carries X-Grid-Signature either way.",
    }),
    createdAt: Iso8601("When the configuration was created."),
    updatedAt: Iso8601("When the configuration last changed."),
  },
  { $id: "PlatformConfig", description: "The platform's own settings." },
);

/** A PATCH field null removes (JSON merge-patch, RFC 7396): the value, or null. */
const Clearable = <T extends TSchema>(value: T, description: string) => Type.Union([value, Type.Null()], { description });

export const UpdateConfigBody = Type.Object(
  {
    umaDomain: Type.Optional(Clearable(Type.String({ maxLength: 253, description: "New UMA domain." }), "New UMA domain; null (or an empty string) clears it.")),
    webhookEndpoint: Type.Optional(
      Clearable(
        Type.String({
          maxLength: 2048,
          description:
            "New webhook URL: https to a public address or DNS name (rules: docs/events.md, Webhook endpoint rules); sandbox platforms may also use localhost, 127.0.0.1 or [::1], over http too, where the operator allows it.",
        }),
        "New webhook URL: https to a public address or DNS name (rules: docs/events.md, Webhook endpoint rules); sandbox platforms may also use localhost, 127.0.0.1 or [::1], over http too, where the operator allows it. null (or an empty string) clears it.",
      ),
    ),
    supportedCurrencies: Type.Optional(
      Type.Array(SupportedCurrencyInputRef(), {
        maxItems: 200,
        description: "The new full list of supported currencies (replaces the old list); currency codes must be unique.",
      }),
    ),
    passkeyRelyingPartyId: Type.Optional(
      Clearable(
        Type.String({ maxLength: 253, description: "A hostname (localhost or 127.0.0.1 for development)." }),
        "WebAuthn relying-party id for the platform's passkeys: a hostname (localhost or 127.0.0.1 for development). null (or an empty string) clears it, and its origins, so the deployment's default relying party applies.",
      ),
    ),
    passkeyOrigins: Type.Optional(
      Clearable(
        Type.Array(Type.String({ maxLength: 300, description: "https://host[:port], or http://localhost[:port] / http://127.0.0.1[:port]." }), {
          maxItems: 20,
          description: "The new full list of WebAuthn origins.",
        }),
        "The new full list of WebAuthn origins (replaces the old list; null is the empty list). Each origin's host must be passkeyRelyingPartyId or a subdomain of it; at least one is needed while passkeyRelyingPartyId is set.",
      ),
    ),
    webhookEventNaming: Type.Optional(
      Type.Union([Type.Literal("CORRIDOR"), Type.Literal("GRID")], {
        description: "How webhook event types are named: CORRIDOR (OUTGOING_PAYMENT_COMPLETED, the default) or GRID (Grid's OBJECT.EVENT names, OUTGOING_PAYMENT.COMPLETED; docs/events.md). Every webhook carries X-Grid-Signature either way.",
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "Fields to change, as JSON merge-patch: absent fields stay as they are, null removes a field the configuration can be without (umaDomain, webhookEndpoint, passkeyRelyingPartyId, passkeyOrigins). supportedCurrencies is always present: null is refused (send [] for none).",
  },
);

export const WebhookSecretSchema = Type.Object(
  {
    secret: Type.String({ description: "Current signing secret (whsec_…), per the Standard Webhooks spec." }),
    createdAt: Iso8601("When the current secret was issued."),
    previousSecretExpiresAt: Type.Optional(Iso8601("Until when the previous secret still signs beside the current one; absent when none.")),
  },
  { $id: "WebhookSecret", description: "The webhook signing secret." },
);

export const configSchemas = [SupportedCurrencySchema, SupportedCurrencyInputSchema, PlatformConfigSchema, WebhookSecretSchema];
