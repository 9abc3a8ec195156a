import { inTransaction } from "@corridor/kit";
import type { Kysely, Selectable, Transaction } from "kysely";
import type { WalletStore, WalletTransact } from "../domain/wallet/ports.js";
import { delegatedKeyEvents } from "../events/platform-events.js";
import type { Credential, CredentialMaterial, PasskeyChallenge, SignedRequest, StoredDelegatedKey, StoredOtp, WalletSession } from "../domain/wallet/types.js";
import type { AuthSessionsDatabase, WalletCredentialsTable, WalletDelegatedKeysTable, WalletSessionsTable } from "./tables.js";

type Trx = Transaction<AuthSessionsDatabase>;

function toCredential(r: Selectable<WalletCredentialsTable>): Credential {
  return {
    id: r.id,
    platformId: r.platform_id,
    accountId: r.account_id,
    type: r.type,
    nickname: r.nickname,
    material: r.material as unknown as CredentialMaterial,
    lastChallengeAt: r.last_challenge_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toDelegatedKey(r: Selectable<WalletDelegatedKeysTable>): StoredDelegatedKey {
  return {
    id: r.id,
    platformId: r.platform_id,
    accountId: r.account_id,
    publicKey: r.public_key,
    nickname: r.nickname,
    status: r.status,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    sealedKey: r.sealed_key,
    keyId: r.key_id,
    activationRequestId: r.activation_request_id,
    ...(r.card_id ? { cardId: r.card_id } : {}),
    ...(r.funding_source_id ? { fundingSourceId: r.funding_source_id } : {}),
  };
}

function toSession(r: Selectable<WalletSessionsTable>): WalletSession {
  return {
    id: r.id,
    platformId: r.platform_id,
    accountId: r.account_id,
    credentialId: r.credential_id,
    type: r.type,
    nickname: r.nickname,
    publicKey: r.public_key,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
  };
}

const json = (v: unknown) => JSON.stringify(v);

/** The wallet-auth repositories over one transaction; every query is scoped by platform_id. */
/**
 * Consumes a single-use row (passkey challenge, signed-retry request): true only for the one
 * caller whose conditional update flipped used_at, however many race for it.
 */
async function markUsedOnce(
  trx: Trx,
  table: "wallet_passkey_challenges" | "wallet_signed_requests",
  platformId: string,
  id: string,
  at: Date,
): Promise<boolean> {
  const res = await trx
    .updateTable(table)
    .set({ used_at: at })
    .where("platform_id", "=", platformId)
    .where("id", "=", id)
    .where("used_at", "is", null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export function walletRepositories(trx: Trx): WalletStore {
  return {
    async environmentOf(platformId) {
      const row = await trx.selectFrom("platforms").select("environment").where("id", "=", platformId).executeTakeFirst();
      return row?.environment;
    },
    async relyingPartyOf(platformId) {
      const row = await trx
        .selectFrom("platform_configs")
        .select(["passkey_rp_id", "passkey_origins"])
        .where("platform_id", "=", platformId)
        .executeTakeFirst();
      if (!row || row.passkey_rp_id === "") return undefined;
      return { rpId: row.passkey_rp_id, origins: [...row.passkey_origins] };
    },
    credentials: {
      async insert(c) {
        await trx
          .insertInto("wallet_credentials")
          .values({
            id: c.id,
            platform_id: c.platformId,
            account_id: c.accountId,
            type: c.type,
            nickname: c.nickname,
            material: json(c.material),
            last_challenge_at: c.lastChallengeAt,
            created_at: c.createdAt,
            updated_at: c.updatedAt,
          })
          .execute();
      },
      async get(platformId, id, opts) {
        let q = trx.selectFrom("wallet_credentials").selectAll().where("platform_id", "=", platformId).where("id", "=", id).where("deleted_at", "is", null);
        if (opts?.forUpdate) q = q.forUpdate();
        const row = await q.executeTakeFirst();
        return row && toCredential(row);
      },
      async listByAccount(platformId, accountId) {
        const rows = await trx
          .selectFrom("wallet_credentials")
          .selectAll()
          .where("platform_id", "=", platformId)
          .where("account_id", "=", accountId)
          .where("deleted_at", "is", null)
          .orderBy("created_at", "asc")
          .orderBy("id", "asc")
          .execute();
        return rows.map(toCredential);
      },
      async updateMaterial(platformId, id, material, at) {
        await trx.updateTable("wallet_credentials").set({ material: json(material), updated_at: at }).where("platform_id", "=", platformId).where("id", "=", id).execute();
      },
      async setLastChallengeAt(platformId, id, at) {
        await trx.updateTable("wallet_credentials").set({ last_challenge_at: at }).where("platform_id", "=", platformId).where("id", "=", id).execute();
      },
      async markDeleted(platformId, id, at) {
        const res = await trx
          .updateTable("wallet_credentials")
          .set({ deleted_at: at, updated_at: at })
          .where("platform_id", "=", platformId)
          .where("id", "=", id)
          .where("deleted_at", "is", null)
          .executeTakeFirst();
        return Number(res.numUpdatedRows) === 1;
      },
    },
    otps: {
      async put(o: StoredOtp) {
        const values = {
          credential_id: o.credentialId,
          platform_id: o.platformId,
          code_sha256: o.codeSha256,
          attempts: o.attempts,
          created_at: o.createdAt,
          expires_at: o.expiresAt,
        };
        await trx
          .insertInto("wallet_otps")
          .values(values)
          .onConflict((oc) => oc.column("credential_id").doUpdateSet({ code_sha256: o.codeSha256, attempts: o.attempts, created_at: o.createdAt, expires_at: o.expiresAt }))
          .execute();
      },
      async get(platformId, credentialId) {
        const r = await trx.selectFrom("wallet_otps").selectAll().where("platform_id", "=", platformId).where("credential_id", "=", credentialId).executeTakeFirst();
        return r && { credentialId: r.credential_id, platformId: r.platform_id, codeSha256: r.code_sha256, attempts: r.attempts, createdAt: r.created_at, expiresAt: r.expires_at };
      },
      async setAttempts(platformId, credentialId, attempts) {
        await trx.updateTable("wallet_otps").set({ attempts }).where("platform_id", "=", platformId).where("credential_id", "=", credentialId).execute();
      },
      async remove(platformId, credentialId) {
        await trx.deleteFrom("wallet_otps").where("platform_id", "=", platformId).where("credential_id", "=", credentialId).execute();
      },
    },
    passkeyChallenges: {
      async insert(c: PasskeyChallenge) {
        await trx
          .insertInto("wallet_passkey_challenges")
          .values({
            id: c.id,
            platform_id: c.platformId,
            credential_id: c.credentialId,
            challenge: c.challenge,
            client_public_key: c.clientPublicKey,
            created_at: c.createdAt,
            expires_at: c.expiresAt,
            used_at: c.usedAt,
          })
          .execute();
      },
      async get(platformId, id) {
        const r = await trx.selectFrom("wallet_passkey_challenges").selectAll().where("platform_id", "=", platformId).where("id", "=", id).executeTakeFirst();
        return (
          r && {
            id: r.id,
            platformId: r.platform_id,
            credentialId: r.credential_id,
            challenge: r.challenge,
            clientPublicKey: r.client_public_key,
            createdAt: r.created_at,
            expiresAt: r.expires_at,
            usedAt: r.used_at,
          }
        );
      },
      markUsed: (platformId, id, at) => markUsedOnce(trx, "wallet_passkey_challenges", platformId, id, at),
    },
    sessions: {
      async insert(s) {
        await trx
          .insertInto("wallet_sessions")
          .values({
            id: s.id,
            platform_id: s.platformId,
            account_id: s.accountId,
            credential_id: s.credentialId,
            type: s.type,
            nickname: s.nickname,
            public_key: s.publicKey,
            created_at: s.createdAt,
            updated_at: s.updatedAt,
            expires_at: s.expiresAt,
            revoked_at: s.revokedAt,
          })
          .execute();
      },
      async get(platformId, id) {
        const r = await trx.selectFrom("wallet_sessions").selectAll().where("platform_id", "=", platformId).where("id", "=", id).executeTakeFirst();
        return r && toSession(r);
      },
      async listActive(platformId, accountId, now) {
        const rows = await trx
          .selectFrom("wallet_sessions")
          .selectAll()
          .where("platform_id", "=", platformId)
          .where("account_id", "=", accountId)
          .where("revoked_at", "is", null)
          .where("expires_at", ">", now)
          .orderBy("created_at", "desc")
          .orderBy("id", "desc")
          .execute();
        return rows.map(toSession);
      },
      async findActiveByKey(platformId, accountId, publicKey, now) {
        const r = await trx
          .selectFrom("wallet_sessions")
          .selectAll()
          .where("platform_id", "=", platformId)
          .where("account_id", "=", accountId)
          .where("public_key", "=", publicKey)
          .where("revoked_at", "is", null)
          .where("expires_at", ">", now)
          .executeTakeFirst();
        return r && toSession(r);
      },
      async revoke(platformId, id, at) {
        const res = await trx
          .updateTable("wallet_sessions")
          .set({ revoked_at: at, updated_at: at })
          .where("platform_id", "=", platformId)
          .where("id", "=", id)
          .where("revoked_at", "is", null)
          .executeTakeFirst();
        return Number(res.numUpdatedRows) === 1;
      },
      async revokeByCredential(platformId, credentialId, at) {
        await trx
          .updateTable("wallet_sessions")
          .set({ revoked_at: at, updated_at: at })
          .where("platform_id", "=", platformId)
          .where("credential_id", "=", credentialId)
          .where("revoked_at", "is", null)
          .execute();
      },
    },
    signedRequests: {
      async insert(r: SignedRequest) {
        await trx
          .insertInto("wallet_signed_requests")
          .values({
            id: r.id,
            platform_id: r.platformId,
            account_id: r.accountId,
            operation: r.operation,
            body_sha256: r.bodySha256,
            payload_to_sign: r.payloadToSign,
            created_at: r.createdAt,
            expires_at: r.expiresAt,
            used_at: r.usedAt,
          })
          .execute();
      },
      async get(platformId, id) {
        const r = await trx.selectFrom("wallet_signed_requests").selectAll().where("platform_id", "=", platformId).where("id", "=", id).executeTakeFirst();
        return (
          r && {
            id: r.id,
            platformId: r.platform_id,
            accountId: r.account_id,
            operation: r.operation,
            bodySha256: r.body_sha256,
            payloadToSign: r.payload_to_sign,
            createdAt: r.created_at,
            expiresAt: r.expires_at,
            usedAt: r.used_at,
          }
        );
      },
      markUsed: (platformId, id, at) => markUsedOnce(trx, "wallet_signed_requests", platformId, id, at),
    },
    delegatedKeys: {
      async insert(k) {
        await trx
          .insertInto("wallet_delegated_keys")
          .values({
            id: k.id,
            platform_id: k.platformId,
            account_id: k.accountId,
            public_key: k.publicKey,
            sealed_key: k.sealedKey,
            key_id: k.keyId,
            nickname: k.nickname,
            status: k.status,
            activation_request_id: k.activationRequestId,
            created_at: k.createdAt,
            updated_at: k.updatedAt,
            card_id: k.cardId ?? null,
            funding_source_id: k.fundingSourceId ?? null,
          })
          .execute();
      },
      async get(platformId, id, opts) {
        let q = trx.selectFrom("wallet_delegated_keys").selectAll().where("platform_id", "=", platformId).where("id", "=", id);
        if (opts?.forUpdate) q = q.forUpdate();
        const r = await q.executeTakeFirst();
        return r && toDelegatedKey(r);
      },
      async byActivationRequest(platformId, requestId) {
        const r = await trx.selectFrom("wallet_delegated_keys").selectAll().where("platform_id", "=", platformId).where("activation_request_id", "=", requestId).executeTakeFirst();
        return r && toDelegatedKey(r);
      },
      async active(platformId, accountId) {
        const r = await trx
          .selectFrom("wallet_delegated_keys")
          .selectAll()
          .where("platform_id", "=", platformId)
          .where("account_id", "=", accountId)
          .where("status", "=", "ACTIVE")
          .executeTakeFirst();
        return r && toDelegatedKey(r);
      },
      async list(platformId, filter) {
        let q = trx.selectFrom("wallet_delegated_keys").selectAll().where("platform_id", "=", platformId);
        if (filter.accountId) q = q.where("account_id", "=", filter.accountId);
        if (filter.fundingSourceId) q = q.where("funding_source_id", "=", filter.fundingSourceId);
        const rows = await q
          .orderBy("created_at", "desc")
          .orderBy("id", "desc")
          .execute();
        return rows.map(toDelegatedKey);
      },
      async setStatus(platformId, id, from, to, at) {
        const res = await trx
          .updateTable("wallet_delegated_keys")
          .set({ status: to, updated_at: at })
          .where("platform_id", "=", platformId)
          .where("id", "=", id)
          .where("status", "=", from)
          .executeTakeFirst();
        return Number(res.numUpdatedRows) === 1;
      },
    },
    walletKeys: {
      async get(platformId, accountId) {
        const r = await trx.selectFrom("wallet_keys").select(["sealed_key", "key_id"]).where("platform_id", "=", platformId).where("account_id", "=", accountId).executeTakeFirst();
        return r ? { sealed: new Uint8Array(r.sealed_key), keyId: r.key_id } : undefined;
      },
      async insertIfAbsent(platformId, accountId, { sealed, keyId }, at) {
        await trx
          .insertInto("wallet_keys")
          .values({ account_id: accountId, platform_id: platformId, sealed_key: sealed, key_id: keyId, created_at: at })
          .onConflict((oc) => oc.column("account_id").doNothing())
          .execute();
      },
      async notSealedUnder(currentKeyId, after, limit) {
        const rows = await trx
          .selectFrom("wallet_keys")
          .select(["account_id", "sealed_key", "key_id"])
          .where((eb) => eb.or([eb("key_id", "is", null), eb("key_id", "!=", currentKeyId)]))
          .where("account_id", ">", after)
          .orderBy("account_id")
          .limit(limit)
          .forUpdate()
          .skipLocked()
          .execute();
        return rows.map((r) => ({ accountId: r.account_id, sealed: new Uint8Array(r.sealed_key), keyId: r.key_id }));
      },
      async reseal(accountId, fromKeyId, { sealed, keyId }) {
        const r = await trx
          .updateTable("wallet_keys")
          .set({ sealed_key: sealed, key_id: keyId })
          .where("account_id", "=", accountId)
          .where((eb) => (fromKeyId === null ? eb("key_id", "is", null) : eb("key_id", "=", fromKeyId)))
          .executeTakeFirst();
        return Number(r.numUpdatedRows) === 1;
      },
      async countByKeyId() {
        const rows = await trx.selectFrom("wallet_keys").select(["key_id", (eb) => eb.fn.countAll<string>().as("rows")]).groupBy("key_id").execute();
        return rows.map((r) => ({ keyId: r.key_id, rows: Number(r.rows) }));
      },
    },
    events: delegatedKeyEvents(trx),
  };
}

export function walletTransactOver(db: Kysely<AuthSessionsDatabase>): WalletTransact {
  return (work) => inTransaction(db, (trx) => work(walletRepositories(trx)));
}
