import { v7 as uuidv7 } from "uuid";
import type { BackgroundWorker, Clock, Logger } from "@corridor/kit";
import type { Kysely } from "kysely";
import { claimDue, nextDueAt, settleAndTakeNext, settleWebhook, type ClaimedWebhook, type SettleChange } from "../data/queue-repo.js";
import { findSettings, settingsStore } from "../data/settings-repo.js";
import type { NotificationsDatabase } from "../data/tables.js";
import { endpointVerdict, NO_ENDPOINT_GRACE_MS, type DeliveryAttempt, type EndpointVerdict, type WebhookSender } from "../domain/delivery.js";
import { judgeAttempt, NO_ENDPOINT_RECHECK_MS } from "../domain/event-webhooks.js";
import { applyEndpointCopy, signingSecrets, type WebhookSettings } from "../domain/settings.js";

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
  currentEndpoint?: (platformId: string) => Promise<{ webhookEndpoint: string; configVersion: bigint } | undefined>;
  timers?: Timers;
}

/** The event-webhook delivery loop. */
export interface DeliveryWorker extends BackgroundWorker {
  /** Claims what is due now, delivers it and waits for the outcomes (tests call it on a stopped worker). */
  runOnce(): Promise<number>;
  /**
   * A consumer enqueued these webhooks in a transaction that may not have committed yet: the
   * worker looks now, and again shortly until it has seen their rows (or gives up after a few
   * seconds: the transaction rolled back, and the bus will bring the event again).
   */
  notify(webhookIds: string[]): void;
  /** Look for due webhooks now. */
  wake(): void;
}

/** How long an announced webhook is looked for before the worker assumes its transaction rolled back. */
const EXPECT_FOR_MS = 5_000;
const EXPECT_RECHECK_MAX_MS = 50;
/** After a failing pass (database unreachable), the next one waits this long. */
const PASS_FAILURE_BACKOFF_MS = 1_000;

/**
 * Delivers event webhooks concurrently. It sleeps until woken: by a consumer that enqueued (an
 * in-process signal, `notify`), by a delivery settling (a slot freed, a later webhook of the same
 * resource may go), or by a timer set to the earliest time a row becomes due by itself (a retry,
 * an expiring lease, an order hold), capped by the safety poll. Each pass claims as many rows as
 * there are free slots (see claimDue for the bounds and the per-resource order), posts each
 * outside any transaction, then records the attempt and settles the row in one statement.
 */
export function createDeliveryWorker(deps: DeliveryWorkerDeps): DeliveryWorker {
  const timers = deps.timers ?? realTimers;
  const log = deps.log.child({ worker: "webhook-delivery" });

  let running = false;
  let pass: Promise<void> | undefined;
  let again = false;
  let timer: unknown;
  const inFlight = new Set<Promise<void>>();
  /** Deliveries in flight per platform, in this worker. */
  const inFlightOf = new Map<string, number>();
  /** Announced webhook id → until when (performance.now()) it is looked for. */
  const expected = new Map<string, number>();
  let expectRecheckMs = 1;
  /** Platform → time (ms) as of which auth-sessions said it had no endpoint. */
  const noEndpointAsOf = new Map<string, number>();
  const lookups = new Map<string, Promise<WebhookSettings | undefined>>();

  function remember(platformId: string, asOf: number) {
    if (noEndpointAsOf.size >= 10_000) noEndpointAsOf.delete(noEndpointAsOf.keys().next().value!);
    noEndpointAsOf.set(platformId, asOf);
  }

  /** Folds auth-sessions' current endpoint into the copy (as TEST does); undefined when it cannot answer. */
  function lookUp(platformId: string): Promise<WebhookSettings | undefined> {
    let p = lookups.get(platformId);
    if (p) return p;
    p = (async () => {
      const asOf = deps.clock.now();
      let current: Awaited<ReturnType<NonNullable<DeliveryWorkerDeps["currentEndpoint"]>>>;
      try {
        current = await deps.currentEndpoint!(platformId);
      } catch (err) {
        log.debug({ err, platformId }, "could not read the platform's config for an event webhook");
        return undefined;
      }
      if (!current) return undefined;
      await applyEndpointCopy(settingsStore(deps.db), { platformId, webhookEndpoint: current.webhookEndpoint, configVersion: current.configVersion, at: asOf });
      const settings = await findSettings(deps.db, platformId);
      if (!settings?.webhookEndpoint) remember(platformId, asOf.getTime());
      return settings;
    })().finally(() => lookups.delete(platformId));
    lookups.set(platformId, p);
    return p;
  }

  /** The endpoint for a row, asking auth-sessions when the copy has none but may be behind. */
  async function resolve(row: ClaimedWebhook, settings: WebhookSettings | undefined): Promise<{ verdict: EndpointVerdict; settings?: WebhookSettings }> {
    const verdict = endpointVerdict(settings, row.occurred_at);
    if (verdict.kind !== "unknown") return { verdict, settings };
    const asOf = noEndpointAsOf.get(row.platform_id);
    if (asOf !== undefined && row.occurred_at.getTime() <= asOf) return { verdict: { kind: "skip", reason: "no webhookEndpoint was set when it occurred" } };
    if (!deps.currentEndpoint) return { verdict };
    const fresh = await lookUp(row.platform_id);
    if (!fresh) return { verdict };
    const after = endpointVerdict(fresh, row.occurred_at);
    // auth-sessions answered with no endpoint: any endpoint set from now on is set after the event.
    if (after.kind === "unknown") return { verdict: { kind: "skip", reason: "no webhookEndpoint was set when it occurred" } };
    return { verdict: after, settings: fresh };
  }

  /** Settings read once per claimed batch and platform. */
  function settingsCache() {
    const cache = new Map<string, Promise<WebhookSettings | undefined>>();
    return (platformId: string) => {
      let p = cache.get(platformId);
      if (!p) cache.set(platformId, (p = findSettings(deps.db, platformId)));
      return p;
    };
  }

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
     * Settles a row that leaves PENDING; hands its slot on when a later webhook of the resource
     * was waiting at the claim (others are claimed as usual).
     */
    const settleLeaving = async (change: SettleChange, attempt?: DeliveryAttempt) => {
      if (row.has_next && chain()) return settleAndTakeNext(deps.db, row, change, attempt, { now: deps.clock.now(), leaseMs: deps.leaseMs });
      await settleWebhook(deps.db, row.platform_id, row.webhook_id, change, attempt);
      return undefined;
    };

    if (verdict.kind === "skip") {
      // Not sent and no attempt recorded; the event stays stored (decisions §8).
      return settleLeaving({ status: "SKIPPED", attempts: row.attempts, lastError: verdict.reason, at: now });
    }
    if (verdict.kind === "unknown") {
      // The copy may be behind a config change made just before the event: wait a little for it.
      const giveUpAt = row.occurred_at.getTime() + NO_ENDPOINT_GRACE_MS;
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

    // Outside any transaction: the row is ours by its lease.
    const outcome = await deps.sender.send({
      url: verdict.url,
      webhookId: row.webhook_id,
      timestamp: now,
      body: row.payload,
      secrets: signingSecrets(settings!, now),
    });
    const done = deps.clock.now();
    const attempts = row.attempts + 1;
    const judged = judgeAttempt(outcome, attempts, row.created_at, done);
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
      requestBody: row.payload,
      responseStatus: "status" in outcome ? outcome.status : 0,
      delivered: judged.status === "DELIVERED",
      error: "error" in outcome ? outcome.error : null,
      attemptedAt: now,
    };
    if (judged.status === "FAILED") log.warn({ webhookId: row.webhook_id, platformId: row.platform_id, reason: judged.reason }, "webhook not delivered");
    if (judged.status !== "PENDING") return settleLeaving(change, attempt);
    await settleWebhook(deps.db, row.platform_id, row.webhook_id, change, attempt);
    return undefined;
  };

  const claim = (limit: number) =>
    claimDue(deps.db, {
      now: deps.clock.now(),
      leaseMs: deps.leaseMs,
      limit,
      perEndpoint: deps.perEndpoint,
      orderHoldMs: deps.orderHoldMs,
      expected: [...expected.keys()],
    });

  /** Delivers a row, then the rows of its resource handed to this slot; never throws. */
  const guarded = async (first: ClaimedWebhook, settingsOf: (platformId: string) => Promise<WebhookSettings | undefined>, chain: () => boolean): Promise<number> => {
    let row: ClaimedWebhook | undefined = first;
    let n = 0;
    while (row) {
      const current: ClaimedWebhook = row;
      n++;
      row = await deliverOne(current, settingsOf, chain).catch((err: unknown) => {
        // The lease runs out and the row is picked again: at least once.
        log.error({ err, webhookId: current.webhook_id }, "webhook delivery failed unexpectedly");
        return undefined;
      });
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

  function launch(row: ClaimedWebhook, settingsOf: (platformId: string) => Promise<WebhookSettings | undefined>) {
    const platformId = row.platform_id;
    inFlightOf.set(platformId, (inFlightOf.get(platformId) ?? 0) + 1);
    const p: Promise<void> = guarded(row, settingsOf, whileRunning).then(() => {
      inFlight.delete(p);
      const left = (inFlightOf.get(platformId) ?? 1) - 1;
      if (left > 0) inFlightOf.set(platformId, left);
      else inFlightOf.delete(platformId);
      if (inFlight.size === 0 || (deps.perEndpoint - left >= refillPerEndpoint && deps.concurrency - inFlight.size >= refillGlobal)) wake();
    });
    inFlight.add(p);
  }
  function setTimer(ms: number) {
    if (timer !== undefined) timers.clear(timer);
    timer = timers.set(() => {
      timer = undefined;
      wake();
    }, ms);
  }

  /** Claims while there are free slots and due rows; then sleeps until the next row is due. */
  async function fill(): Promise<void> {
    for (;;) {
      const free = deps.concurrency - inFlight.size;
      if (free <= 0) return; // a settling delivery wakes the worker
      const { rows, seen } = await claim(free);
      for (const id of seen) expected.delete(id);
      const settingsOf = settingsCache();
      for (const row of rows) launch(row, settingsOf);
      if (rows.length < free) break;
    }
    if (!running) return;
    const t = performance.now();
    for (const [id, until] of expected) if (until < t) expected.delete(id);
    const recheck = expected.size > 0 ? expectRecheckMs : undefined;
    if (recheck !== undefined) expectRecheckMs = Math.min(expectRecheckMs * 2, EXPECT_RECHECK_MAX_MS);
    if (inFlight.size > 0) {
      // The last delivery to settle runs a pass that sets the timer; until then, only an announced
      // webhook whose transaction has not committed yet needs looking for.
      if (recheck !== undefined) setTimer(recheck);
      return;
    }
    const now = deps.clock.now();
    const next = await nextDueAt(deps.db, now, deps.orderHoldMs);
    let sleep = deps.pollIntervalMs;
    if (next) sleep = Math.min(sleep, Math.max(0, next.getTime() - now.getTime()));
    if (recheck !== undefined) sleep = Math.min(sleep, recheck);
    setTimer(sleep);
  }

  async function runPasses(): Promise<void> {
    do {
      again = false;
      try {
        await fill();
      } catch (err) {
        log.error({ err }, "webhook delivery pass failed");
        if (running) setTimer(PASS_FAILURE_BACKOFF_MS);
        return;
      }
    } while (again && running);
  }

  function wake() {
    if (!running) return;
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
    wake,
    notify(webhookIds) {
      if (!running || webhookIds.length === 0) return;
      expectRecheckMs = 1;
      const until = performance.now() + EXPECT_FOR_MS;
      for (const id of webhookIds) expected.set(id, until);
      wake();
    },
    async runOnce() {
      const { rows } = await claim(deps.concurrency);
      const settingsOf = settingsCache();
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
      await pass;
      await Promise.all([...inFlight]);
      expected.clear();
    },
  };
}
