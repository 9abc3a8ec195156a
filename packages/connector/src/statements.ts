import { create, fromBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { enqueueEvent, newId, sql, type Clock } from "@corridor/kit";
import { RailStatementSchema, type RailStatement } from "@corridor/proto/corridor/ledger/v1/rail_statements_pb.js";
import type { Kysely, Transaction } from "kysely";
import { SANDBOX_CONNECTOR, environmentOf } from "./contract.js";

/**
 * Statements (rail contract v1.2, docs/connectors.md "Statements and reconciliation"): a connector
 * reports every end-of-day account statement its bank sends (camt.053, BAI2, ...) on
 * corridor.rail-statements.v1; the ledger reconciles it against the transactions it routed to the
 * connector. Plain TypeScript here; `createStatementPublisher` maps it to the wire.
 */

/** Topic connectors report statements on (key: `<connector>:<statement id>`). */
export const RAIL_STATEMENTS_TOPIC = "corridor.rail-statements.v1";

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** One booked movement on a statement. */
export interface StatementEntry {
  /** The bank's id of the entry; unique on the statement. */
  bankEntryId: string;
  /** CREDIT: money came into the account; DEBIT: money left it. */
  direction: "CREDIT" | "DEBIT";
  /** Minor units, positive. */
  amount: bigint;
  valueDate?: string;
  bookingDate?: string;
  /** SEPA end-to-end id. */
  endToEndId?: string;
  /** Our reconciliation reference (TXN-…) when the bank echoed it. */
  reference?: string;
  /** ACH trace number. */
  traceNumber?: string;
  /** The transaction, when the connector recognised the entry as one of its own payments. */
  transactionId?: string;
  /** The bank's free text (type code, remittance), for the operator. */
  description?: string;
}

/** A statement to report. */
export interface StatementReport {
  /** IBAN or the bank's account number. */
  account: string;
  /** The bank's statement id: one statement per (account, statement id), a second report is ignored. */
  statementId: string;
  /** The business day it covers, YYYY-MM-DD in `timeZone`. */
  statementDate: string;
  /** IANA zone of the bank's day. */
  timeZone: string;
  currency: string;
  /** Booked balances, minor units, negative for a debit balance. */
  openingBooked: bigint;
  closingBooked: bigint;
  /** Booked entries only. */
  entries: StatementEntry[];
  /** The file it came in. */
  sourceFile?: string;
}

/** Reports statements through the connector's outbox, inside the caller's transaction. */
export interface StatementPublisher {
  /**
   * Records the statement (connector_statements) and enqueues it on corridor.rail-statements.v1 in
   * `trx`: published if and only if `trx` commits. A statement already reported (same account and
   * statement id) is not reported again: answers "duplicate".
   */
  report(trx: Transaction<any>, statement: StatementReport): Promise<"reported" | "duplicate">;
}

/** Checks a statement before it goes out; throws naming the fault (a connector bug, never bank input). */
export function checkStatement(s: StatementReport): void {
  const fault = (m: string) => new Error(`statement ${JSON.stringify(s.statementId)}: ${m}`);
  if (!s.account) throw fault("names no account");
  if (!s.statementId) throw fault("has no id");
  if (!DAY.test(s.statementDate)) throw fault(`date ${JSON.stringify(s.statementDate)} is not YYYY-MM-DD`);
  if (!/^[A-Z0-9]{3,12}$/.test(s.currency)) throw fault(`currency ${JSON.stringify(s.currency)}`);
  const ids = new Set<string>();
  for (const e of s.entries) {
    if (e.amount <= 0n) throw fault(`entry ${e.bankEntryId} has amount ${e.amount}; amounts are positive, the direction says which way`);
    if (e.direction !== "CREDIT" && e.direction !== "DEBIT") throw fault(`entry ${e.bankEntryId} has direction ${String(e.direction)}`);
    if (!e.bankEntryId) throw fault("an entry has no bank entry id");
    if (ids.has(e.bankEntryId)) throw fault(`entry id ${e.bankEntryId} appears twice; a connector numbers entries the bank did not`);
    ids.add(e.bankEntryId);
  }
}

/** The statement publisher of a connector: a connector_statements row and an outbox event per new statement. */
export function createStatementPublisher(opts: { connector: string; clock: Clock }): StatementPublisher {
  const environment = environmentOf(opts.connector);
  return {
    async report(trx, s) {
      if (opts.connector === SANDBOX_CONNECTOR) throw new Error("the sandbox simulator has no bank statements");
      checkStatement(s);
      const eventId = newId("Event");
      const fresh = await (trx as Kysely<any>)
        .insertInto("connector_statements")
        .values({
          account: s.account,
          statement_id: s.statementId,
          event_id: eventId,
          statement_date: s.statementDate,
          currency: s.currency,
          entry_count: s.entries.length,
          source_file: s.sourceFile ?? "",
          reported_at: opts.clock.now(),
        })
        .onConflict((oc) => oc.columns(["account", "statement_id"]).doNothing())
        .returning("event_id")
        .executeTakeFirst();
      if (!fresh) return "duplicate";
      await enqueueEvent(trx, {
        topic: RAIL_STATEMENTS_TOPIC,
        key: `${opts.connector}:${s.statementId}`,
        eventId,
        eventType: "RAIL_STATEMENT",
        schema: RailStatementSchema,
        message: create(RailStatementSchema, {
          eventId,
          occurredAt: timestampFromDate(opts.clock.now()),
          connector: opts.connector,
          environment,
          account: s.account,
          statementId: s.statementId,
          statementDate: s.statementDate,
          timeZone: s.timeZone,
          currency: s.currency,
          openingBooked: s.openingBooked,
          closingBooked: s.closingBooked,
          sourceFile: s.sourceFile ?? "",
          entries: s.entries.map((e) => ({
            bankEntryId: e.bankEntryId,
            direction: e.direction,
            amount: e.amount,
            valueDate: e.valueDate ?? "",
            bookingDate: e.bookingDate ?? "",
            endToEndId: e.endToEndId ?? "",
            reference: e.reference ?? "",
            traceNumber: e.traceNumber ?? "",
            transactionId: e.transactionId ?? "",
            status: "BOOK",
            description: e.description ?? "",
          })),
        }),
      });
      return "reported";
    },
  };
}

/** Statement ids in use (for the operator and tests). */
export async function reportedStatements(db: Kysely<any>): Promise<{ account: string; statement_id: string; statement_date: string; entry_count: number }[]> {
  return db.selectFrom("connector_statements").select(["account", "statement_id", "statement_date", "entry_count"]).orderBy(sql`reported_at`).execute();
}

/** A statement message as published (an outbox row's payload), for tests and tools. */
export function decodeStatement(payload: Uint8Array): RailStatement {
  return fromBinary(RailStatementSchema, payload);
}
