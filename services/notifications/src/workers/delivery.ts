import { v7 as uuidv7 } from "uuid";
import { lazyInstruments, type BackgroundWorker, type Clock, type Logger } from "@corridor/kit";
import { sql, type Kysely } from "kysely";
import { claimDue, lookWhenIdle, nextDueAt, settleAndTakeNext, settleWebhook, skipWithoutEndpoint, type Claim, type ClaimedWebhook, type EnqueuedWebhook, type SettleChange } from "../data/queue-repo.js";
import { findSettings } from "../data/settings-repo.js";
import type { NotificationsDatabase } from "../data/tables.js";
import { NO_ENDPOINT_GRACE_MS, outcomeFields, type DeliveryAttempt, type WebhookSender } from "../domain/delivery.js";
import { judgeAttempt, NO_ENDPOINT_RECHECK_MS } from "../domain/event-webhooks.js";
import { signingSecrets, type WebhookSettings } from "../domain/settings.js";
import { createEndpointCopy, createEndpointResolver, NO_ENDPOINT_REASON, type CurrentEndpoint, type EndpointCopy } from "./endpoint.js";
import { envelopeFor } from "../domain/grid-webhooks.js";

/** Where the worker sets its timers; tests pass their own so no test waits on real time. */
export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface DeliveryWorkerDeps {
  db: Kysely<NotificationsDatabase>;
  sender: WebhookSender;
  clock: Clock;
  log: Logger;
  /** Safety poll: the longest the worker stays asleep when nothing wakes it. */
  pollIntervalMs: number;
  /** How long a picked row stays ours: longer than one POST may take. */
  leaseMs: number;
  /** POSTs in flight at once in this worker. */
  concurrency: number;
  /** POSTs in flight at once to one platform's endpoint, counting every worker on the database. */
  perEndpoint: number;
  /** How long a webhook waits behind an earlier undelivered webhook of the same resource. */
  orderHoldMs: number;
  /**
   * The platform's current endpoint from auth-sessions (read when the copy has none for an event
   * that may be newer than the copy). Without it, or when it fails, such a webhook waits for the
   * copy up to NO_ENDPOINT_GRACE_MS.
   */
  currentEndpoint?: CurrentEndpoint;
  /** What this process knows of each platform's endpoint (shared with the consumers); a fresh one otherwise. */
  copy?: EndpointCopy;
  timers?: Timers;
}

/** The event-webhook delivery loop. */
export interface DeliveryWorker extends BackgroundWorker {
  /** Claims what is due now, delivers it and waits for the outcomes (tests call it on a stopped worker). */
  runOnce(): Promise<number>;
  /**
   * A consumer enqueued these webhooks in a transaction that may not have committed yet: the
   * worker looks now, and again shortly until it has seen their rows (or gives up after a few
   * seconds: the transaction rolled back, and the bus will bring the event again). A webhook of a
   * resource this worker has in flight is not looked for: it is handed the slot when the one in
   * flight settles (or looked for then).
   */
  notify(webhooks: EnqueuedWebhook[]): void;
  /** Look for due webhooks now. */
  wake(): void;
}

/** How long an announced webhook is looked for before the worker assumes its transaction rolled back. */
const EXPECT_FOR_MS = 5_000;
const EXPECT_RECHECK_MAX_MS = 50;
/**
 * When a claim stopped at a bound and fewer than a quarter of the slots have come free, a sweep
 * claims for them after this long (more slots may free meanwhile: one claim fills several).
 */
const REFILL_WAIT_MS = 50;
/** After a failing pass (database unreachable), the next one waits this long. */
const PASS_FAILURE_BACKOFF_MS = 1_000;
/**
 * Announced webhooks of a platform this process believes has no endpoint wait this long, then are
 * settled together: one question to auth-sessions and one statement for the batch.
 */
export const NO_ENDPOINT_BATCH_MS = 250;
/** A batch that grows to this many webhooks is settled at once. */
const NO_ENDPOINT_BATCH_MAX = 500;

/**
 * Delivers event webhooks concurrently. It sleeps until woken:
 * - by a consumer that enqueued (`notify`, in process): a pass looks only at those rows (cheap
 *   however long the queue), and again shortly until their transaction has committed; a webhook
 *   of a resource already in flight here is not looked for, the one in flight hands it its slot;
 * - by a delivery settling when the last claim stopped at a bound (a slot is free again);
 * - by a timer set to the earliest time a row becomes due by itself (a retry, an expiring lease,
 *   an order hold), capped by the safety poll; such a pass sweeps the whole queue.
 * A pass claims up to the free slots (see claimDue for the bounds and the per-resource order);
 * each row is posted outside any transaction, then the attempt is recorded and the row settled in
 * one statement, which also hands the slot to the next webhook of the resource when it is due.
 */
// Webhook metrics (docs/operations.md, "Metrics"). Labels: the outcome only (no platform id: the
// number of platforms is not bounded by configuration).
const webhookInstruments = lazyInstruments((meter) => ({
  meter,
  attempts: meter.createCounter("corridor.webhook.attempts", { unit: "{attempt}", description: "Webhook POSTs by outcome: delivered (2xx), retry (will be retried), failed (given up)." }),
  latency: meter.createHistogram("corridor.webhook.delivery.duration", { unit: "s", description: "From the event to its webhook's 2xx (retries included)." }),
  depth: meter.createObservableGauge("corridor.webhook.queue.depth", { unit: "{webhook}", description: "Webhooks waiting to be delivered (PENDING)." }),
  age: meter.createObservableGauge("corridor.webhook.queue.oldest_age", { unit: "s", description: "Age of the oldest webhook waiting, from its event (0 when none)." }),
}));

/** Observes the webhook queue at collection time: one query on the pending rows. */
function observeWebhookQueue(db: Kysely<NotificationsDatabase>): void {
  const w = webhookInstruments();
  w.meter.addBatchObservableCallback(
    async (r) => {
      try {
        const row = await db
          .selectFrom("webhook_queue")
          .where("status", "=", "PENDING")
          .select([sql<string>`count(*)`.as("n"), sql<string | null>`extract(epoch from now() - min(occurred_at))`.as("age")])
          .executeTakeFirst();
        r.observe(w.depth, Number(row?.n ?? 0));
        r.observe(w.age, Math.max(0, Number(row?.age ?? 0)));
      } catch {
        // The database is unreachable: no value rather than a failed scrape.
      }
    },
    [w.depth, w.age],
  );
}

export function createDeliveryWorker(deps: DeliveryWorkerDeps): DeliveryWorker {
  const timers = deps.timers ?? realTimers;
  const log = deps.log.child({ worker: "webhook-delivery" });
  observeWebhookQueue(deps.db);

  let running = false;
  let pass: Promise<void> | undefined;
  let again = false;
  /** Whether the next pass sweeps the whole queue (else it looks only at announced rows). */
  let sweepPending = true;
  /** Whether the next pass starts with a look at the queue (lookWhenIdle) and sweeps only if something is due. */
  let idlePending = false;
  let timer: unknown;
  const inFlight = new Set<Promise<void>>();
  /** Deliveries in flight per platform, in this worker. */
  const inFlightOf = new Map<string, number>();
  /** Announced webhook id → until when (performance.now()) it is looked for. */
  const expected = new Map<string, number>();
  /** Resource (platform + resource key) → deliveries of it in flight here (a chain each). */
  const busyResources = new Map<string, number>();
  /** Resource → announced webhooks of it waiting for the one in flight. */
  const behind = new Map<string, Set<string>>();
  const resourceOf = (platformId: string, resourceKey: string | null) => (resourceKey === null ? undefined : `${platformId}\u0000${resourceKey}`);
  let expectRecheckMs = 1;
  const copy = deps.copy ?? createEndpointCopy();
  const { resolve, lookUp } = createEndpointResolver({ db: deps.db, clock: deps.clock, log, currentEndpoint: deps.currentEndpoint, copy });

  /**
   * The settings of a claimed batch's platforms, as the claim read them (one read only for a
   * platform the claim did not answer, which cannot happen for its own rows); each tells the copy
   * whether the platform has an endpoint.
   */
  function settingsFrom(claim: Claim) {
    for (const [platformId, s] of claim.settings) copy.saw(platformId, Boolean(s?.webhookEndpoint));
    const cache = new Map<string, Promise<WebhookSettings | undefined>>();
    return (platformId: string) => {
      let p = cache.get(platformId);
      if (!p) cache.set(platformId, (p = claim.settings.has(platformId) ? Promise.resolve(claim.settings.get(platformId)) : findSettings(deps.db, platformId)));
      return p;
    };
  }

  /**
   * Webhooks of platforms believed to have no endpoint, announced and waiting to be settled
   * together (webhook id → when its event occurred, ms), with the batch's timer and the batch in
   * progress.
   */
  const noEndpoint = new Map<string, { ids: Map<string, number>; timer?: unknown; settling?: Promise<void> }>();

  function holdForBatch(w: EnqueuedWebhook & { occurredAt: Date }) {
    let b = noEndpoint.get(w.platformId);
    if (!b) noEndpoint.set(w.platformId, (b = { ids: new Map() }));
    b.ids.set(w.webhookId, w.occurredAt.getTime());
    if (b.ids.size >= NO_ENDPOINT_BATCH_MAX) settleBatchSoon(w.platformId, 0);
    else if (b.timer === undefined && !b.settling) settleBatchSoon(w.platformId, NO_ENDPOINT_BATCH_MS);
  }

  function settleBatchSoon(platformId: string, ms: number) {
    const b = noEndpoint.get(platformId);
    if (!b || b.settling) return;
    if (b.timer !== undefined) timers.clear(b.timer);
    b.timer = timers.set(() => {
      b.timer = undefined;
      b.settling = settleBatch(platformId, b.ids).finally(() => {
        b.settling = undefined;
        if (b.ids.size === 0 || copy.presence(platformId) !== false) {
          // Those that came in meanwhile go to the worker when the platform turned out to have an endpoint.
          noEndpoint.delete(platformId);
          expect([...b.ids.keys()]);
        } else if (running) settleBatchSoon(platformId, NO_ENDPOINT_BATCH_MS);
      });
    }, ms);
  }

  /**
   * Settles a platform's batch: auth-sessions is asked once (as the worker asks for one webhook);
   * with still no endpoint, every webhook whose event occurred by then is SKIPPED in one statement;
   * those that occurred later wait for the next batch. With an endpoint, or without an answer, or
   * for a webhook the statement did not settle (its transaction has not committed, a worker holds
   * it), the worker takes them as any announced webhook: nothing is skipped that it would send.
   */
  async function settleBatch(platformId: string, ids: Map<string, number>): Promise<void> {
    const taken = [...ids];
    ids.clear();
    const toWorker: string[] = [];
    try {
      const answer = running ? await lookUp(platformId) : undefined;
      if (!answer || answer.settings?.webhookEndpoint) {
        toWorker.push(...taken.map(([id]) => id));
        return;
      }
      const asOf = answer.asOf.getTime();
      const due = taken.filter(([, at]) => at <= asOf).map(([id]) => id);
      for (const [id, at] of taken) if (at > asOf) ids.set(id, at);
      const skipped = new Set(await skipWithoutEndpoint(deps.db, { platformId, webhookIds: due, asOf: answer.asOf, now: deps.clock.now(), reason: NO_ENDPOINT_REASON }));
      toWorker.push(...due.filter((id) => !skipped.has(id)));
    } catch (err) {
      log.warn({ err, platformId }, "could not settle the webhooks of a platform without endpoint together; the worker takes them");
      toWorker.push(...taken.map(([id]) => id).filter((id) => !ids.has(id)));
    } finally {
      expect(toWorker);
    }
  }

  /** An endpoint appeared on a platform whose webhooks wait in a batch: the worker takes them now. */
  copy.onEndpointAppeared((platformId) => {
    const b = noEndpoint.get(platformId);
    if (!b || b.settling) return;
    if (b.timer !== undefined) timers.clear(b.timer);
    noEndpoint.delete(platformId);
    expect([...b.ids.keys()]);
  });

  /**
   * Posts one row and settles it. When the row leaves PENDING and `chain` holds, the next webhook
   * of the same resource (if due) is taken as it settles and answered, to be posted in this same
   * slot right away.
   */
  const deliverOne = async (
    row: ClaimedWebhook,
    settingsOf: (platformId: string) => Promise<WebhookSettings | undefined>,
    chain: () => boolean,
  ): Promise<ClaimedWebhook | undefined> => {
    const now = deps.clock.now();
    const { verdict, settings } = await resolve(row, await settingsOf(row.platform_id));
    /**
     * Settles a row that leaves PENDING and, in the same statement, hands its slot to the next
     * webhook of its resource when one is due. Always looked for, not only when the claim saw a
     * later one (`has_next`) or one was announced behind it: a webhook announced before this row
     * was claimed but committed after that claim is held back by every later claim while this
     * row is in flight, and is in neither list; under a burst the worker never goes idle, so
     * nothing else would look for it until a sweep (seconds later).
     */
    const settleLeaving = async (change: SettleChange, attempt?: DeliveryAttempt) => {
      if (row.resource_key !== null && chain()) return settleAndTakeNext(deps.db, row, change, attempt, { now: deps.clock.now(), leaseMs: deps.leaseMs });
      await settleWebhook(deps.db, row.platform_id, row.webhook_id, change, attempt);
      return undefined;
    };

    if (verdict.kind === "skip") {
      // Not sent and no attempt recorded; the event stays stored (decisions §8).
      return settleLeaving({ status: "SKIPPED", attempts: row.attempts, lastError: verdict.reason, at: now });
    }
    if (verdict.kind === "unknown") {
      // The copy may be behind a config change made just before the event: wait a little for it.
      const giveUpAt = (row.redelivered_at ?? row.occurred_at).getTime() + NO_ENDPOINT_GRACE_MS;
      const expired = now.getTime() >= giveUpAt;
      await settleWebhook(deps.db, row.platform_id, row.webhook_id, {
        status: expired ? "SKIPPED" : "PENDING",
        attempts: row.attempts,
        nextAttemptAt: expired ? undefined : new Date(Math.min(now.getTime() + NO_ENDPOINT_RECHECK_MS, giveUpAt)),
        lastError: expired ? "no webhookEndpoint was set when it occurred" : "no webhookEndpoint configured (yet)",
        at: now,
      });
      return undefined;
    }

    // The platform's naming as of now (a GRID platform receives Grid's OBJECT.EVENT type): what is
    // signed, sent and recorded.
    const body = envelopeFor(settings!.webhookEventNaming, row.payload);
    // Outside any transaction: the row is ours by its lease.
    const outcome = await deps.sender.send({
      platformId: row.platform_id,
      url: verdict.url,
      webhookId: row.webhook_id,
      timestamp: now,
      body,
      secrets: signingSecrets(settings!, now),
    });
    const done = deps.clock.now();
    const attempts = row.attempts + 1;
    // A redelivery's retries count from when it was asked for.
    const judged = judgeAttempt(outcome, attempts, row.redelivered_at ?? row.created_at, done);
    // The attempt is recorded and the row settled in one statement.
    const change: SettleChange = {
      status: judged.status,
      attempts,
      nextAttemptAt: judged.status === "PENDING" ? judged.nextAttemptAt : undefined,
      lastError: judged.status === "DELIVERED" ? null : judged.reason,
      at: done,
    };
    const attempt: DeliveryAttempt = {
      id: uuidv7(),
      platformId: row.platform_id,
      webhookId: row.webhook_id,
      type: row.type,
      url: verdict.url,
      requestBody: body,
      ...outcomeFields(outcome),
      delivered: judged.status === "DELIVERED",
      attemptedAt: now,
    };
    if (judged.status === "FAILED") log.warn({ webhookId: row.webhook_id, platformId: row.platform_id, reason: judged.reason }, "webhook not delivered");
    const metrics = webhookInstruments();
    metrics.attempts.add(1, { "corridor.webhook.outcome": judged.status === "DELIVERED" ? "delivered" : judged.status === "PENDING" ? "retry" : "failed" });
    if (judged.status === "DELIVERED") metrics.latency.record(Math.max(0, done.getTime() - row.occurred_at.getTime()) / 1000);
    if (judged.status !== "PENDING") return settleLeaving(change, attempt);
    await settleWebhook(deps.db, row.platform_id, row.webhook_id, change, attempt);
    return undefined;
  };

  const claim = (limit: number, only?: string[]) =>
    claimDue(deps.db, {
      only,
      now: deps.clock.now(),
      leaseMs: deps.leaseMs,
      limit,
      perEndpoint: deps.perEndpoint,
      orderHoldMs: deps.orderHoldMs,
      expected: [...expected.keys()],
    });

  /**
   * Delivers a row, then the rows of its resource handed to this slot; never throws. Announced
   * webhooks of the resource that were not handed over (not committed yet, or held back) are
   * looked for when the chain ends.
   */
  const guarded = async (first: ClaimedWebhook, settingsOf: (platformId: string) => Promise<WebhookSettings | undefined>, chain: () => boolean): Promise<number> => {
    const resource = resourceOf(first.platform_id, first.resource_key);
    if (resource) busyResources.set(resource, (busyResources.get(resource) ?? 0) + 1);
    let row: ClaimedWebhook | undefined = first;
    let n = 0;
    try {
      while (row) {
        const current: ClaimedWebhook = row;
        n++;
        row = await deliverOne(current, settingsOf, chain).catch((err: unknown) => {
          // The lease runs out and the row is picked again: at least once.
          log.error({ err, webhookId: current.webhook_id }, "webhook delivery failed unexpectedly");
          return undefined;
        });
        if (row && resource) behind.get(resource)?.delete(row.webhook_id);
      }
    } finally {
      if (resource) {
        const left = (busyResources.get(resource) ?? 1) - 1;
        if (left > 0) busyResources.set(resource, left);
        else {
          busyResources.delete(resource);
          const waiting = behind.get(resource);
          behind.delete(resource);
          if (waiting?.size) expect([...waiting]);
        }
      }
    }
    return n;
  };
  const whileRunning = () => running;

  /**
   * A claim is a transaction of its own: while an endpoint's slots are nearly all busy, a freed
   * slot waits until a quarter of them are free, so one claim fills several (the next webhook of
   * the same resource does not wait: it is handed the slot as it settles).
   */
  const refillPerEndpoint = Math.max(1, Math.floor(deps.perEndpoint / 4));
  const refillGlobal = Math.max(1, Math.floor(deps.concurrency / 4));
  /** Whether the last claim stopped at a bound (free slots, or an endpoint's in-flight limit). */
  let boundHit = false;

  function launch(row: ClaimedWebhook, settingsOf: (platformId: string) => Promise<WebhookSettings | undefined>) {
    const platformId = row.platform_id;
    inFlightOf.set(platformId, (inFlightOf.get(platformId) ?? 0) + 1);
    const p: Promise<void> = guarded(row, settingsOf, whileRunning).then(() => {
      inFlight.delete(p);
      const left = (inFlightOf.get(platformId) ?? 1) - 1;
      if (left > 0) inFlightOf.set(platformId, left);
      else inFlightOf.delete(platformId);
      // Another claim can only find more when the last one stopped at a bound (new webhooks
      // announce themselves, the next of a resource is handed this slot, retries have the timer).
      if (boundHit && (inFlight.size === 0 || (deps.perEndpoint - left >= refillPerEndpoint && deps.concurrency - inFlight.size >= refillGlobal))) wake();
      // Fewer than a quarter free: claim for them shortly all the same. Chains hand their slots
      // on, so under a burst the quarter may not come free for long, and a webhook the bound held
      // back (announced, seen, not claimed) would wait for the safety poll.
      else if (boundHit) refillSoon();
      // The last delivery settled: one statement tells whether anything is due (a row another
      // replica enqueued behind this one, say) and else when to look next.
      else if (inFlight.size === 0) wakeIdle();
    });
    inFlight.add(p);
  }
  /** A sweep REFILL_WAIT_MS after the first slot freed since the last claim stopped at a bound. */
  let refillTimer: unknown;
  function refillSoon() {
    if (refillTimer !== undefined || !running) return;
    refillTimer = timers.set(() => {
      refillTimer = undefined;
      wake();
    }, REFILL_WAIT_MS);
  }

  /** One timer: a sweep when something comes due, or a look at announced rows only. */
  function setTimer(ms: number, sweep: boolean) {
    if (timer !== undefined) timers.clear(timer);
    timer = timers.set(() => {
      timer = undefined;
      wake(sweep);
    }, ms);
  }

  /**
   * A sweep claims while there are free slots and due rows; a targeted pass (after an announcement)
   * only looks at the announced rows, which is cheap however long the queue. Then the worker sleeps
   * until the next row is due.
   */
  async function fill(sweep: boolean, idle = false): Promise<void> {
    let looked: { next?: Date } | undefined;
    if (idle && !sweep) {
      const look = await lookWhenIdle(deps.db, deps.clock.now(), deps.orderHoldMs);
      if (look.due) sweep = true;
      else looked = { next: look.next };
    }
    for (;;) {
      const free = deps.concurrency - inFlight.size;
      if (free <= 0) return; // a settling delivery wakes the worker
      if (!sweep && expected.size === 0) break;
      const claimed = await claim(free, sweep ? undefined : [...expected.keys()]);
      const { rows, seen } = claimed;
      for (const id of seen) expected.delete(id);
      const settingsOf = settingsFrom(claimed);
      for (const row of rows) launch(row, settingsOf);
      const stopped = rows.length >= free || [...inFlightOf.values()].some((n) => n >= deps.perEndpoint);
      boundHit = sweep ? stopped : boundHit || stopped;
      if (!sweep || rows.length < free) break;
    }
    if (!running) return;
    const t = performance.now();
    for (const [id, until] of expected) if (until < t) expected.delete(id);
    const recheck = expected.size > 0 ? expectRecheckMs : undefined;
    if (recheck !== undefined) expectRecheckMs = Math.min(expectRecheckMs * 2, EXPECT_RECHECK_MAX_MS);
    if (inFlight.size > 0) {
      // The last delivery to settle runs a pass that sets the timer; until then, only an announced
      // webhook whose transaction has not committed yet needs looking for.
      if (recheck !== undefined) setTimer(recheck, false);
      return;
    }
    // While the first quick looks for announced webhooks follow (1, 2, 4 … ms, about 60 ms in
    // all), each ends here again: the time the next row comes due is read once they are seen, or
    // once the looks have slowed to EXPECT_RECHECK_MAX_MS.
    if (recheck !== undefined && recheck < EXPECT_RECHECK_MAX_MS && !looked) {
      setTimer(recheck, false);
      return;
    }
    const now = deps.clock.now();
    const next = looked ? looked.next : await nextDueAt(deps.db, now, deps.orderHoldMs);
    let sleep = deps.pollIntervalMs;
    if (next) sleep = Math.min(sleep, Math.max(0, next.getTime() - now.getTime()));
    // After a recheck the pass ends here again and sets the timer for what comes due.
    if (recheck !== undefined && recheck < sleep) setTimer(recheck, false);
    else setTimer(sleep, true);
  }

  async function runPasses(): Promise<void> {
    do {
      again = false;
      const sweep = sweepPending;
      const idle = idlePending;
      sweepPending = false;
      idlePending = false;
      try {
        await fill(sweep, idle);
      } catch (err) {
        log.error({ err }, "webhook delivery pass failed");
        sweepPending = true;
        if (running) setTimer(PASS_FAILURE_BACKOFF_MS, true);
        return;
      }
    } while (again && running);
  }

  /** Looks for these announced webhooks now and shortly after, until their rows are visible. */
  function expect(webhookIds: string[]) {
    if (!running || webhookIds.length === 0) return;
    expectRecheckMs = 1;
    const until = performance.now() + EXPECT_FOR_MS;
    for (const id of webhookIds) expected.set(id, until);
    wake(false);
  }

  /** Runs a pass now (after the one running) that first looks whether anything is due (lookWhenIdle). */
  function wakeIdle() {
    if (!running) return;
    idlePending = true;
    wake(false);
  }

  /** Runs a pass now (after the one running): a sweep of the whole queue, or only announced rows. */
  function wake(sweep = true) {
    if (!running) return;
    if (sweep) sweepPending = true;
    if (pass) {
      again = true;
      return;
    }
    pass = runPasses().finally(() => {
      pass = undefined;
    });
  }

  return {
    name: "webhook-delivery",
    wake: () => wake(true),
    notify(webhooks) {
      if (!running) return;
      const fresh: string[] = [];
      for (const w of webhooks) {
        const resource = resourceOf(w.platformId, w.resourceKey);
        // A platform believed to have no endpoint: its webhooks are settled together, shortly.
        if (w.occurredAt && copy.presence(w.platformId) === false) holdForBatch(w as EnqueuedWebhook & { occurredAt: Date });
        else if (resource && busyResources.has(resource)) {
          const set = behind.get(resource) ?? new Set<string>();
          set.add(w.webhookId);
          behind.set(resource, set);
        } else fresh.push(w.webhookId);
      }
      expect(fresh);
    },
    async runOnce() {
      const claimed = await claim(deps.concurrency);
      const { rows } = claimed;
      const settingsOf = settingsFrom(claimed);
      const sent = await Promise.all(rows.map((row) => guarded(row, settingsOf, () => true)));
      return sent.reduce((a, b) => a + b, 0);
    },
    start() {
      if (running) return;
      running = true;
      // Rows left due by a restart (or a crash: their leases run out) go at once, not after a poll.
      wake();
    },
    async stop() {
      running = false;
      if (timer !== undefined) timers.clear(timer);
      timer = undefined;
      if (refillTimer !== undefined) timers.clear(refillTimer);
      refillTimer = undefined;
      // Webhooks waiting in a batch stay PENDING: the next start's sweep (or another replica's) takes them.
      for (const b of noEndpoint.values()) if (b.timer !== undefined) timers.clear(b.timer);
      await Promise.all([...noEndpoint.values()].map((b) => b.settling));
      noEndpoint.clear();
      await pass;
      await Promise.all([...inFlight]);
      expected.clear();
      behind.clear();
    },
  };
}
