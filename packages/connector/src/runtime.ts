import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  createOutboxRelay,
  enqueueEvent,
  fixedShapeQuery,
  loadConfig,
  migrateSchema,
  newId,
  outboxChannel,
  subscribeConsumer,
  type BackgroundWorker,
  type Bus,
  type Clock,
  type ConsumerDefinition,
  type DatabaseHandle,
  type Logger,
  type Subscription,
  sql,
  type z,
} from "@corridor/kit";
import { RailInstructionSchema, RailOutcomeSchema, type RailInstruction as RailInstructionPb } from "@corridor/proto/corridor/ledger/v1/rails_pb.js";
import { RailNoticeSchema } from "@corridor/proto/corridor/ledger/v1/rail_notices_pb.js";
import { fileURLToPath } from "node:url";
import type { Kysely, Transaction } from "kysely";
import {
  CONNECTOR_NAME,
  OUTCOME_STATUSES,
  RAIL_NOTICES_TOPIC,
  RAIL_OUTCOMES_TOPIC,
  SANDBOX_CONNECTOR,
  environmentOf,
  instructionTopic,
  type NoticeReport,
  type OutcomeReport,
  type RailEnvironment,
  type RailInstruction,
} from "./contract.js";
import { createStatementPublisher, type StatementPublisher } from "./statements.js";
import type { ConnectorAdmin } from "./admin.js";

/** The package's migration folder (its tables only), for connectors without a folder of their own. */
export const CONNECTOR_MIGRATIONS_DIR = fileURLToPath(new URL("../migrations", import.meta.url));

/** Reports outcomes through the connector's outbox, inside the caller's transaction. */
export interface OutcomePublisher {
  /**
   * Records the outcome (its sequence number is the transaction's next) and enqueues it on
   * corridor.rail-outcomes.v1 in `trx`: it is published if and only if `trx` commits.
   */
  report(trx: Transaction<any>, outcome: OutcomeReport): Promise<void>;
}

/** Reports notices (contract 1.2: incoming credits, account corrections) through the connector's outbox. */
export interface NoticePublisher {
  /**
   * Records the notice in connector_notices (once per bank entry id: a second report of the same
   * entry, from a re-read file or another statement, is ignored and answers false) and enqueues it
   * on corridor.rail-notices.v1 in `trx`: it is published if and only if `trx` commits.
   */
  report(trx: Transaction<any>, notice: NoticeReport): Promise<boolean>;
}

/** What a connector's build gets. */
export interface ConnectorContext<C> {
  /** The connector's config, parsed from the environment by its schema. */
  config: C;
  /** The connector's own schema. */
  db: Kysely<any>;
  clock: Clock;
  log: Logger;
  outcomes: OutcomePublisher;
  /** Notices (contract 1.2); needs the package's notices migration in the connector's folder. */
  notices: NoticePublisher;
  /** End-of-day bank statements, through the connector's outbox (statements.ts; contract v1.2). */
  statements: StatementPublisher;
}

/** What a connector is made of once built. */
export interface ConnectorParts {
  /**
   * Acts on one instruction addressed to this connector, inside the inbox transaction `trx` of the
   * connector's schema: record what is to be sent (a file line, a schedule) and/or report outcomes
   * with `ctx.outcomes.report(trx, ...)`. Throwing rolls all of it back and the bus delivers the
   * instruction again. Called at most once per transaction id, whatever the bus redelivers.
   */
  onInstruction(instruction: RailInstruction, trx: Transaction<any>): Promise<void>;
  /**
   * True when `onInstruction` sends RETURN instructions (contract 1.3) back to the sender. Otherwise
   * the runtime answers each RETURN instruction REJECTED `RETURN_NOT_SUPPORTED` and never hands it
   * to the connector (it must not be paid out as a transfer).
   */
  returns?: boolean;
  /** Loops the connector needs (cut-off windows, polling the bank); started after the consumer. */
  workers?: BackgroundWorker[];
  /** What the operator may ask and decide (admin.ts: ConnectorAdminService, served by the connector's process). */
  admin?: ConnectorAdmin;
}

export interface ConnectorDefinition<S extends z.ZodObject = z.ZodObject> {
  /** The connector's name: what the operator binds rails to, and its instruction topic's middle part. */
  name: string;
  /** Its own Postgres schema (tables, outbox, inbox). */
  schema: string;
  /** Timestamp-named migrations; their first re-exports @corridor/connector/migrations. Default: the package's. */
  migrationsDir?: string;
  /** zod schema of its settings over the environment (every key also as <KEY>_FILE for secrets). */
  config: S;
  /**
   * Instructions of several transactions may be handled in one transaction (fewer commits). Only
   * for connectors that take no locks another transaction could take in another order.
   */
  batch?: boolean;
  build(ctx: ConnectorContext<z.infer<S>>): ConnectorParts | Promise<ConnectorParts>;
}

/** Declares a connector (types only: the runtime is startConnector / runConnector). */
export function defineConnector<S extends z.ZodObject>(def: ConnectorDefinition<S>): ConnectorDefinition<S> {
  if (!CONNECTOR_NAME.test(def.name)) throw new Error(`invalid connector name ${JSON.stringify(def.name)}: ${CONNECTOR_NAME}`);
  return def;
}

/** A connector's settings: its schema over the environment (kit loadConfig: `<KEY>_FILE` works, every bad key is listed). */
export function loadConnectorConfig<S extends z.ZodObject>(def: Pick<ConnectorDefinition<S>, "config">, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  return loadConfig(def.config, env);
}

/** The plain instruction of a wire message. Instructions from before contract v1.1 name no connector: they were the simulator's. */
export function fromWire(m: RailInstructionPb): RailInstruction {
  const connector = m.connector || SANDBOX_CONNECTOR;
  return {
    instructionId: m.eventId,
    occurredAt: m.occurredAt ? timestampDate(m.occurredAt) : new Date(0),
    platformId: m.platformId,
    environment: (m.environment || (m.connector ? "" : "SANDBOX")) as RailEnvironment,
    connector,
    transactionId: m.transactionId,
    direction: m.direction === "PULL" ? "PULL" : "PAYOUT",
    kind: m.kind === "QUOTE_PAYOUT" ? "QUOTE_PAYOUT" : m.kind === "RETURN" ? "RETURN" : "TRANSFER",
    amount: m.amount,
    currency: m.currency,
    paymentRail: m.paymentRail,
    externalAccountId: m.externalAccountId,
    accountInfo: (m.accountInfo as Record<string, unknown> | undefined) ?? {},
    reference: m.reference,
    umaAddress: m.umaAddress,
    ...(m.kind === "RETURN" && m.returnedCredit
      ? {
          returnedCredit: {
            bankEntryId: m.returnedCredit.bankEntryId,
            reason: m.returnedCredit.reason,
            paymentRail: m.returnedCredit.paymentRail,
            senderName: m.returnedCredit.senderName,
            senderAccount: m.returnedCredit.senderAccount,
            senderRouting: m.returnedCredit.senderRouting,
            reference: m.returnedCredit.reference,
            creditedAccount: m.returnedCredit.creditedAccount,
            creditedRouting: m.returnedCredit.creditedRouting,
            valueDate: m.returnedCredit.valueDate,
            suspenseItemId: m.returnedCredit.suspenseItemId,
          },
        }
      : {}),
  };
}

/** The wire message of a plain instruction (the ledger's side, and tests that play it). */
export function toWire(i: RailInstruction): RailInstructionPb {
  return create(RailInstructionSchema, {
    eventId: i.instructionId,
    occurredAt: timestampFromDate(i.occurredAt),
    platformId: i.platformId,
    environment: i.environment,
    connector: i.connector,
    transactionId: i.transactionId,
    direction: i.direction,
    kind: i.kind,
    amount: i.amount,
    currency: i.currency,
    paymentRail: i.paymentRail,
    externalAccountId: i.externalAccountId,
    accountInfo: i.accountInfo as never,
    reference: i.reference,
    umaAddress: i.umaAddress,
    returnedCredit: i.returnedCredit,
  });
}

const STATUSES: ReadonlySet<string> = new Set(OUTCOME_STATUSES);

/** Transaction ids whose outcome lock a database transaction holds (dropped with the transaction object). */
const outcomeLocksHeld = new WeakMap<object, Set<string>>();

// A report's two statements, built and compiled once per database handle (the kit's fixedShapeQuery).
const outcomeLockQuery = fixedShapeQuery((db: Kysely<any>, a: { lock: string }) => sql`select pg_advisory_xact_lock(hashtextextended(${a.lock}, 0))`);

/** The outcome's row at the transaction's next place (its last one + 1). */
const insertOutcomeQuery = fixedShapeQuery(
  (db: Kysely<any>, a: { outcomeId: string; transactionId: string; platformId: string; status: string; reason: string; at: Date; now: Date }) =>
    db
      .insertInto("connector_outcomes")
      .columns(["outcome_id", "transaction_id", "platform_id", "sequence", "status", "reason", "occurred_at", "recorded_at"])
      .expression((eb) =>
        eb
          .selectFrom("connector_outcomes")
          .select([
            eb.val(a.outcomeId).as("outcome_id"),
            eb.val(a.transactionId).as("transaction_id"),
            eb.val(a.platformId).as("platform_id"),
            eb(eb.fn.coalesce(eb.fn.max("sequence"), eb.lit(0)), "+", 1).as("sequence"),
            eb.val(a.status).as("status"),
            eb.val(a.reason).as("reason"),
            eb.val(a.at).as("occurred_at"),
            eb.val(a.now).as("recorded_at"),
          ])
          .where("transaction_id", "=", a.transactionId),
      )
      .returning("sequence"),
);

/** The outcome publisher of a connector: a connector_outcomes row and an outbox event per report. */
export function createOutcomePublisher(opts: { connector: string; clock: Clock }): OutcomePublisher {
  const environment = environmentOf(opts.connector);
  return {
    async report(trx, o) {
      if (!STATUSES.has(o.status)) throw new Error(`unknown rail outcome status ${JSON.stringify(o.status)}`);
      // The platform is empty only for a RETURN of a credit no platform's reference named (contract 1.3).
      if (!o.transactionId) throw new Error("a rail outcome names its transaction");
      const outcomeId = newId("Event");
      const reason = o.reason ?? "";
      // One reporter per transaction at a time (a consumer and a worker, or two workers, may report
      // on one transaction at once): the next place is then the last one + 1, never a collision.
      // A transaction-level lock is held until the commit: a second report on the same transaction
      // in the same database transaction (the sandbox's PROCESSING then COMPLETED) needs no second.
      let held = outcomeLocksHeld.get(trx);
      if (!held) outcomeLocksHeld.set(trx, (held = new Set()));
      if (!held.has(o.transactionId)) {
        await outcomeLockQuery.execute(trx, { lock: `connector-outcome:${o.transactionId}` });
        held.add(o.transactionId);
      }
      const row = (await insertOutcomeQuery.execute(trx, { outcomeId, transactionId: o.transactionId, platformId: o.platformId, status: o.status, reason, at: o.at, now: opts.clock.now() })).rows[0];
      if (!row) throw new Error(`outcome ${outcomeId} was not recorded`);
      await enqueueEvent(trx, {
        topic: RAIL_OUTCOMES_TOPIC,
        key: o.transactionId,
        eventId: outcomeId,
        eventType: `RAIL_${o.status}`,
        schema: RailOutcomeSchema,
        message: create(RailOutcomeSchema, {
          eventId: outcomeId,
          occurredAt: timestampFromDate(o.at),
          platformId: o.platformId,
          transactionId: o.transactionId,
          status: o.status,
          reason,
          expectedSettlementAt: o.expectedSettlementAt ? timestampFromDate(o.expectedSettlementAt) : undefined,
          connector: opts.connector,
          environment,
          sequence: Number(row.sequence),
        }),
      });
    },
  };
}

/** The notice publisher of a connector: a connector_notices row (unique bank entry id) and an outbox event per new notice. */
export function createNoticePublisher(opts: { connector: string; clock: Clock }): NoticePublisher {
  const environment = environmentOf(opts.connector);
  return {
    async report(trx, n) {
      if (!n.bankEntryId) throw new Error("a rail notice names the bank's id of its entry");
      if (n.kind === "INCOMING_CREDIT") {
        if (n.amount <= 0n) throw new Error("an incoming credit has a positive amount");
        if (!/^[A-Z]{3}$/.test(n.currency)) throw new Error(`an incoming credit has an ISO 4217 currency, not ${JSON.stringify(n.currency)}`);
      } else if (n.kind === "ACCOUNT_CORRECTION") {
        if (!n.code) throw new Error("an account correction names its change code");
      } else {
        throw new Error(`unknown rail notice kind ${JSON.stringify((n as { kind: unknown }).kind)}`);
      }
      const noticeId = newId("Event");
      const fresh = await trx
        .insertInto("connector_notices")
        .values({ bank_entry_id: n.bankEntryId, notice_id: noticeId, kind: n.kind, occurred_at: n.at, recorded_at: opts.clock.now() })
        .onConflict((oc) => oc.column("bank_entry_id").doNothing())
        .returning("notice_id")
        .executeTakeFirst();
      if (!fresh) return false;
      const message = create(RailNoticeSchema, {
        eventId: noticeId,
        occurredAt: timestampFromDate(n.at),
        connector: opts.connector,
        environment,
        bankEntryId: n.bankEntryId,
        notice:
          n.kind === "INCOMING_CREDIT"
            ? {
                case: "incomingCredit",
                value: {
                  amount: n.amount,
                  currency: n.currency,
                  paymentRail: n.paymentRail,
                  creditedAccount: n.creditedAccount,
                  creditedRouting: n.creditedRouting ?? "",
                  reference: n.reference,
                  senderName: n.senderName,
                  senderAccount: n.senderAccount ?? "",
                  senderRouting: n.senderRouting ?? "",
                  valueDate: n.valueDate,
                },
              }
            : {
                case: "accountCorrection",
                value: {
                  transactionId: n.transactionId,
                  platformId: n.platformId ?? "",
                  externalAccountId: n.externalAccountId ?? "",
                  code: n.code,
                  corrected: n.corrected,
                  correctedData: n.correctedData,
                },
              },
      });
      await enqueueEvent(trx, {
        topic: RAIL_NOTICES_TOPIC,
        key: `${opts.connector}:${n.bankEntryId}`,
        eventId: noticeId,
        eventType: `RAIL_${n.kind}`,
        schema: RailNoticeSchema,
        message,
      });
      return true;
    },
  };
}

/**
 * The consumer of a connector's instruction topic, for the kit's inbox (once per instruction id).
 * It acts only on an instruction addressed to this connector by name and environment (anything
 * else is refused: logged, acknowledged, never acted on), and on at most one instruction per
 * transaction (connector_instructions).
 */
export function instructionConsumer(opts: {
  connector: string;
  onInstruction: ConnectorParts["onInstruction"];
  log: Logger;
  clock: Clock;
  batch?: boolean;
  /** Whether the connector sends RETURN instructions; otherwise they are answered REJECTED RETURN_NOT_SUPPORTED with `outcomes` (or, without it, refused unanswered). */
  returns?: boolean;
  outcomes?: OutcomePublisher;
}): ConsumerDefinition<typeof RailInstructionSchema> {
  const environment = environmentOf(opts.connector);
  return {
    name: "rail-instructions",
    topic: instructionTopic(opts.connector),
    schema: RailInstructionSchema,
    batch: opts.batch ?? false,
    eventId: (e) => e.eventId,
    async handle(e, trx) {
      const i = fromWire(e);
      if (i.connector !== opts.connector || i.environment !== environment) {
        opts.log.error(
          { instruction_id: i.instructionId, transaction_id: i.transactionId, addressed_to: i.connector, environment: i.environment },
          `instruction not addressed to connector ${opts.connector} (${environment}); refused`,
        );
        return;
      }
      const fresh = await trx
        .insertInto("connector_instructions")
        .values({ transaction_id: i.transactionId, instruction_id: i.instructionId, platform_id: i.platformId, received_at: opts.clock.now() })
        .onConflict((oc) => oc.column("transaction_id").doNothing())
        .returning("transaction_id")
        .executeTakeFirst();
      if (!fresh) {
        opts.log.warn({ instruction_id: i.instructionId, transaction_id: i.transactionId }, "a second instruction for a transaction already instructed; ignored");
        return;
      }
      if (i.kind === "RETURN" && !opts.returns) {
        opts.log.error({ instruction_id: i.instructionId, transaction_id: i.transactionId }, `connector ${opts.connector} does not send returns; RETURN instruction rejected`);
        await opts.outcomes?.report(trx, { platformId: i.platformId, transactionId: i.transactionId, status: "REJECTED", reason: "RETURN_NOT_SUPPORTED", at: opts.clock.now() });
        return;
      }
      await opts.onInstruction(i, trx);
    },
  };
}

/** What a host hands a connector. */
export interface ConnectorDeps {
  db: DatabaseHandle;
  bus: Bus;
  clock: Clock;
  log: Logger;
  env: NodeJS.ProcessEnv;
}

export interface RunningConnector {
  name: string;
  /** The connector's own schema, for tests that look at its tables. */
  db: Kysely<any>;
  /** Wakes the outbox relay (outcomes leave without waiting for its next look). */
  nudge(): void;
  /** The connector's operator service, when it offers one (the process serves it: standalone.ts). */
  admin?: ConnectorAdmin;
  stop(): Promise<void>;
}

/**
 * Runs a connector in a host (its own process: runConnector; embedded and tests: with the host's
 * database and bus): migrates its schema, subscribes its instruction consumer (inbox), starts the
 * outbox relay that publishes its outcomes and its workers. `stop()` stops producers first.
 */
export async function startConnector<S extends z.ZodObject>(def: ConnectorDefinition<S>, deps: ConnectorDeps): Promise<RunningConnector> {
  const log = deps.log.child({ connector: def.name });
  const config = loadConnectorConfig(def, deps.env);
  await migrateSchema(deps.db, def.schema, def.migrationsDir ?? CONNECTOR_MIGRATIONS_DIR);
  const db = deps.db.forSchema<any>(def.schema);
  const outcomes = createOutcomePublisher({ connector: def.name, clock: deps.clock });
  const notices = createNoticePublisher({ connector: def.name, clock: deps.clock });
  const statements = createStatementPublisher({ connector: def.name, clock: deps.clock });
  const parts = await def.build({ config, db, clock: deps.clock, log, outcomes, notices, statements });
  const consumer = instructionConsumer({ connector: def.name, onInstruction: parts.onInstruction, log, clock: deps.clock, batch: def.batch, returns: parts.returns, outcomes });
  const subscription: Subscription = await subscribeConsumer({ db, bus: deps.bus, service: def.name, def: consumer, log });
  const relay = createOutboxRelay({ db, bus: deps.bus, log, wakeups: (wake) => deps.db.listen(outboxChannel(def.schema), wake) });
  const workers: BackgroundWorker[] = [relay, ...(parts.workers ?? [])];
  for (const w of workers) w.start();
  return {
    name: def.name,
    db,
    nudge: () => relay.nudge(),
    ...(parts.admin ? { admin: parts.admin } : {}),
    async stop() {
      for (const w of [...workers].reverse()) await w.stop();
      await subscription.close();
    },
  };
}
