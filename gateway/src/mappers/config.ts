import { create } from "@bufbuild/protobuf";
import {
  PasskeyOriginListSchema,
  SupportedCurrencyListSchema,
  type UpdatePlatformConfigRequest,
} from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import {
  CounterpartyFieldSchema,
  SupportedCurrencySchema,
  type PlatformConfig,
  type SupportedCurrency,
} from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { UpdatePlatformConfigRequestSchema } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { emptyToUndefined, isoFromTimestamp, numberFromInt64 } from "@corridor/kit/rest-json";

export interface SupportedCurrencyJson {
  currencyCode: string;
  minAmount: number;
  maxAmount: number;
  requiredCounterpartyFields: { name: string; mandatory: boolean }[];
  enabledTransactionTypes: string[];
  providerRequiredCustomerFields: string[];
  providerRequiredCounterpartyCustomerFields: string[];
}

/** As PATCH /config takes it: the field lists may be left out (see SupportedCurrencyInputSchema). */
export type SupportedCurrencyInputJson = Pick<SupportedCurrencyJson, "currencyCode" | "minAmount" | "maxAmount"> & Partial<SupportedCurrencyJson>;

/** Both directions: what a platform's currencies start with. */
const DEFAULT_TRANSACTION_TYPES = ["OUTGOING", "INCOMING"];

export interface UpdateConfigJson {
  umaDomain?: string;
  webhookEndpoint?: string;
  supportedCurrencies?: SupportedCurrencyInputJson[];
  passkeyRelyingPartyId?: string;
  passkeyOrigins?: string[];
  webhookEventNaming?: "CORRIDOR" | "GRID";
}

/** PATCH /config as sent: null removes a field (JSON merge-patch), as "" (or [] for passkeyOrigins) always did. */
export type UpdateConfigPatchJson = {
  [K in keyof UpdateConfigJson]?: K extends "supportedCurrencies" ? UpdateConfigJson[K] : UpdateConfigJson[K] | null;
};

/**
 * The patch with each null turned into the empty value that clears the field, so one path (the
 * service's "" / [] = cleared) serves both spellings and GET then shows the field cleared.
 */
export function configPatchOf(body: UpdateConfigPatchJson): UpdateConfigJson {
  const { umaDomain, webhookEndpoint, passkeyRelyingPartyId, passkeyOrigins, supportedCurrencies, webhookEventNaming } = body;
  const patch: UpdateConfigJson = {};
  if (umaDomain !== undefined) patch.umaDomain = umaDomain ?? "";
  if (webhookEndpoint !== undefined) patch.webhookEndpoint = webhookEndpoint ?? "";
  if (passkeyRelyingPartyId !== undefined) patch.passkeyRelyingPartyId = passkeyRelyingPartyId ?? "";
  if (passkeyOrigins !== undefined) patch.passkeyOrigins = passkeyOrigins ?? [];
  if (supportedCurrencies !== undefined) patch.supportedCurrencies = supportedCurrencies;
  if (webhookEventNaming !== undefined && webhookEventNaming !== null) patch.webhookEventNaming = webhookEventNaming;
  return patch;
}

export function supportedCurrencyToJson(c: SupportedCurrency): SupportedCurrencyJson {
  return {
    currencyCode: c.currencyCode,
    minAmount: numberFromInt64(c.minAmount),
    maxAmount: numberFromInt64(c.maxAmount),
    requiredCounterpartyFields: c.requiredCounterpartyFields.map((f) => ({ name: f.name, mandatory: f.mandatory })),
    enabledTransactionTypes: [...c.enabledTransactionTypes],
    providerRequiredCustomerFields: [...c.providerRequiredCustomerFields],
    providerRequiredCounterpartyCustomerFields: [...c.providerRequiredCounterpartyCustomerFields],
  };
}

export function platformConfigToJson(c: PlatformConfig | undefined) {
  if (!c) throw new Error("service answered without a config");
  return {
    id: c.id,
    umaDomain: emptyToUndefined(c.umaDomain),
    proxyUmaSubdomain: c.proxyUmaSubdomain || null,
    webhookEndpoint: c.webhookEndpoint || null,
    supportedCurrencies: c.supportedCurrencies.map(supportedCurrencyToJson),
    isRegulatedFinancialInstitution: c.isRegulatedFinancialInstitution,
    passkeyRelyingPartyId: emptyToUndefined(c.passkeyRelyingPartyId),
    passkeyOrigins: c.passkeyRelyingPartyId ? [...c.passkeyOrigins] : undefined,
    webhookEventNaming: c.webhookEventNaming === "GRID" ? ("GRID" as const) : ("CORRIDOR" as const),
    createdAt: isoFromTimestamp(c.createdAt),
    updatedAt: isoFromTimestamp(c.updatedAt),
  };
}

function supportedCurrencyToProto(c: SupportedCurrencyInputJson): SupportedCurrency {
  return create(SupportedCurrencySchema, {
    currencyCode: c.currencyCode,
    minAmount: BigInt(c.minAmount),
    maxAmount: BigInt(c.maxAmount),
    requiredCounterpartyFields: (c.requiredCounterpartyFields ?? []).map((f) => create(CounterpartyFieldSchema, f)),
    enabledTransactionTypes: c.enabledTransactionTypes ?? DEFAULT_TRANSACTION_TYPES,
    providerRequiredCustomerFields: c.providerRequiredCustomerFields ?? [],
    providerRequiredCounterpartyCustomerFields: c.providerRequiredCounterpartyCustomerFields ?? [],
  });
}

/** PATCH body -> request; absent fields stay unset so the service leaves them as they are. */
export function updateConfigToProto(platformId: string, body: UpdateConfigJson): UpdatePlatformConfigRequest {
  const init: MessageInitShape<typeof UpdatePlatformConfigRequestSchema> = { platformId };
  if (body.umaDomain !== undefined) init.umaDomain = body.umaDomain;
  if (body.webhookEndpoint !== undefined) init.webhookEndpoint = body.webhookEndpoint;
  if (body.supportedCurrencies !== undefined) {
    init.supportedCurrencies = create(SupportedCurrencyListSchema, { currencies: body.supportedCurrencies.map(supportedCurrencyToProto) });
  }
  if (body.passkeyRelyingPartyId !== undefined) init.passkeyRelyingPartyId = body.passkeyRelyingPartyId;
  if (body.passkeyOrigins !== undefined) init.passkeyOrigins = create(PasskeyOriginListSchema, { origins: body.passkeyOrigins });
  if (body.webhookEventNaming !== undefined) init.webhookEventNaming = body.webhookEventNaming;
  return create(UpdatePlatformConfigRequestSchema, init);
}
