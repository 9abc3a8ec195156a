import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import type { ConnectRouter, Transport } from "@connectrpc/connect";
import type { Kysely, Transaction } from "kysely";
import type { Bus } from "./bus/types.js";
import type { ConfigBoard } from "./clients/config-board.js";
import type { Clock } from "./clock.js";
import type { DatabaseHandle } from "./db/index.js";
import type { Logger } from "./log.js";

export const SERVICE_NAMES = [
  "auth-sessions",
  "ledger",
  "quotes-fx",
  "agents",
  "customers-kyc",
  "notifications",
  "sandbox",
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** Connect transport to another service: in memory when embedded, h2c otherwise. */
export type TransportFor = (service: ServiceName) => Transport;

/** What a composition root hands a service. The service reads its own config from `env`. */
export interface ServiceDeps {
  db: DatabaseHandle;
  bus: Bus;
  clock: Clock;
  log: Logger;
  transportFor: TransportFor;
  env: NodeJS.ProcessEnv;
  /**
   * The platform-config board every process of the deployment shares (Redis in split mode, this
   * process's memory when embedded without Redis): auth-sessions writes it, the platform-facts
   * client reads it. Absent: configs are read from auth-sessions every time.
   */
  configBoard?: ConfigBoard;
}

/**
 * A consumer of one topic. The host wraps `handle` with the inbox: it runs inside a transaction
 * of the service's schema, once per event id, however often the bus delivers the message.
 */
export interface ConsumerDefinition<Desc extends DescMessage = DescMessage> {
  /** Unique within the service; the inbox and the consumer group are named after it. */
  name: string;
  /**
   * The topic of its events, or the topics: a producer that routes events by audience
   * (event-routing.ts) may put the events this consumer acts on on several topics. Each topic is
   * consumed in its order; there is none between topics (so a producer puts the events whose
   * relative order a consumer needs on one).
   */
  topic: string | readonly string[];
  /**
   * Topics that carried its events before a routing change (corridor.ledger.v1, …), still read so
   * that what a producer of an older version wrote there is handled: a rolling upgrade loses
   * nothing. Once drained and no older producer is left they cost idle fetches only, not a fetch
   * per event; a later release may drop them (docs/events.md, "Upgrading to topics by audience").
   */
  formerTopics?: readonly string[];
  /** Envelope message type of the topic. */
  schema: Desc;
  eventId(event: MessageShape<Desc>): string;
  /**
   * The events this consumer acts on. Others are acknowledged with no transaction and no inbox row:
   * `handle` would change nothing for them, so running it once or never is the same, and a busy
   * topic does not cost a commit per event a consumer ignores. Default: every event.
   */
  relevant?(event: MessageShape<Desc>): boolean;
  /**
   * `relevant` when deciding needs I/O: which of a delivery's events (the `relevant` ones, in
   * order) this consumer acts on, asked once per delivery batch, outside any transaction and after
   * the events were fetched. The others cost no transaction, no inbox row and no span. Only for a
   * consumer for which not running `handle` is as good as running it once: a repeat delivery asks
   * again and may be answered otherwise. A throw admits every event (`handle` then decides).
   * `db` is the service's database outside any transaction: a consumer may record what it refuses
   * there before answering (autocommit, statements keyed by the event id so a repeat delivery
   * changes nothing; notifications stores a refused webhook SKIPPED, readable through the events API).
   */
  admit?(events: MessageShape<Desc>[], db: Kysely<any>): Promise<boolean[]>;
  /**
   * Messages that arrive together are handled in one transaction (one inbox INSERT, one commit;
   * see subscribeConsumer). Only for handlers that take no locks another transaction could take
   * in another order (no money movements: a batch holds what its handlers lock until its commit),
   * or whose `handleMany` takes all of a batch's locks up front in one global order.
   */
  batch?: boolean;
  /**
   * With `batch`: the consumer's fresh events of a batch (in topic order, each once, duplicates
   * already recorded in the inbox left out) handed over together, in the batch's transaction, in
   * place of `handle` for each; so it can lock what they all touch at once and write set-based. If
   * it throws, the batch rolls back and each event is handled alone by `handle`, as for any batch
   * failure (so `handle` of one event must do what `handleMany` of it does).
   */
  handleMany?(events: MessageShape<Desc>[], trx: Transaction<any>): Promise<void>;
  /**
   * `handle` is itself idempotent per event id (its one write is keyed by the event id, ON CONFLICT
   * DO NOTHING), so the inbox writes no row for this consumer: a delivery again runs `handle`
   * again, which changes nothing. For consumers whose every event writes one row anyway
   * (notifications' webhook queue), it spares a second row and its index per event.
   */
  idempotent?: boolean;
  handle(event: MessageShape<Desc>, trx: Transaction<any>): Promise<void>;
}

/** Every topic a consumer reads: its topics, then its former topics. */
export function consumerTopics(def: Pick<ConsumerDefinition, "topic" | "formerTopics">): string[] {
  const own = typeof def.topic === "string" ? [def.topic] : [...def.topic];
  return [...own, ...(def.formerTopics ?? []).filter((t) => !own.includes(t))];
}

/** A long-running loop a service needs (schedulers, pollers); the host starts and stops it. */
export interface BackgroundWorker {
  name: string;
  start(): void;
  stop(): Promise<void>;
}

/** A service as built from its deps: its Connect routes, consumers and background workers. */
export interface BuiltService {
  routes(router: ConnectRouter): void;
  consumers: ConsumerDefinition<any>[];
  workers: BackgroundWorker[];
}

/** Everything a host needs to run a service in any mode. */
export interface ServiceModule {
  name: ServiceName;
  /** Postgres schema the service owns, for example auth_sessions. */
  schema: string;
  /** Folder of timestamp-named migration files (absolute path). */
  migrationsDir: string;
  build(deps: ServiceDeps): BuiltService | Promise<BuiltService>;
}
