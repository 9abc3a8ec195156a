import { decodeKeysetCursor, encodeCursor, inTransaction } from "@corridor/kit";
import { sql, type Kysely } from "kysely";
import type { CardFilter, CardRow, CardStore, CardTx, CardView, DelegatedKeyCopy, FundingSourceRow } from "../domain/cards.js";
import type { LedgerDatabase, Trx } from "./tables.js";

/** The card store (domain/cards.ts) over the ledger's `cards` and `card_funding_sources` tables. */

export interface CardEvents {
  emitCardStateChanged(trx: Trx, view: CardView, previousState: string, at: Date): Promise<void>;
  emitCardIssuanceRequested(trx: Trx, card: CardRow, environment: string, at: Date): Promise<void>;
}

const toCard = (r: Record<string, unknown>): CardRow => ({
  ...(r as unknown as CardRow),
  max_spend_per_transaction: r.max_spend_per_transaction === null || r.max_spend_per_transaction === undefined ? null : BigInt(r.max_spend_per_transaction as string | number | bigint),
});

function sourcesQuery(trx: Trx) {
  return trx
    .selectFrom("card_funding_sources as s")
    .leftJoin("accounts as a", (j) => j.onRef("a.id", "=", "s.account_id").onRef("a.platform_id", "=", "s.platform_id"))
    .select(["s.id", "s.platform_id", "s.card_id", "s.account_id", "s.priority", "s.created_at", "s.updated_at", "s.removed_at", "s.delegated", sql<string>`coalesce(a.type, '')`.as("account_type")]);
}

function cardTx(trx: Trx, events: CardEvents): CardTx {
  return {
    async account(platformId, accountId) {
      return trx.selectFrom("accounts").select(["id", "customer_id", "owner_kind", "type", "currency", "status"]).where("platform_id", "=", platformId).where("id", "=", accountId).executeTakeFirst();
    },
    async card(platformId, cardId, opts) {
      let q = trx.selectFrom("cards").selectAll().where("platform_id", "=", platformId).where("id", "=", cardId);
      if (opts?.forUpdate) q = q.forUpdate();
      const row = await q.executeTakeFirst();
      return row && toCard(row);
    },
    async cardByPlatformCardId(platformId, platformCardId) {
      const row = await trx.selectFrom("cards").selectAll().where("platform_id", "=", platformId).where("platform_card_id", "=", platformCardId).executeTakeFirst();
      return row && toCard(row);
    },
    async insertCard(row) {
      await trx.insertInto("cards").values(row).execute();
    },
    async updateCard(cardId, patch) {
      return toCard(await trx.updateTable("cards").set(patch).where("id", "=", cardId).returningAll().executeTakeFirstOrThrow());
    },
    async sources(cardId) {
      return (await sourcesQuery(trx).where("s.card_id", "=", cardId).where("s.removed_at", "is", null).orderBy("s.priority", "asc").orderBy("s.created_at", "asc").execute()) as FundingSourceRow[];
    },
    async sourcesOf(cardIds) {
      const out = new Map<string, FundingSourceRow[]>();
      if (!cardIds.length) return out;
      const rows = (await sourcesQuery(trx).where("s.card_id", "in", cardIds).where("s.removed_at", "is", null).orderBy("s.priority", "asc").orderBy("s.created_at", "asc").execute()) as FundingSourceRow[];
      for (const r of rows) out.set(r.card_id, [...(out.get(r.card_id) ?? []), r]);
      return out;
    },
    async source(platformId, id, opts) {
      // The lock is taken on the source's row alone (not the joined account, on the outer join's nullable side).
      if (opts?.forUpdate) await trx.selectFrom("card_funding_sources").select("id").where("platform_id", "=", platformId).where("id", "=", id).forUpdate().execute();
      return (await sourcesQuery(trx).where("s.platform_id", "=", platformId).where("s.id", "=", id).executeTakeFirst()) as FundingSourceRow | undefined;
    },
    async insertSource(row) {
      await trx.insertInto("card_funding_sources").values(row).execute();
    },
    async removeSource(id, at) {
      await trx.updateTable("card_funding_sources").set({ removed_at: at, updated_at: at }).where("id", "=", id).execute();
    },
    async setDelegated(platformId, id, delegated, at) {
      const r = await trx.updateTable("card_funding_sources").set({ delegated, updated_at: at }).where("platform_id", "=", platformId).where("id", "=", id).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
    async delegatedKey(keyId) {
      return (await trx.selectFrom("card_delegated_keys").selectAll().where("key_id", "=", keyId).executeTakeFirst()) as DelegatedKeyCopy | undefined;
    },
    async putDelegatedKey(copy) {
      await trx
        .insertInto("card_delegated_keys")
        .values(copy)
        .onConflict((oc) => oc.column("key_id").doUpdateSet({ status: copy.status, updated_at: copy.updated_at }))
        .execute();
    },
    async activeDelegatedKeys(fundingSourceId) {
      const r = await trx
        .selectFrom("card_delegated_keys")
        .select(sql<string>`count(*)`.as("n"))
        .where("funding_source_id", "=", fundingSourceId)
        .where("status", "=", "ACTIVE")
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
    async list(platformId, filter: CardFilter, page) {
      const filtered = () => {
        let q = trx.selectFrom("cards").where("platform_id", "=", platformId);
        if (filter.cardholderId) q = q.where("cardholder_id", "=", filter.cardholderId);
        if (filter.platformCardId) q = q.where("platform_card_id", "=", filter.platformCardId);
        if (filter.state) q = q.where("state", "=", filter.state);
        if (filter.accountId) {
          const accountId = filter.accountId;
          q = q.where((eb) =>
            eb.exists(
              eb
                .selectFrom("card_funding_sources as f")
                .select("f.id")
                .whereRef("f.card_id", "=", "cards.id")
                .where("f.account_id", "=", accountId)
                .where("f.removed_at", "is", null),
            ),
          );
        }
        return q;
      };
      const after = decodeKeysetCursor(page.cursor, "timestamp");
      let q = filtered().selectAll();
      if (after) {
        const op = filter.ascending ? ">" : "<";
        q = q.where((eb) => eb.or([eb("created_at", op, after.k), eb.and([eb("created_at", "=", after.k), eb("id", op, after.id)])]));
      }
      const dir = filter.ascending ? "asc" : "desc";
      const rows = (await q.orderBy("created_at", dir).orderBy("id", dir).limit(page.limit + 1).execute()).map(toCard);
      const total = await filtered().select(sql<string>`count(*)`.as("n")).executeTakeFirstOrThrow();
      const hasMore = rows.length > page.limit;
      const data = hasMore ? rows.slice(0, page.limit) : rows;
      const last = data[data.length - 1];
      return { rows: data, hasMore, nextCursor: hasMore && last ? encodeCursor({ k: last.created_at.toISOString(), id: last.id }) : undefined, total: Number(total.n) };
    },
    emitStateChanged: (view, previousState, at) => events.emitCardStateChanged(trx, view, previousState, at),
    requestIssuance: (card, environment, at) => events.emitCardIssuanceRequested(trx, card, environment, at),
  };
}

export function cardStore(db: Kysely<LedgerDatabase>, events: CardEvents): CardStore {
  return {
    transaction: (fn) => inTransaction(db, (trx) => fn(cardTx(trx, events))),
    within: (trx) => cardTx(trx as Trx, events),
  };
}
