import { randomUUID } from "node:crypto";
import type { ExpressionBuilder, Kysely, QueryCreator } from "kysely";
import { sql } from "kysely";
import { fixedShapeQuery } from "../db/fixed-shape.js";
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
   * How long published rows may wait for their mark when no pass follows (default 1 s): a pass
   * marks the previous pass's rows in its lease statement, so under traffic no statement of its
   * own is spent on them; otherwise one UPDATE marks them this long after their pass (and stop()
   * and flush() mark at once). Capped at a third of leaseMs: the lease keeps other relays off them
   * meanwhile and is not renewed.
   */
  markDelayMs?: number;
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

type EB = ExpressionBuilder<any, any>;

interface LeasedRow {
  id: bigint;
  topic: string;
  key: string;
  payload: Uint8Array;
  headers: Record<string, string> | string;
}

/** What one pass did: rows it leased and published, and whether it stopped short at another relay's row. */
interface Pass {
  leased: number;
  published: number;
  stoppedShort: boolean;
}

/**
 * Publishes the outbox of one schema to the bus, oldest first. No transaction is open while the
 * bus publishes (an in-process publish waits for consumers that need the database, and in embedded
 * mode every service shares one database session). A pass is one statement (docs/events.md, "The
 * outbox relay: passes and statements"):
 *  1. one statement marks the rows the previous pass published as published and leases the
 *     oldest free rows (`for update skip locked`, `lease_until`, `leased_by`);
 *  2. the rows are published, which resolves once the bus holds them durably (see Bus.publish);
 *  3. they stay leased until the next pass marks them, or the deferred mark `markDelayMs` later
 *     (or stop()/flush()) when no pass comes; on failure the lease is given back at once.
 * A relay that dies before the mark (or mid-publish) leaves its lease to expire and those rows are
 * published again by whichever relay leases them next: delivery is at least once, and consumers'
 * inboxes deduplicate by event id. Rows it had marked are never sent again.
 * Several relays may run on one schema (replicas): a lease keeps a row with one relay at a time,
 * and a relay never takes rows newer than an unpublished row another relay holds (published but
 * not yet marked counts as unpublished), so per-key order survives.
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
  // Published rows wait unmarked under a lease that is not renewed: the mark must come well before
  // the lease runs out, or another relay would publish them again.
  const markDelayMs = Math.min(opts.markDelayMs ?? 1_000, Math.floor(leaseMs / 3));
  const relayId = randomUUID();
  const log = opts.log.child({ worker: "outbox-relay", relay: relayId });
  const leaseEnd = () => sql<Date>`now() + make_interval(secs => ${leaseMs / 1000})`;

  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  // Wake-ups (notifications, nudges) counted, and the count when the last lease was sent: a
  // wake-up after it may announce rows that lease could not see, one before it cannot.
  let wakes = 0;
  let wakesAtLease = 0;
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
  // Rows this relay published and has not marked yet (still leased by it), and the deferred mark.
  let unmarked: bigint[] = [];
  let markTimer: ReturnType<typeof setTimeout> | undefined;
  // Passes and marks run one at a time (flush() may run beside the loop): a pass must not see this
  // relay's own rows of a pass in flight as unmarked, nor mark rows another one is still sending.
  let turn: Promise<unknown> = Promise.resolve();
  function exclusive<T>(f: () => Promise<T>): Promise<T> {
    const result = turn.then(f, f);
    turn = result.catch(() => {});
    return result;
  }

  /**
   * The ids as one array parameter (`{1,2,3}`): the statement's text stays the same whatever their
   * number (one prepared statement, and one compiled query: the relay's statements are fixed-shape
   * queries, db/fixed-shape.ts, built for this relay's id, batch size and lease).
   */
  const idList = (ids: bigint[]) => `{${ids.join(",")}}`;

  /** Marks published the rows among `ids` (an idList) that are still leased by this relay (a lease that ran out and was taken stays with its taker). */
  const markUpdate = (qc: QueryCreator<KitTables>, ids: string) =>
    qc
      .updateTable("outbox")
      .set({ published_at: sql<Date>`now()`, lease_until: null })
      .where("id", "=", sql<bigint>`any(${ids}::bigint[])`)
      .where("leased_by", "=", relayId)
      .where("published_at", "is", null);
  const markQuery = fixedShapeQuery((k: Kysely<KitTables>, a: { ids: string }) => markUpdate(k, a.ids));

  /**
   * Marks the previous pass's rows and leases the oldest free rows, unless an older row is with
   * another relay, in one statement (no BEGIN/COMMIT round trips; an idle pass is one query):
   * - `marked` (when there are rows to mark): the rows this relay published and still leases,
   *   marked published;
   * - `candidates`: the oldest unpublished rows whose lease is free or ran out, locked, skipping rows
   *   another relay is leasing right now;
   * - `bound`: the oldest unpublished row up to the newest candidate that is not a candidate, i.e.
   *   leased by (or being leased by) another relay: publishing rows after it would reorder its key,
   *   so only the candidates before it are taken. All parts read one snapshot, where the rows
   *   `marked` marks are still unpublished: they are left out of both, being this relay's own;
   * - `leased`: those candidates marked leased by this relay.
   * The answer is `bound` joined with the leased rows: at least one row, whose `bound` says whether
   * the pass stopped short at another relay's row (then the rows after it wait for that relay's
   * mark, and the relay looks again after markDelayMs).
   */
  const leaseQuery = fixedShapeQuery((k: Kysely<KitTables>, a: { ids: string }, variant: "mark" | "lease") => {
    const marking = variant === "mark";
    const start = (marking ? k.with("marked", (qc) => markUpdate(qc, a.ids).returning("id")) : k) as unknown as QueryCreator<any>;
    const notMarked = (eb: EB) => (marking ? eb("id", "not in", eb.selectFrom("marked").select("marked.id")) : sql<boolean>`true`);
    return start
      .with("candidates", (qb) =>
        qb
          .selectFrom("outbox")
          .select("id")
          .where("published_at", "is", null)
          .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", sql<Date>`now()`)]))
          .where(notMarked)
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
          .where(notMarked)
          .where("id", "<=", (eb: EB) => eb.selectFrom("candidates").select((e: EB) => e.fn.max("id").as("id")))
          .where("id", "not in", (eb: EB) => eb.selectFrom("candidates").select("id")),
      )
      .with("leased", (qb) =>
        qb
          .updateTable("outbox")
          .set({ lease_until: leaseEnd(), leased_by: relayId })
          .where("id", "in", (eb: EB) =>
            eb
              .selectFrom("candidates")
              .select("candidates.id")
              .where((e: EB) =>
                e.or([
                  e.not(e.exists(e.selectFrom("bound").select("bound.id").where("bound.id", "is not", null))),
                  e("candidates.id", "<", e.selectFrom("bound").select("bound.id")),
                ]),
              ),
          )
          .returning(["id", "topic", "key", "payload", "headers"]),
      )
      .selectFrom("bound")
      .leftJoin("leased", (join) => join.onTrue())
      .select(["leased.id as id", "leased.topic as topic", "leased.key as key", "leased.payload as payload", "leased.headers as headers", "bound.id as bound"]);
  });

  async function leaseAndMark(toMark: bigint[]): Promise<{ rows: LeasedRow[]; stoppedShort: boolean }> {
    const marking = toMark.length > 0;
    const answer = (await leaseQuery.execute(db, { ids: idList(toMark) }, marking ? "mark" : "lease")).rows as (Omit<LeasedRow, "id"> & { id: bigint | null; bound: unknown })[];
    const rows = answer.filter((r): r is typeof r & LeasedRow => r.id !== null);
    // The join has no order: publish oldest first.
    rows.sort((x, y) => (BigInt(x.id) < BigInt(y.id) ? -1 : 1));
    return { rows, stoppedShort: answer.some((r) => r.bound !== null && r.bound !== undefined) };
  }

  /** Hands over the rows waiting for their mark, cancelling the deferred mark (whoever takes them marks them). */
  function takeUnmarked(): bigint[] {
    clearTimeout(markTimer);
    markTimer = undefined;
    const ids = unmarked;
    unmarked = [];
    return ids;
  }

  /** Marks the waiting rows on their own: when no pass came within markDelayMs, and on stop()/flush(). */
  async function markAlone(): Promise<void> {
    const ids = takeUnmarked();
    if (ids.length === 0) return;
    try {
      await markQuery.execute(db, { ids: idList(ids) });
    } catch (err) {
      // Still leased by us: the next pass marks them, or, should none come before the lease runs
      // out, they are published again (at least once).
      unmarked = ids.concat(unmarked);
      throw err;
    }
  }

  function deferMark(): void {
    if (markTimer || unmarked.length === 0) return;
    markTimer = setTimeout(() => {
      markTimer = undefined;
      exclusive(markAlone).catch((err) => log.warn({ err }, "could not mark published outbox rows; the next pass will"));
    }, markDelayMs);
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

  /** Mark the previous pass's rows and lease (one statement), publish outside any transaction. */
  async function pass(): Promise<Pass> {
    if (abandoned) return { leased: 0, published: 0, stoppedShort: false };
    const toMark = takeUnmarked();
    wakesAtLease = wakes;
    let leased: { rows: LeasedRow[]; stoppedShort: boolean };
    try {
      leased = await leaseAndMark(toMark);
    } catch (err) {
      unmarked = toMark.concat(unmarked);
      deferMark();
      throw err;
    }
    const { rows, stoppedShort } = leased;
    if (rows.length === 0) return { leased: 0, published: 0, stoppedShort };
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
      // Marked by the next pass's statement, or by the deferred mark if none comes first. A crash
      // before either leaves them leased: published again once the lease runs out (at least once).
      unmarked.push(...ids);
      deferMark();
      return { leased: rows.length, published: rows.length, stoppedShort };
    }
    await release(ids);
    if (outcome === "abandoned") {
      log.info({ rows: ids.length }, "stopped before the bus confirmed; rows stay for the next start");
      return { leased: rows.length, published: 0, stoppedShort };
    }
    throw outcome;
  }

  /**
   * Passes until the outbox had no more rows for this relay: a pass follows only a full batch (the
   * next one marks it, so it is never an idle statement). A pass that stopped short at another
   * relay's row, or a wake-up after the last lease was sent, is the loop's to follow up.
   */
  async function drain(): Promise<Pass> {
    let published = 0;
    for (;;) {
      const p = await exclusive(pass);
      published += p.published;
      if (p.leased < batchSize || abandoned) return { leased: p.leased, published, stoppedShort: p.stoppedShort };
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

  /** Resolves true when woken (or stopped), false when the pause ran out. */
  function pause(ms: number): Promise<boolean> {
    // A wake-up since the last lease was sent announces rows that lease may not have seen.
    if (wakes !== wakesAtLease || !running) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false), ms);
      function done(woken: boolean) {
        clearTimeout(timer);
        wake = undefined;
        resolve(woken);
      }
      wake = () => done(true);
    });
  }

  function nudge(): void {
    wakes++;
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
    // Whether the pass about to run is a look nobody woke the relay for (not the first, at start,
    // nor the look again after stopping short at another relay's row).
    let unwoken = false;
    while (running) {
      let stoppedShort = false;
      try {
        const { published, stoppedShort: short } = await drain();
        stoppedShort = short;
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
      // Back off while the bus or database is failing; poll normally otherwise. Rows behind another
      // relay's row are looked for again once that relay's deferred mark is due: no notification
      // will announce them again.
      const poll = !listening ? unnotifiedPollMs : missing ? missedPollMs : pollIntervalMs;
      const ms = failures > 0 ? Math.min(10_000, missedPollMs * 2 ** failures) : stoppedShort ? Math.min(markDelayMs, poll) : poll;
      unwoken = !(await pause(ms)) && !stoppedShort;
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
    async flush() {
      const { published } = await drain();
      await exclusive(markAlone);
      return published;
    },
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
      // Nothing stays leased but published after a stop: the last pass's rows are marked now.
      await exclusive(markAlone).catch((err) => log.warn({ err }, "could not mark published outbox rows on stop; they are published again after the lease"));
    },
  };
}
