import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import {
  Environment as EnvironmentPb,
  PlatformConfigSchema,
  PlatformSchema,
  SupportedCurrencySchema,
  type PlatformConfig as PlatformConfigPb,
  type Platform as PlatformPb,
  type SupportedCurrency as SupportedCurrencyPb,
} from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { Permission as PermissionPb, TokenSchema, type Token as TokenPb } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import type { TimeRange } from "@corridor/proto/corridor/common/v1/paging_pb.js";
import type { Environment, Permission, Platform, PlatformConfig, SupportedCurrency, TimeWindow, Token } from "../domain/types.js";

/** Proto <-> domain. Nothing here decides anything. */

const permissionToPb: Record<Permission, PermissionPb> = {
  VIEW: PermissionPb.VIEW,
  TRANSACT: PermissionPb.TRANSACT,
  MANAGE: PermissionPb.MANAGE,
};

const environmentToPb: Record<Environment, EnvironmentPb> = {
  SANDBOX: EnvironmentPb.SANDBOX,
  PRODUCTION: EnvironmentPb.PRODUCTION,
};

/** Enum values become their domain names; anything else keeps a readable name for the 400. */
export function permissionFromPb(p: PermissionPb): string {
  return PermissionPb[p] ?? `PERMISSION_${p}`;
}

export function environmentFromPb(e: EnvironmentPb): string {
  return EnvironmentPb[e] ?? `ENVIRONMENT_${e}`;
}

export const permissionsToPb = (ps: Permission[]): PermissionPb[] => ps.map((p) => permissionToPb[p]);
export const environmentOf = (e: Environment): EnvironmentPb => environmentToPb[e];

export function windowFromPb(range: TimeRange | undefined): TimeWindow | undefined {
  if (!range) return undefined;
  return {
    after: range.after ? timestampDate(range.after) : undefined,
    before: range.before ? timestampDate(range.before) : undefined,
  };
}

const ts = (d: Date): Timestamp => timestampFromDate(d);

export function tokenToPb(t: Token): TokenPb {
  return create(TokenSchema, {
    id: t.id,
    platformId: t.platformId,
    name: t.name,
    permissions: permissionsToPb(t.permissions),
    clientId: t.clientId,
    createdAt: ts(t.createdAt),
    updatedAt: ts(t.updatedAt),
  });
}

export function platformToPb(p: Platform): PlatformPb {
  return create(PlatformSchema, {
    id: p.id,
    name: p.name,
    environment: environmentOf(p.environment),
    isRegulatedFinancialInstitution: p.isRegulated,
    createdAt: ts(p.createdAt),
  });
}

function currencyToPb(c: SupportedCurrency): SupportedCurrencyPb {
  return create(SupportedCurrencySchema, {
    currencyCode: c.currencyCode,
    minAmount: c.minAmount,
    maxAmount: c.maxAmount,
    requiredCounterpartyFields: c.requiredCounterpartyFields.map((f) => ({ name: f.name, mandatory: f.mandatory })),
    enabledTransactionTypes: c.enabledTransactionTypes,
    providerRequiredCustomerFields: c.providerRequiredCustomerFields,
    providerRequiredCounterpartyCustomerFields: c.providerRequiredCounterpartyCustomerFields,
  });
}

export function currencyFromPb(c: SupportedCurrencyPb): SupportedCurrency {
  return {
    currencyCode: c.currencyCode,
    minAmount: c.minAmount,
    maxAmount: c.maxAmount,
    requiredCounterpartyFields: c.requiredCounterpartyFields.map((f) => ({ name: f.name, mandatory: f.mandatory })),
    enabledTransactionTypes: [...c.enabledTransactionTypes],
    providerRequiredCustomerFields: [...c.providerRequiredCustomerFields],
    providerRequiredCounterpartyCustomerFields: [...c.providerRequiredCounterpartyCustomerFields],
  };
}

export function configToPb(c: PlatformConfig): PlatformConfigPb {
  return create(PlatformConfigSchema, {
    id: c.id,
    platformId: c.platformId,
    umaDomain: c.umaDomain,
    proxyUmaSubdomain: c.proxyUmaSubdomain,
    webhookEndpoint: c.webhookEndpoint,
    supportedCurrencies: c.supportedCurrencies.map(currencyToPb),
    isRegulatedFinancialInstitution: c.isRegulatedFinancialInstitution,
    passkeyRelyingPartyId: c.passkeyRelyingPartyId,
    passkeyOrigins: c.passkeyOrigins,
    webhookEventNaming: c.webhookEventNaming,
    createdAt: ts(c.createdAt),
    updatedAt: ts(c.updatedAt),
  });
}
