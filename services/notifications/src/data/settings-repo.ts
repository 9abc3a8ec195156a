import type { Selectable } from "kysely";
import type { EndpointUpdate, Rotation, SettingsStore, WebhookSettings } from "../domain/settings.js";
import type { Db, WebhookSettingsTable } from "./tables.js";

function fromRow(r: Selectable<WebhookSettingsTable>): WebhookSettings {
  return {
    platformId: r.platform_id,
    webhookEndpoint: r.webhook_endpoint,
    secret: r.secret,
    secretCreatedAt: r.secret_created_at,
    previousSecret: r.previous_secret,
    previousSecretExpiresAt: r.previous_secret_expires_at,
    configVersion: r.config_version,
    endpointSetAt: r.endpoint_set_at,
    webhookEventNaming: r.webhook_event_naming === "GRID" ? "GRID" : "CORRIDOR",
    updatedAt: r.updated_at,
  };
}

function toRow(s: WebhookSettings, createdAt: Date) {
  return {
    platform_id: s.platformId,
    webhook_endpoint: s.webhookEndpoint,
    secret: s.secret,
    secret_created_at: s.secretCreatedAt,
    previous_secret: s.previousSecret,
    previous_secret_expires_at: s.previousSecretExpiresAt,
    config_version: s.configVersion === null ? null : s.configVersion.toString(),
    endpoint_set_at: s.endpointSetAt,
    webhook_event_naming: s.webhookEventNaming,
    created_at: createdAt,
    updated_at: s.updatedAt,
  };
}

export async function findSettings(db: Db, platformId: string): Promise<WebhookSettings | undefined> {
  const row = await db.selectFrom("webhook_settings").selectAll().where("platform_id", "=", platformId).executeTakeFirst();
  return row && fromRow(row);
}

export async function insertSettingsIfAbsent(db: Db, settings: WebhookSettings): Promise<WebhookSettings> {
  await db
    .insertInto("webhook_settings")
    .values(toRow(settings, settings.updatedAt))
    .onConflict((oc) => oc.column("platform_id").doNothing())
    .execute();
  const stored = await findSettings(db, settings.platformId);
  if (!stored) throw new Error(`webhook settings of ${settings.platformId} vanished after insert`);
  return stored;
}

/**
 * One statement, so concurrent consumers and lazy creation cannot interleave. The set time moves
 * only when the endpoint itself changes (a PATCH of other config fields keeps it).
 */
export async function upsertEndpoint(db: Db, update: EndpointUpdate, fresh: WebhookSettings): Promise<boolean> {
  const applied = await db
    .insertInto("webhook_settings")
    .values(toRow(fresh, update.at))
    .onConflict((oc) =>
      oc
        .column("platform_id")
        .doUpdateSet((eb) => ({
          webhook_endpoint: eb.ref("excluded.webhook_endpoint"),
          config_version: eb.ref("excluded.config_version"),
          endpoint_set_at: eb
            .case()
            .when("webhook_settings.webhook_endpoint", "=", eb.ref("excluded.webhook_endpoint"))
            .then(eb.ref("webhook_settings.endpoint_set_at"))
            .else(eb.ref("excluded.endpoint_set_at"))
            .end(),
          // Absent from the update: kept.
          webhook_event_naming: update.webhookEventNaming === undefined ? eb.ref("webhook_settings.webhook_event_naming") : eb.ref("excluded.webhook_event_naming"),
          updated_at: eb.ref("excluded.updated_at"),
        }))
        .where((eb) =>
          eb.or([
            eb("webhook_settings.config_version", "is", null),
            eb("webhook_settings.config_version", "<", eb.ref("excluded.config_version")),
          ]),
        ),
    )
    .returning("platform_id")
    .executeTakeFirst();
  return applied !== undefined;
}

/** `previous_secret = secret` reads the row as locked by this UPDATE: rotations serialize. */
export async function rotateSettingsSecret(db: Db, platformId: string, rotation: Rotation): Promise<WebhookSettings> {
  const row = await db
    .updateTable("webhook_settings")
    .set((eb) => ({
      previous_secret: eb.ref("secret"),
      previous_secret_expires_at: rotation.previousSecretExpiresAt,
      secret: rotation.secret,
      secret_created_at: rotation.at,
    }))
    .where("platform_id", "=", platformId)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new Error(`webhook settings of ${platformId} not found for rotation`);
  return fromRow(row);
}

export function settingsStore(db: Db): SettingsStore {
  return {
    find: (platformId) => findSettings(db, platformId),
    insertIfAbsent: (settings) => insertSettingsIfAbsent(db, settings),
    applyEndpoint: (update, fresh) => upsertEndpoint(db, update, fresh),
    rotate: (platformId, rotation) => rotateSettingsSecret(db, platformId, rotation),
  };
}
