import { sql, type Kysely } from "kysely";
import type { Attributes } from "@opentelemetry/api";
import type { FastifyInstance } from "fastify";
import { kitMeter as kitMeterNow, lazyInstruments } from "./metrics.js";

// Every instrument here keeps its labels bounded: route templates (never raw paths), RPC method
// names, status classes and codes, schema and consumer-group names fixed by the code. No id of a
// customer, account, transaction or platform is ever an attribute.

const http = lazyInstruments((meter) =>
  meter.createHistogram("http.server.request.duration", {
    unit: "s",
    description: "Duration of the gateway's HTTP requests, by route template, method and status class.",
  }),
);

/** `2xx`, `4xx`, `5xx`… from a status code. */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/**
 * Records http.server.request.duration for every request of a Fastify instance, labelled with
 * the route template (`http.route`, `unmatched` for a path no route serves), the method and the
 * status class (`http.response.status_class`: the code itself would multiply the series for little
 * gain; the error codes are in the logs). Register on the root instance.
 */
export function registerFastifyMetrics(app: FastifyInstance): void {
  app.addHook("onResponse", (request, reply, done) => {
    const route = request.routeOptions.url;
    http().record(reply.elapsedTime / 1000, {
      "http.request.method": KNOWN_METHODS.has(request.method) ? request.method : "_OTHER",
      "http.route": route ?? "unmatched",
      "http.response.status_class": statusClass(reply.statusCode),
    });
    done();
  });
}

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

const rpc = lazyInstruments((meter) => ({
  server: meter.createHistogram("rpc.server.duration", { unit: "s", description: "Duration of the RPCs this service served, by method and code." }),
  client: meter.createHistogram("rpc.client.duration", { unit: "s", description: "Duration of the RPCs this process made, by method and code." }),
}));

/**
 * One RPC's duration (rpc.server.duration or rpc.client.duration). Seconds, like every duration
 * here (the semantic conventions moved RPC durations from ms to s with rpc.*.call.duration; the
 * names the issue asked for are kept, the unit is the new one so dashboards need one scale).
 */
export function recordRpcDuration(side: "client" | "server", seconds: number, attributes: Attributes): void {
  rpc()[side].record(seconds, attributes);
}

const pool = lazyInstruments((meter) => ({
  count: meter.createObservableUpDownCounter("db.client.connection.count", {
    unit: "{connection}",
    description: "Connections of the database pool by state (used, idle).",
  }),
  pending: meter.createObservableUpDownCounter("db.client.connection.pending_requests", {
    unit: "{request}",
    description: "Queries waiting for a connection of the pool.",
  }),
  max: meter.createObservableUpDownCounter("db.client.connection.max", { unit: "{connection}", description: "Size limit of the database pool." }),
}));

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/** Observes a pg pool's connections in use, idle and waiting at each collection (pool name: the process). */
export function observeDatabasePool(name: string, stats: () => PoolStats): void {
  const p = pool();
  const attrs = { "db.client.connection.pool.name": name };
  p.count.addCallback((r) => {
    const s = stats();
    r.observe(s.total - s.idle, { ...attrs, "db.client.connection.state": "used" });
    r.observe(s.idle, { ...attrs, "db.client.connection.state": "idle" });
  });
  p.pending.addCallback((r) => r.observe(stats().waiting, attrs));
  p.max.addCallback((r) => r.observe(stats().max, attrs));
}

const outbox = lazyInstruments((meter) => ({
  backlog: meter.createObservableGauge("corridor.outbox.backlog", { unit: "{event}", description: "Outbox rows not yet published, per schema." }),
  age: meter.createObservableGauge("corridor.outbox.oldest_age", { unit: "s", description: "Age of the oldest unpublished outbox row per schema (0 when none)." }),
}));

/**
 * The outbox backlog of one schema, read at collection time: one query on the partial index of
 * unpublished rows (cheap however large the published history is), so what Prometheus sees is
 * what the table holds, whichever replica's relay publishes. A failed query reports nothing (the
 * series goes stale and the absence alert covers it) rather than failing the whole scrape.
 */
export function observeOutbox(db: Kysely<any>, schema: string): void {
  const o = outbox();
  const attrs = { "db.namespace": schema };
  // Both from one query, so the age and the count describe the same moment.
  kitMeterNow().addBatchObservableCallback(async (r) => {
    try {
      const row = await db
        .selectFrom("outbox")
        .where("published_at", "is", null)
        .select([sql<string>`count(*)`.as("n"), sql<string | null>`extract(epoch from now() - min(created_at))`.as("age")])
        .executeTakeFirst();
      r.observe(o.backlog, Number(row?.n ?? 0), attrs);
      r.observe(o.age, Math.max(0, Number(row?.age ?? 0)), attrs);
    } catch {
      // The database is unreachable: no value (the series goes stale) rather than a failed scrape.
    }
  }, [o.backlog, o.age]);
}

const inbox = lazyInstruments((meter) => ({
  duration: meter.createHistogram("messaging.process.duration", { unit: "s", description: "Duration of handling one consumed event, by consumer group and outcome." }),
  failures: meter.createCounter("corridor.inbox.failures", { unit: "{event}", description: "Consumed events whose handling failed (the bus redelivers them), by consumer group." }),
}));

/** One consumed event's handling, with `error.type` set when it failed. */
export function recordInboxHandling(seconds: number, attributes: Attributes, error?: unknown): void {
  const i = inbox();
  if (error === undefined) {
    i.duration.record(seconds, attributes);
    return;
  }
  const errorType = (error as Error)?.name || "Error";
  i.duration.record(seconds, { ...attributes, "error.type": errorType });
  i.failures.add(1, { ...attributes, "error.type": errorType });
}

const lag = lazyInstruments((meter) =>
  meter.createObservableGauge("messaging.kafka.consumer.lag", {
    unit: "{message}",
    description: "Messages of a partition not yet committed by a consumer group (end offset minus committed offset), read from the broker at collection time.",
  }),
);

export interface ConsumerLag {
  /** Consumer group and topic without the deployment's KAFKA_TOPIC_PREFIX. */
  group: string;
  topic: string;
  partition: number;
  lag: number;
}

/**
 * Observes consumer lag per group, topic and partition at each collection, from `read` (the Kafka
 * bus asks the broker: committed offsets against end offsets). Bounded: groups and topics are
 * fixed by the code, partitions by the topic's configuration. A failed read reports nothing.
 */
export function observeConsumerLag(read: () => Promise<ConsumerLag[]>): void {
  lag().addCallback(async (r) => {
    try {
      for (const l of await read()) {
        r.observe(l.lag, { "messaging.consumer.group.name": l.group, "messaging.destination.name": l.topic, "messaging.destination.partition.id": String(l.partition) });
      }
    } catch {
      // The broker is unreachable: no value rather than a failed scrape.
    }
  });
}

const transactions = lazyInstruments((meter) =>
  meter.createHistogram("corridor.db.transaction.duration", {
    unit: "s",
    description: "Duration of database transactions, from BEGIN to COMMIT or ROLLBACK, by outcome (the process's service: the job / service.name).",
  }),
);

/**
 * One database transaction's duration, BEGIN to COMMIT (`commit`) or ROLLBACK (`rollback`); the
 * driver wrapper of openDatabase records every transaction of the process (db/index.ts).
 */
export function recordTransactionDuration(seconds: number, outcome: "commit" | "rollback"): void {
  transactions().record(seconds, { "corridor.db.transaction.outcome": outcome });
}

const rail = lazyInstruments((meter) => ({
  waiting: meter.createObservableGauge("corridor.rail.instructions.waiting", {
    unit: "{instruction}",
    description: "Rail instructions sent to a connector and still without a final outcome, per connector and status (PENDING: not yet submitted to the rail; PROCESSING: submitted, not settled).",
  }),
  age: meter.createObservableGauge("corridor.rail.instructions.oldest_age", {
    unit: "s",
    description: "Age of the oldest rail instruction waiting per connector and status, from when it was sent (0 when none).",
  }),
}));

export interface RailBacklog {
  /** Connector name (bounded by the deployment's configuration: the connectors bound, and `sandbox`). */
  connector: string;
  status: "PENDING" | "PROCESSING";
  waiting: number;
  /** Seconds since the oldest waiting instruction was sent; 0 when none. */
  oldestAgeSeconds: number;
}

/**
 * Observes the rail instructions waiting per connector and status at each collection, from `read`
 * (the ledger's bounded aggregate over its transactions routed to a connector). A failed read
 * reports nothing (the series goes stale) rather than failing the scrape.
 */
export function observeRailBacklog(read: () => Promise<RailBacklog[]>): void {
  const r = rail();
  kitMeterNow().addBatchObservableCallback(async (obs) => {
    try {
      for (const b of await read()) {
        const attrs = { "corridor.rail.connector": b.connector, "corridor.rail.status": b.status };
        obs.observe(r.waiting, b.waiting, attrs);
        obs.observe(r.age, Math.max(0, b.oldestAgeSeconds), attrs);
      }
    } catch {
      // The database is unreachable: no value rather than a failed scrape.
    }
  }, [r.waiting, r.age]);
}

const money = lazyInstruments((meter) =>
  meter.createCounter("corridor.ledger.transactions.completed", {
    unit: "{transaction}",
    description: "Transactions that completed (money moved), per currency, direction, kind and environment; counted after the commit. Counts only: no amounts, no ids.",
  }),
);

/**
 * One completed transaction (the ledger counts it once its transaction committed). Labels are
 * bounded: the currency (the platform's supported currencies), the direction (`INCOMING`,
 * `OUTGOING`), the kind (`transfer`, `quote`), the environment (`SANDBOX`, `PRODUCTION`: sandbox
 * money is not money and never mixes with the real).
 */
export function recordMoneyMoved(attrs: { currency: string; direction: string; kind: "transfer" | "quote"; environment: "SANDBOX" | "PRODUCTION" }): void {
  money().add(1, {
    "corridor.currency": attrs.currency,
    "corridor.transaction.direction": attrs.direction,
    "corridor.transaction.kind": attrs.kind,
    "corridor.environment": attrs.environment,
  });
}
