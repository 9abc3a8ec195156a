import { inTransaction } from "@corridor/kit";
import { sql, type Kysely, type Selectable, type Transaction } from "kysely";
import type { Quote, QuoteStatus, QuoteStore } from "../domain/ports.js";
import { instructionFromJson, instructionToJson, rateDetailsFromJson, rateDetailsToJson } from "../domain/quote-json.js";
import type { QuotesFxDatabase, QuotesTable } from "./tables.js";

type Db = Kysely<QuotesFxDatabase> | Transaction<QuotesFxDatabase>;

/** Forward order of quote statuses; a change only ever moves up (COMPLETED → FAILED is a returned payment). */
const RANK: Record<QuoteStatus, number> = { PENDING_AUTHORIZATION: -1, PENDING: 0, PROCESSING: 1, COMPLETED: 2, FAILED: 3, EXPIRED: 3 };

/** Quotes over Kysely; every statement is scoped by platform_id. */
export function quoteStore(db: Kysely<QuotesFxDatabase>): QuoteStore {
  const inTrx = async <T>(trx: unknown, fn: (t: Db) => Promise<T>): Promise<T> =>
    trx ? fn(trx as Transaction<QuotesFxDatabase>) : inTransaction(db, (t) => fn(t));

  return {
    async get(platformId, id) {
      const row = await db.selectFrom("quotes").selectAll().where("platform_id", "=", platformId).where("id", "=", id).where("confirmed", "=", true).executeTakeFirst();
      return row ? toQuote(row) : undefined;
    },

    async insertDraft(q, draft) {
      await db
        .insertInto("quotes")
        .values({ ...toRow(q), confirmed: false, creation_ref: draft.creationRef || null, drafted_at: draft.at })
        .execute();
    },

    async findCreated(platformId, creationRef, since) {
      const row = await db
        .selectFrom("quotes")
        .selectAll()
        .where("platform_id", "=", platformId)
        .where("creation_ref", "=", creationRef)
        .where("drafted_at", ">=", since)
        .orderBy("drafted_at", "desc")
        .limit(1)
        .executeTakeFirst();
      return row ? { quote: toQuote(row), confirmed: row.confirmed } : undefined;
    },

    async getDraft(platformId, id) {
      const row = await db.selectFrom("quotes").selectAll().where("platform_id", "=", platformId).where("id", "=", id).where("confirmed", "=", false).executeTakeFirst();
      return row ? toQuote(row) : undefined;
    },

    async confirm(quote, tx, hook) {
      const { platformId, id } = quote;
      return inTransaction(db, async (t) => {
        // The usual case in one statement: the draft confirmed, its status moved forward to the
        // transaction's when that is further on.
        const moves = movesForwardTo(tx.status);
        const confirmed = await t
          .updateTable("quotes")
          .set({
            confirmed: true,
            transaction_id: tx.transactionId,
            status: sql<QuoteStatus>`case when ${moves} then ${tx.status} else status end`,
            failure_reason: sql<string>`case when ${moves} then ${tx.failureReason} else failure_reason end`,
            updated_at: sql<Date>`case when ${moves} then greatest(${tx.at}::timestamptz, created_at) else updated_at end`,
          })
          .where("platform_id", "=", platformId)
          .where("id", "=", id)
          .where("confirmed", "=", false)
          .returningAll()
          .executeTakeFirst();
        let q: Quote;
        if (confirmed) q = toQuote(confirmed);
        else {
          // Confirmed already (answered as it is), or a draft deleted after a refusal while this
          // caller's ledger call succeeded: stored again.
          await t
            .insertInto("quotes")
            .values({ ...toRow(quote), transaction_id: tx.transactionId, status: tx.status, failure_reason: tx.failureReason, confirmed: true })
            .onConflict((oc) => oc.column("id").doNothing())
            .execute();
          q = toQuote(await t.selectFrom("quotes").selectAll().where("platform_id", "=", platformId).where("id", "=", id).forUpdate().executeTakeFirstOrThrow());
        }
        if (hook) await hook(t, q);
        return q;
      });
    },

    async deleteDraft(platformId, id) {
      await db.deleteFrom("quotes").where("platform_id", "=", platformId).where("id", "=", id).where("confirmed", "=", false).execute();
    },

    async draftsDue(before, limit) {
      const rows = await db.selectFrom("quotes").selectAll().where("confirmed", "=", false).where("drafted_at", "<=", before).orderBy("drafted_at").limit(limit).execute();
      return rows.map(toQuote);
    },

    async claimExecution(platformId, id, now, staleBefore, claimant) {
      const row = await db
        .updateTable("quotes")
        .set({ execution_started_at: now, execution_claimant: claimant ?? null, updated_at: notBeforeCreation(now) })
        .where("platform_id", "=", platformId)
        .where("id", "=", id)
        .where("status", "=", "PENDING")
        .where("confirmed", "=", true)
        .where((eb) =>
          eb.or([
            eb("execution_started_at", "is", null),
            eb("execution_started_at", "<", staleBefore),
            ...(claimant ? [eb("execution_claimant", "=", claimant)] : []),
          ]),
        )
        .returningAll()
        .executeTakeFirst();
      return row ? toQuote(row) : undefined;
    },

    async releaseExecution(platformId, id) {
      await db.updateTable("quotes").set({ execution_started_at: null, execution_claimant: null }).where("platform_id", "=", platformId).where("id", "=", id).where("status", "=", "PENDING").execute();
    },

    async markSignatureVerified(platformId, id) {
      await db.updateTable("quotes").set({ signature_verified: true }).where("platform_id", "=", platformId).where("id", "=", id).execute();
    },

    async advance(platformId, id, change, hook, trx) {
      return inTrx(trx, async (t) => {
        // Moved forward in one statement when it moves; otherwise read (and locked, as the update
        // would have) as it is.
        const moved = await t
          .updateTable("quotes")
          .set({ status: change.status, failure_reason: change.failureReason, updated_at: notBeforeCreation(change.at) })
          .where("platform_id", "=", platformId)
          .where("id", "=", id)
          .where(movesForwardTo(change.status))
          .returningAll()
          .executeTakeFirst();
        const row = moved ?? (await t.selectFrom("quotes").selectAll().where("platform_id", "=", platformId).where("id", "=", id).forUpdate().executeTakeFirst());
        if (!row) return undefined;
        const q = toQuote(row);
        if (hook) await hook(t, q);
        return q;
      });
    },

    async list(f, page) {
      const filtered = () => {
        let q = db.selectFrom("quotes").where("platform_id", "=", f.platformId).where("confirmed", "=", true);
        if (f.customerId) q = q.where("customer_id", "=", f.customerId);
        if (f.status) q = q.where("status", "=", f.status);
        if (f.createdAfter) q = q.where("created_at", ">=", f.createdAfter);
        if (f.createdBefore) q = q.where("created_at", "<=", f.createdBefore);
        return q;
      };
      let q = filtered().selectAll();
      if (page.before) {
        const { at, id } = page.before;
        q = q.where((eb) => eb.or([eb("created_at", "<", at), eb.and([eb("created_at", "=", at), eb("id", "<", id)])]));
      }
      const rows = await q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.limit + 1).execute();
      const total = await filtered().select(sql<string>`count(*)`.as("n")).executeTakeFirstOrThrow();
      return { rows: rows.map(toQuote), total: Number(total.n) };
    },

    async markAuthorized(platformId, id, change) {
      const row = await db
        .updateTable("quotes")
        .set({
          status: "PENDING",
          sca_challenge: null,
          payment_instructions: JSON.stringify(change.paymentInstructions.map(instructionToJson)),
          updated_at: notBeforeCreation(change.at),
        })
        .where("platform_id", "=", platformId)
        .where("id", "=", id)
        .where("status", "=", "PENDING_AUTHORIZATION")
        .where("confirmed", "=", true)
        .returningAll()
        .executeTakeFirst();
      return row ? toQuote(row) : undefined;
    },

    async dueForExpiry(now, limit) {
      const rows = await db
        .selectFrom("quotes")
        .select(["platform_id", "id"])
        .where("status", "in", ["PENDING", "PENDING_AUTHORIZATION"])
        .where("confirmed", "=", true)
        .where("expires_at", "<=", now)
        .orderBy("expires_at")
        .limit(limit)
        .execute();
      return rows.map((r) => ({ platformId: r.platform_id, id: r.id }));
    },

    async followTransaction(trx, platformId, transactionId, change) {
      await ((trx ?? db) as Db)
        .updateTable("quotes")
        .set({ status: change.status, failure_reason: change.failureReason, updated_at: notBeforeCreation(change.at) })
        .where("platform_id", "=", platformId)
        .where("transaction_id", "=", transactionId)
        .where("confirmed", "=", true)
        .where(movesForwardTo(change.status))
        .execute();
    },
  };
}

function toRow(q: Quote) {
  return {
    id: q.id,
    platform_id: q.platformId,
    status: q.status,
    transaction_id: q.transactionId,
    source_type: q.source.sourceType,
    source_account_id: q.source.accountId,
    customer_id: q.source.customerId,
    destination_type: q.destination.destinationType,
    destination_account_id: q.destination.accountId,
    payment_rail: q.destination.paymentRail,
    uma_address: q.destination.umaAddress,
    sending_currency: q.sendingCurrency,
    receiving_currency: q.receivingCurrency,
    total_sending_amount: q.totalSendingAmount,
    total_receiving_amount: q.totalReceivingAmount,
    fees_included: q.feesIncluded,
    exchange_rate: q.exchangeRate,
    locked_currency_side: q.lockedCurrencySide,
    locked_currency_amount: q.lockedCurrencyAmount,
    lookup_id: q.lookupId,
    description: q.description,
    purpose_of_payment: q.purposeOfPayment,
    rate_details: JSON.stringify(rateDetailsToJson(q.rateDetails)),
    counterparty_information: JSON.stringify(q.counterpartyInformation),
    sender_customer_info: JSON.stringify(q.senderCustomerInfo),
    payment_instructions: JSON.stringify(q.paymentInstructions.map(instructionToJson)),
    payload_to_sign: q.payloadToSign,
    signature_request_id: q.signatureRequestId,
    signature_verified: q.signatureVerified,
    failure_reason: q.failureReason,
    execution_started_at: q.executionStartedAt ?? null,
    execution_claimant: q.executionClaimant ?? null,
    agent_id: q.agentId || null,
    sca_challenge: q.scaChallenge ? JSON.stringify({ ...q.scaChallenge, expiresAt: q.scaChallenge.expiresAt.toISOString() }) : null,
    execute_on_authorization: q.executeOnAuthorization ?? false,
    created_at: q.createdAt,
    updated_at: q.updatedAt,
    expires_at: q.expiresAt,
  };
}

function toQuote(r: Selectable<QuotesTable>): Quote {
  return {
    id: r.id,
    platformId: r.platform_id,
    status: r.status as QuoteStatus,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    expiresAt: r.expires_at,
    source: { sourceType: r.source_type as Quote["source"]["sourceType"], accountId: r.source_account_id, customerId: r.customer_id, currency: r.sending_currency },
    destination: {
      destinationType: r.destination_type as Quote["destination"]["destinationType"],
      accountId: r.destination_account_id,
      paymentRail: r.payment_rail,
      umaAddress: r.uma_address,
      currency: r.receiving_currency,
    },
    sendingCurrency: r.sending_currency,
    receivingCurrency: r.receiving_currency,
    totalSendingAmount: BigInt(r.total_sending_amount),
    totalReceivingAmount: BigInt(r.total_receiving_amount),
    exchangeRate: r.exchange_rate,
    feesIncluded: BigInt(r.fees_included),
    rateDetails: rateDetailsFromJson(r.rate_details),
    lockedCurrencySide: r.locked_currency_side as Quote["lockedCurrencySide"],
    lockedCurrencyAmount: BigInt(r.locked_currency_amount),
    lookupId: r.lookup_id,
    description: r.description,
    purposeOfPayment: r.purpose_of_payment,
    counterpartyInformation: r.counterparty_information,
    senderCustomerInfo: r.sender_customer_info,
    transactionId: r.transaction_id,
    payloadToSign: r.payload_to_sign,
    signatureRequestId: r.signature_request_id,
    signatureVerified: r.signature_verified,
    paymentInstructions: r.payment_instructions.map(instructionFromJson),
    failureReason: r.failure_reason,
    executionStartedAt: r.execution_started_at ?? undefined,
    executionClaimant: r.execution_claimant ?? undefined,
    agentId: r.agent_id ?? "",
    ...(r.sca_challenge ? { scaChallenge: { ...r.sca_challenge, expiresAt: new Date(r.sca_challenge.expiresAt) } } : {}),
    executeOnAuthorization: r.execute_on_authorization,
  };
}

/** SQL: whether a row's status is ranked below `status` (RANK), i.e. `status` moves it forward. */
function movesForwardTo(status: QuoteStatus) {
  const below = (Object.keys(RANK) as QuoteStatus[]).filter((s) => RANK[s] < RANK[status]);
  return below.length === 0 ? sql<boolean>`false` : sql<boolean>`status in (${sql.join(below)})`;
}

/**
 * A sandbox quote's createdAt is on its platform's sandbox clock (so expiry follows
 * `POST /sandbox/clock/advance`), while later changes are stamped by this service's clock or the
 * ledger's event time. After a clock advance those run behind: the update is stamped no earlier
 * than the creation, so updatedAt never precedes createdAt.
 */
function notBeforeCreation(at: Date) {
  return sql<Date>`greatest(${at}::timestamptz, created_at)`;
}
