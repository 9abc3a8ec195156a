import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { sql } from "kysely";
import type { Bus, BusMessage } from "../bus/types.js";
import type { Logger } from "../log.js";
import type { BackgroundWorker } from "../service.js";
import type { KitTables } from "./tables.js";

export interface OutboxRelayOptions {
  /** The service's schema-scoped database (DatabaseHandle.forSchema). */
  db: Kysely<any>;
  bus: Bus;
  log: Logger;
  /**
   * Wakes the relay when its schema's outbox gets rows (DatabaseHandle.listen on outboxChannel,
   * notified by the outbox's commit trigger). Without it (or when listening cannot start) the
   * relay polls every 200 ms.
   */
  wakeups?: (wake: () => void) => Promise<() => Promise<void>>;
  /**
   * How often to look for new rows when nobody wakes it: default 200 ms, or 8 s with `wakeups`,
   * where it is only a safety net for a lease that ran out (another relay died mid-publish: its
   * rows wait 30 s for the lease anyway) or a notification that never came. Each look is a query
   * and a wake-up of the process: an idle system makes seven of them (docs/benchmarks.md, "Idle
   * CPU"). 8 s stays under pg-pool's 10 s idle timeout, so a look finds the pool's connection
   * still open instead of opening one (a backend start for Postgres) every time.
   */
  pollIntervalMs?: number;
  /**
   * With `wakeups`: how often to look once a look nobody woke it for has found rows, i.e.
   * notifications are getting lost (a listening connection that died unnoticed), until a
   * notification arrives again. Default 2 s (or pollIntervalMs when shorter). It is also the base
   * of the back-off after a failed pass (doubling up to 10 s).
   */
  missedPollMs?: number;
  /** Rows leased and published at once (default 100). */
  batchSize?: number;
  /** Published rows older than this are deleted (default 24 h). */
  retentionMs?: number;
  /**
   * How long a lease keeps other relays off rows this one is publishing (default 30 s). It is
   * renewed while the publish lasts, so it only runs out when this relay dies: then another relay
   * (or this one after a restart) publishes the rows again.
   */
  leaseMs?: number;
  /**
   * How long stop() still waits for a publish in flight and for the final drain (default 2 s).
   * After that the relay gives its leases back and returns; the rows go out on the next start.
   * With the in-process bus a publish waits for the consumers, which may already be stopping.
   */
  stopGraceMs?: number;
}

export type OutboxRelay = BackgroundWorker & {
  /** Look for rows now instead of at the next poll (call after committing an event). */
  nudge(): void;
  /** Publishes everything unpublished right now; resolves with how many rows it sent. */
  flush(): Promise<number>;
};

interface LeasedRow {
  id: bigint;
  topic: string;
  key: string;
  payload: Uint8Array;
  headers: Record<string, string> | string;
}

/**
 * Publishes the outbox of one schema to the bus, oldest first. No transaction is open while the
 * bus publishes (an in-process publish waits for consumers that need the database, and in embedded
 * mode every service shares one database session):
 *  1. a short transaction leases the oldest free rows (`for update skip locked`, `lease_until`,
 *     `leased_by`) and commits;
 *  2. the rows are published, which resolves once the bus holds them durably (see Bus.publish);
 *  3. they are marked published if the lease is still ours; on failure the lease is given back.
 * Several relays may run on one schema (replicas): a lease keeps a row with one relay at a time,
 * and a relay never takes rows newer than an unpublished row another relay holds, so per-key order
 * survives. A relay that dies mid-publish leaves its lease to expire and the rows are published
 * again; consumers deduplicate by event id.
 */
export function createOutboxRelay(opts: OutboxRelayOptions): OutboxRelay {
  const db = opts.db as Kysely<KitTables>;
  const pollIntervalMs = opts.pollIntervalMs ?? (opts.wakeups ? 8_000 : 200);
  const missedPollMs = Math.min(opts.missedPollMs ?? 2_000, pollIntervalMs);
  // Without notifications (listening could not start) the relay polls as if it had none.
  const unnotifiedPollMs = opts.pollIntervalMs ?? 200;
  const batchSize = opts.batchSize ?? 100;
  const retentionMs = opts.retentionMs ?? 24 * 60 * 60 * 1000;
  const leaseMs = opts.leaseMs ?? 30_000;
  const stopGraceMs = opts.stopGraceMs ?? 2_000;
  const relayId = randomUUID();
  const log = opts.log.child({ worker: "outbox-relay", relay: relayId });
  const leaseEnd = () => sql<Date>`now() + make_interval(secs => ${leaseMs / 1000})`;

  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let nudged = false;
  // Whether notifications wake the relay, and whether one seems to have been lost since the last.
  let listening = false;
  let missing = false;
  let lastPrune = 0;
  let failures = 0;
  let unlisten: (() => Promise<void>) | undefined;
  // Set once stop()'s grace runs out: publishes still pending are no longer waited for.
  let abandoned = false;
  let abandon: () => void = () => {};
  let abandonedSignal = new Promise<void>((resolve) => (abandon = resolve));

  /**
   * Leases the oldest free rows, unless an older row is with another relay, in one statement (no
   * BEGIN/COMMIT round trips; an idle pass is one query):
   * - `candidates`: the oldest unpublished rows whose lease is free or ran out, locked, skipping rows
   *   another relay is leasing right now;
   * - `bound`: the oldest unpublished row up to the newest candidate that is not a candidate, i.e.
   *   leased by (or being leased by) another relay: publishing rows after it would reorder its key,
   *   so only the candidates before it are taken;
   * - the update marks those rows leased by this relay and answers them.
   * All parts read one snapshot, as the former two selects in one transaction read committed rows.
   */
  async function lease(): Promise<LeasedRow[]> {
    const q = db
      .with("candidates", (qb) =>
        qb
          .selectFrom("outbox")
          .select("id")
          .where("published_at", "is", null)
          .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", sql<Date>`now()`)]))
          .orderBy("id")
          .limit(batchSize)
          .forUpdate()
          .skipLocked(),
      )
      .with("bound", (qb) =>
        qb
          .selectFrom("outbox")
          .select((eb) => eb.fn.min("id").as("id"))
          .where("published_at", "is", null)
          .where("id", "<=", (eb) => eb.selectFrom("candidates").select((e) => e.fn.max("id").as("id")))
          .where("id", "not in", (eb) => eb.selectFrom("candidates").select("id")),
      )
      .updateTable("outbox")
      .set({ lease_until: leaseEnd(), leased_by: relayId })
      .where("id", "in", (eb) =>
        eb
          .selectFrom("candidates")
          .select("candidates.id")
          .where((e) =>
            e.or([
              e.not(e.exists(e.selectFrom("bound").select("bound.id").where("bound.id", "is not", null))),
              e("candidates.id", "<", e.selectFrom("bound").select("bound.id")),
            ]),
          ),
      )
      .returning(["id", "topic", "key", "payload", "headers"]);
    const rows = (await q.execute()) as LeasedRow[];
    // RETURNING has no order: publish oldest first.
    return rows.sort((x, y) => (BigInt(x.id) < BigInt(y.id) ? -1 : 1));
  }

  /**
   * Gives rows back unpublished so the next attempt (ours or another relay's) need not wait. The
   * lease ends but `leased_by` stays: a failed publish may still have reached the bus (a produce
   * that timed out), so a row once leased is never taken for unsent (the ledger's cancel only
   * withdraws a row no relay ever leased).
   */
  async function release(ids: bigint[]): Promise<void> {
    await db
      .updateTable("outbox")
      .set({ lease_until: null })
      .where("id", "in", ids)
      .where("leased_by", "=", relayId)
      .where("published_at", "is", null)
      .execute();
  }

  /** Lease, publish outside any transaction, mark. Resolves with how many rows were published. */
  async function publishBatch(): Promise<number> {
    if (abandoned) return 0;
    const rows = await lease();
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    const messages: BusMessage[] = rows.map((r) => ({
      topic: r.topic,
      key: r.key,
      value: r.payload,
      headers: typeof r.headers === "string" ? JSON.parse(r.headers) : r.headers,
    }));

    // Renew the lease while the publish lasts (an in-process publish waits for consumers).
    let renewal: Promise<unknown> | undefined;
    const renew = setInterval(() => {
      renewal ??= db
        .updateTable("outbox")
        .set({ lease_until: leaseEnd() })
        .where("id", "in", ids)
        .where("leased_by", "=", relayId)
        .where("published_at", "is", null)
        .execute()
        .catch((err) => log.warn({ err }, "could not renew the outbox lease"))
        .finally(() => (renewal = undefined));
    }, Math.max(1, Math.floor(leaseMs / 3)));

    let outcome: "published" | "abandoned" | Error;
    try {
      const published = opts.bus.publish(messages);
      // Once abandoned nobody awaits it; its late failure (bus closed) must not go unhandled.
      published.catch(() => {});
      outcome = await Promise.race([
        published.then(() => "published" as const),
        abandonedSignal.then(() => "abandoned" as const),
      ]).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
    } finally {
      clearInterval(renew);
      await renewal;
    }

    if (outcome === "published") {
      const marked = await db
        .updateTable("outbox")
        .set({ published_at: sql<Date>`now()`, lease_until: null })
        .where("id", "in", ids)
        .where("leased_by", "=", relayId)
        .where("published_at", "is", null)
        .executeTakeFirst();
      if (Number(marked.numUpdatedRows) < ids.length) {
        log.debug({ rows: ids.length, marked: Number(marked.numUpdatedRows) }, "lease lost during publish; another relay owns the rest");
      }
      return rows.length;
    }
    await release(ids);
    if (outcome === "abandoned") {
      log.info({ rows: ids.length }, "stopped before the bus confirmed; rows stay for the next start");
      return 0;
    }
    throw outcome;
  }

  async function drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await publishBatch();
      total += n;
      if (n < batchSize) return total;
    }
  }

  async function prune(): Promise<void> {
    if (Date.now() - lastPrune < 10 * 60_000) return;
    lastPrune = Date.now();
    await db
      .deleteFrom("outbox")
      .where("published_at", "is not", null)
      .where("published_at", "<", new Date(Date.now() - retentionMs))
      .execute();
  }

  /** Resolves true when nudged (or stopped), false when the pause ran out. */
  function pause(ms: number): Promise<boolean> {
    if (nudged || !running) {
      nudged = false;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false), ms);
      function done(woken: boolean) {
        clearTimeout(timer);
        wake = undefined;
        nudged = false;
        resolve(woken);
      }
      wake = () => done(true);
    });
  }

  function nudge(): void {
    nudged = true;
    wake?.();
  }

  /** A notification: the listening connection works, so the safety net can go back to its pace. */
  function notified(): void {
    missing = false;
    nudge();
  }

  async function run(): Promise<void> {
    if (opts.wakeups) {
      try {
        unlisten = await opts.wakeups(notified);
        listening = true;
      } catch (err) {
        log.warn({ err }, "cannot listen for outbox notifications; polling only");
      }
    }
    // Whether the pass about to run is a look nobody woke the relay for (not the first, at start).
    let unwoken = false;
    while (running) {
      try {
        const published = await drain();
        if (published > 0 && unwoken && listening && !missing) {
          missing = true;
          log.info({ rows: published }, "the outbox safety net found rows no notification announced; looking more often until one arrives");
        }
        await prune();
        failures = 0;
      } catch (err) {
        failures++;
        log.warn({ err, failures }, "outbox relay could not publish; will retry");
      }
      if (!running) break;
      // Back off while the bus or database is failing; poll normally otherwise.
      const ms =
        failures > 0 ? Math.min(10_000, missedPollMs * 2 ** failures) : !listening ? unnotifiedPollMs : missing ? missedPollMs : pollIntervalMs;
      unwoken = !(await pause(ms));
    }
  }

  return {
    name: "outbox-relay",
    start() {
      if (running) return;
      running = true;
      abandoned = false;
      abandonedSignal = new Promise<void>((resolve) => (abandon = resolve));
      loop = run();
    },
    nudge,
    flush: drain,
    async stop() {
      if (!running) return;
      running = false;
      wake?.();
      await unlisten?.().catch(() => {});
      unlisten = undefined;
      const grace = setTimeout(() => {
        abandoned = true;
        abandon();
      }, stopGraceMs);
      try {
        await loop;
        // Drain: whatever was committed before stop() is handed to the bus while the grace lasts.
        await drain();
      } catch (err) {
        log.warn({ err }, "outbox relay could not drain on stop; rows stay for the next start");
      } finally {
        clearTimeout(grace);
      }
    },
  };
}
