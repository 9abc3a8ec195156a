import type { Kysely, Transaction } from "kysely";
import type { PlatformConfig, SupportedCurrency } from "../domain/types.js";
import type { AuthSessionsDatabase, StoredSupportedCurrency } from "./tables.js";

type Db = Kysely<AuthSessionsDatabase> | Transaction<AuthSessionsDatabase>;

function toStored(list: SupportedCurrency[]): string {
  const stored: StoredSupportedCurrency[] = list.map((c) => ({
    currencyCode: c.currencyCode,
    minAmount: c.minAmount.toString(),
    maxAmount: c.maxAmount.toString(),
    requiredCounterpartyFields: c.requiredCounterpartyFields.map((f) => ({ name: f.name, mandatory: f.mandatory })),
    enabledTransactionTypes: [...c.enabledTransactionTypes],
    providerRequiredCustomerFields: [...c.providerRequiredCustomerFields],
    providerRequiredCounterpartyCustomerFields: [...c.providerRequiredCounterpartyCustomerFields],
  }));
  return JSON.stringify(stored);
}

function fromStored(list: StoredSupportedCurrency[]): SupportedCurrency[] {
  return list.map((c) => ({ ...c, minAmount: BigInt(c.minAmount), maxAmount: BigInt(c.maxAmount) }));
}

export async function insertPlatformConfig(db: Db, c: PlatformConfig): Promise<void> {
  await db
    .insertInto("platform_configs")
    .values({
      id: c.id,
      platform_id: c.platformId,
      uma_domain: c.umaDomain,
      proxy_uma_subdomain: c.proxyUmaSubdomain,
      webhook_endpoint: c.webhookEndpoint,
      supported_currencies: toStored(c.supportedCurrencies),
      passkey_rp_id: c.passkeyRelyingPartyId,
      passkey_origins: JSON.stringify(c.passkeyOrigins),
      webhook_event_naming: c.webhookEventNaming,
      created_at: c.createdAt,
      updated_at: c.updatedAt,
    })
    .execute();
}

/** The config with the platform's regulated flag, which lives on the platform row. */
export async function getPlatformConfig(db: Db, platformId: string, opts: { forUpdate?: boolean } = {}): Promise<PlatformConfig | undefined> {
  let q = db
    .selectFrom("platform_configs as c")
    .innerJoin("platforms as p", "p.id", "c.platform_id")
    .selectAll("c")
    .select("p.is_regulated")
    .where("c.platform_id", "=", platformId);
  if (opts.forUpdate) q = q.forUpdate("c");
  const r = await q.executeTakeFirst();
  if (!r) return undefined;
  return {
    id: r.id,
    platformId: r.platform_id,
    umaDomain: r.uma_domain,
    proxyUmaSubdomain: r.proxy_uma_subdomain,
    webhookEndpoint: r.webhook_endpoint,
    supportedCurrencies: fromStored(r.supported_currencies),
    passkeyRelyingPartyId: r.passkey_rp_id,
    passkeyOrigins: [...r.passkey_origins],
    webhookEventNaming: r.webhook_event_naming === "GRID" ? "GRID" : "CORRIDOR",
    isRegulatedFinancialInstitution: r.is_regulated,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export async function updatePlatformConfig(db: Db, c: PlatformConfig): Promise<void> {
  await db
    .updateTable("platform_configs")
    .set({
      uma_domain: c.umaDomain,
      proxy_uma_subdomain: c.proxyUmaSubdomain,
      webhook_endpoint: c.webhookEndpoint,
      supported_currencies: toStored(c.supportedCurrencies),
      passkey_rp_id: c.passkeyRelyingPartyId,
      passkey_origins: JSON.stringify(c.passkeyOrigins),
      webhook_event_naming: c.webhookEventNaming,
      updated_at: c.updatedAt,
    })
    .where("platform_id", "=", c.platformId)
    .where("id", "=", c.id)
    .execute();
}

/** Production platforms queued for their default UMA domain (migration 20261227000000_production_uma_domains), oldest first. */
export async function queuedUmaBackfill(db: Db, limit: number): Promise<string[]> {
  const rows = await db.selectFrom("uma_domain_backfill").select("platform_id").orderBy("queued_at").orderBy("platform_id").limit(limit).execute();
  return rows.map((r) => r.platform_id);
}

export async function removeUmaBackfill(db: Db, platformId: string): Promise<void> {
  await db.deleteFrom("uma_domain_backfill").where("platform_id", "=", platformId).execute();
}
