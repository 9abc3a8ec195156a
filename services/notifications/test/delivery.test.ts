import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createRouterTransport } from "@connectrpc/connect";
import { createLogger, ManualClock, type DatabaseHandle } from "@corridor/kit";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { PlatformConfigSchema } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { LedgerEventSchema, type LedgerEvent } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { listDeliveries } from "../src/data/deliveries-repo.js";
import { enqueueWebhook, listQueued } from "../src/data/queue-repo.js";
import { createHttpSender } from "../src/clients/standard-webhooks.js";
import { createDeliveryWorker, type Timers } from "../src/workers/delivery.js";
import { retryDelayMs } from "../src/domain/event-webhooks.js";
import { configUpdated, newPlatformId, openTestDatabase, platformCreated, startNotifications, testSigningKey, type NotificationsUnderTest } from "./support.js";

// The delivery worker (decisions §8, issue "Hardening" defect 5): woken by enqueues, concurrent
// within per-endpoint and global bounds, per-resource order, no double send, no backlog released
// to a newly set endpoint. Nothing here waits on a poll: the safety poll is an hour, and every wait
// is on the receiver seeing a request.

const HOUR = 3_600_000;
/** Every platform here is a sandbox one: its receiver on 127.0.0.1 is allowed (the default operator switch). */
const sandboxPlatform = async () => "SANDBOX" as const;

interface Hit {
  webhookId: string;
  type: string;
  resource: string;
  /** What the receiver answered. */
  status: number;
}

/**
 * A platform's receiver on 127.0.0.1. `answer` decides each reply (and may hold it); `until(n)`
 * resolves once n requests were answered.
 */
async function startReceiver() {
  const hits: Hit[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const state = {
    inFlight: 0,
    maxInFlight: 0,
    answer: async (_hit: Omit<Hit, "status">): Promise<number> => 204,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const seen = { webhookId: String(req.headers["webhook-id"]), type: body.type as string, resource: body.data?.id as string };
      const status = await state.answer(seen);
      state.inFlight--;
      hits.push({ ...seen, status });
      res.writeHead(status).end();
      for (const w of [...waiters]) {
        if (hits.length >= w.n) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    hits,
    state,
    until: (n: number) => (hits.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * Holds every request until as many are in flight as the bounds allow for what is left, then
 * answers them all: a worker that posts one at a time would never get there (the test times out),
 * and one that exceeds a bound shows in maxInFlight.
 */
function gate(receivers: { r: Receiver; total: number }[], perEndpoint: number, global: number) {
  const held: { r: Receiver; release: () => void }[] = [];
  const answered = new Map<Receiver, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const target = () =>
    Math.min(
      global,
      receivers.reduce((sum, { r, total }) => sum + Math.min(perEndpoint, total - (answered.get(r) ?? 0)), 0),
    );
  for (const { r } of receivers) {
    r.state.answer = () =>
      new Promise<number>((resolve) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        held.push({ r, release: () => resolve(204) });
        if (held.length === target()) {
          for (const h of held.splice(0)) {
            answered.set(h.r, (answered.get(h.r) ?? 0) + 1);
            inFlight--;
            h.release();
          }
        }
      });
  }
  return { maxInFlight: () => maxInFlight };
}

function transactionEvent(platformId: string, eventType: string, txId: string, at: Date): LedgerEvent {
  const ts = timestampFromDate(at);
  const usd = { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 };
  return create(LedgerEventSchema, {
    eventId: `Event:${crypto.randomUUID()}`,
    occurredAt: ts,
    platformId,
    eventType,
    payload: {
      case: "transactionChanged",
      value: {
        transaction: {
          id: txId,
          status: eventType.replace(/^OUTGOING_PAYMENT_/, ""),
          type: "OUTGOING",
          amount: 1000n,
          sentAmount: 1000n,
          currency: usd,
          sentCurrency: usd,
          exchangeRate: "1",
          createdAt: ts,
          updatedAt: ts,
        },
      },
    },
  });
}

/** Timers the test fires by hand: the worker's sleeps are recorded, never waited on. */
function manualTimers() {
  const pending = new Map<number, { fn: () => void; ms: number }>();
  const listeners: ((ms: number) => void)[] = [];
  let next = 0;
  const timers: Timers = {
    set(fn, ms) {
      const id = next++;
      pending.set(id, { fn, ms });
      for (const l of listeners.splice(0)) l(ms);
      return id;
    },
    clear: (id) => void pending.delete(id as number),
  };
  return {
    timers,
    /** Resolves with the delay of the next timer the worker sets. */
    nextSleep: () => new Promise<number>((resolve) => listeners.push(resolve)),
    fireAll() {
      const due = [...pending.values()];
      pending.clear();
      for (const t of due) t.fn();
    },
  };
}

/**
 * A delivery worker whose short timers (its looks for announced rows, at most 50 ms apart; its
 * refill) fire until `timersOff()`, and whose longer ones (the safety poll, retries) never do: no
 * sweep comes to the rescue, as under a burst where the worker never goes idle. Its POSTs time
 * out after a minute, so a POST a test holds does not end (and idle the worker) by itself.
 */
function workerWithShortTimers(db: NotificationsUnderTest["db"], clock: ManualClock, bounds: { concurrency: number; perEndpoint: number }) {
  let on = true;
  const live = new Set<NodeJS.Timeout>();
  const worker = createDeliveryWorker({
    db,
    sender: createHttpSender({ timeoutMs: 60_000, environmentOf: sandboxPlatform , signingKey: testSigningKey }),
    clock,
    log: createLogger("delivery-test", "silent"),
    pollIntervalMs: 3_600_000,
    leaseMs: 120_000,
    ...bounds,
    orderHoldMs: 3_600_000,
    timers: {
      set: (fn, ms) => {
        if (!on || ms > 100) return undefined;
        const h = setTimeout(() => {
          live.delete(h);
          fn();
        }, ms);
        live.add(h);
        return h;
      },
      clear: (h) => {
        clearTimeout(h as NodeJS.Timeout);
        live.delete(h as NodeJS.Timeout);
      },
    },
  });
  return {
    worker,
    /** From now on no timer fires, those already set included. */
    timersOff() {
      on = false;
      for (const h of live) clearTimeout(h);
      live.clear();
    },
  };
}

describe("webhook delivery worker", () => {
  const clock = new ManualClock(new Date());
  let handle: DatabaseHandle;
  let close: () => Promise<void>;
  const opened: NotificationsUnderTest[] = [];
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    const db = await openTestDatabase();
    handle = db.handle;
    close = db.close;
  });
  afterEach(async () => {
    for (const n of opened.splice(0)) await n.worker.stop();
    // Nothing a test left retrying is picked up by the next one.
    if (handle) {
      await handle.forSchema<any>("notifications").updateTable("webhook_queue").set({ status: "FAILED", last_error: "test over" }).where("status", "=", "PENDING").execute();
    }
    for (const r of receivers.splice(0)) await r.close();
  });
  afterAll(async () => {
    await close();
  });

  async function notifications(env: Record<string, string> = {}, transports = {}): Promise<NotificationsUnderTest> {
    const n = await startNotifications(handle, clock, { NOTIFICATIONS_WEBHOOK_TIMEOUT_MS: "5000", NOTIFICATIONS_DELIVERY_POLL_MS: String(HOUR), ...env }, transports);
    opened.push(n);
    return n;
  }
  async function receiver(): Promise<Receiver> {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  }
  async function platformWith(n: NotificationsUnderTest, url: string): Promise<string> {
    const platformId = newPlatformId();
    await n.deliver(configUpdated(platformId, url, clock.now()));
    return platformId;
  }
  async function drain(n: NotificationsUnderTest) {
    while ((await n.worker.runOnce()) > 0);
  }

  it("delivers a webhook as soon as its consumer commits, without waiting for a poll", async () => {
    const n = await notifications();
    const r = await receiver();
    const platformId = await platformWith(n, r.url);
    n.worker.start();

    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:w1", clock.now()));

    await r.until(1);
    await n.worker.stop(); // waits for the delivery to settle
    expect(r.hits[0]).toMatchObject({ type: "OUTGOING_PAYMENT_COMPLETED", resource: "Transaction:w1", status: 204 });
    expect((await listQueued(n.db, platformId))[0]).toMatchObject({ status: "DELIVERED", attempts: 1 });
  });

  it("keeps looking for an announced webhook until its transaction has committed", async () => {
    const n = await notifications();
    const r = await receiver();
    const platformId = await platformWith(n, r.url);
    n.worker.start();
    const webhookId = `Webhook:${crypto.randomUUID()}`;

    // The announcement comes first, the row only afterwards (as when the consumer's commit is slow).
    n.worker.notify([{ webhookId, platformId, resourceKey: "Transaction:late" }]);
    const envelope = { id: webhookId, type: "OUTGOING_PAYMENT_COMPLETED", timestamp: clock.now().toISOString(), data: { id: "Transaction:late" } };
    await enqueueWebhook(n.db, { webhookId, platformId, sourceEventId: `Event:${crypto.randomUUID()}`, type: envelope.type, payload: JSON.stringify(envelope), at: clock.now() });

    await r.until(1);
    expect(r.hits[0]).toMatchObject({ webhookId, status: 204 });
  });

  it("holds at most NOTIFICATIONS_DELIVERY_PER_ENDPOINT POSTs in flight per endpoint and NOTIFICATIONS_DELIVERY_CONCURRENCY in all", async () => {
    const n = await notifications({ NOTIFICATIONS_DELIVERY_PER_ENDPOINT: "3", NOTIFICATIONS_DELIVERY_CONCURRENCY: "5" });
    const [a, b, c] = [await receiver(), await receiver(), await receiver()];
    const each = 7;
    const g = gate(
      [a, b, c].map((r) => ({ r, total: each })),
      3,
      5,
    );
    for (const r of [a, b, c]) {
      const platformId = await platformWith(n, r.url);
      for (let i = 0; i < each; i++) await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", `Transaction:${crypto.randomUUID()}`, clock.now()));
    }

    n.worker.start();
    await Promise.all([a, b, c].map((r) => r.until(each)));

    for (const r of [a, b, c]) {
      expect(r.hits).toHaveLength(each);
      expect(r.state.maxInFlight).toBeLessThanOrEqual(3);
    }
    // The gate only answers once the bound is reached, so reaching the end proves the worker ran
    // that many side by side; never more than the global bound.
    expect(g.maxInFlight()).toBe(5);
    expect(Math.max(...[a, b, c].map((r) => r.state.maxInFlight))).toBe(3);
  });

  it("delivers a resource's webhooks in order: COMPLETED waits while the PENDING before it is retried, other resources do not", async () => {
    const n = await notifications();
    const r = await receiver();
    const platformId = await platformWith(n, r.url);
    let failFirst = true;
    r.state.answer = async (hit) => {
      if (hit.type === "OUTGOING_PAYMENT_PENDING" && hit.resource === "Transaction:o1" && failFirst) {
        failFirst = false;
        return 503;
      }
      return 204;
    };
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_PENDING", "Transaction:o1", clock.now()));
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:o1", clock.now()));
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_PENDING", "Transaction:o2", clock.now()));

    await drain(n);
    expect(r.hits.map((h) => `${h.resource} ${h.type} ${h.status}`).sort()).toEqual([
      "Transaction:o1 OUTGOING_PAYMENT_PENDING 503",
      "Transaction:o2 OUTGOING_PAYMENT_PENDING 204",
    ]);

    // The running worker sends the retry when it is due, and COMPLETED right after it is delivered.
    n.worker.start();
    clock.advance(retryDelayMs(1));
    n.worker.wake();
    await r.until(4);
    expect(r.hits.slice(2).map((h) => `${h.resource} ${h.type} ${h.status}`)).toEqual([
      "Transaction:o1 OUTGOING_PAYMENT_PENDING 204",
      "Transaction:o1 OUTGOING_PAYMENT_COMPLETED 204",
    ]);
  });

  it("sends a resource's next webhook as the one in flight settles, even when it was announced before that one was claimed and committed after", async () => {
    const n = await notifications();
    const r = await receiver();
    const platformId = await platformWith(n, r.url);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let releaseOther!: () => void;
    const heldOther = new Promise<void>((resolve) => (releaseOther = resolve));
    r.state.answer = async (hit) => {
      if (hit.resource === "Transaction:other") await heldOther;
      else if (hit.type === "OUTGOING_PAYMENT_PENDING") await held;
      return 204;
    };
    const { worker, timersOff } = workerWithShortTimers(n.db, clock, { concurrency: 8, perEndpoint: 8 });
    worker.start();
    const row = (type: string, resource: string) => {
      const webhookId = `Webhook:${crypto.randomUUID()}`;
      const envelope = { id: webhookId, type, timestamp: clock.now().toISOString(), data: { id: resource } };
      return {
        webhookId,
        announce: { webhookId, platformId, resourceKey: resource },
        enqueue: () => enqueueWebhook(n.db, { webhookId, platformId, sourceEventId: `Event:${crypto.randomUUID()}`, type, payload: JSON.stringify(envelope), at: clock.now() }),
      };
    };
    try {
      // Another delivery stays in flight throughout, as under a burst: the worker never goes idle.
      const other = row("OUTGOING_PAYMENT_PENDING", "Transaction:other");
      await other.enqueue();
      worker.notify([other.announce]);
      await vi.waitFor(() => expect(r.state.inFlight).toBe(1), { timeout: 5_000, interval: 5 });

      const first = row("OUTGOING_PAYMENT_PENDING", "Transaction:r1");
      const second = row("OUTGOING_PAYMENT_COMPLETED", "Transaction:r1");
      await first.enqueue();
      // Both announced together (one consumer batch); the second's transaction commits only once
      // the first is claimed and in flight: the worker's looks for it then find it held back.
      worker.notify([first.announce, second.announce]);
      await vi.waitFor(() => expect(r.state.inFlight).toBe(2), { timeout: 5_000, interval: 5 });
      await second.enqueue();
      // Time for the worker's looks for the announced row (every few ms, at most 50 apart).
      await new Promise((resolve) => setTimeout(resolve, 300));
      // From here no timer fires: only the first's settle can hand its slot to the second.
      timersOff();
      release();
      await r.until(2);
      expect(r.hits.map((h) => h.webhookId)).toEqual([first.webhookId, second.webhookId]);
    } finally {
      releaseOther();
      await worker.stop();
    }
  });

  it("claims for a slot that frees while an endpoint's bound holds an announced webhook back, without waiting for a quarter of the slots or a poll", async () => {
    const n = await notifications();
    const r = await receiver();
    const platformId = await platformWith(n, r.url);
    const releases = new Map<string, () => void>();
    const holds = new Map<string, Promise<void>>();
    const hold = (resource: string) => holds.set(resource, new Promise<void>((resolve) => releases.set(resource, resolve)));
    r.state.answer = async (hit) => {
      await holds.get(hit.resource);
      return 204;
    };
    const { worker } = workerWithShortTimers(n.db, clock, { concurrency: 16, perEndpoint: 8 });
    worker.start();
    const announce = async (resource: string) => {
      const webhookId = `Webhook:${crypto.randomUUID()}`;
      const envelope = { id: webhookId, type: "OUTGOING_PAYMENT_PENDING", timestamp: clock.now().toISOString(), data: { id: resource } };
      await enqueueWebhook(n.db, { webhookId, platformId, sourceEventId: `Event:${crypto.randomUUID()}`, type: envelope.type, payload: JSON.stringify(envelope), at: clock.now() });
      worker.notify([{ webhookId, platformId, resourceKey: resource }]);
      return webhookId;
    };
    const busy = Array.from({ length: 8 }, (_, i) => `Transaction:busy${i}`);
    try {
      for (const resource of busy) {
        hold(resource);
        await announce(resource);
      }
      await vi.waitFor(() => expect(r.state.inFlight).toBe(8), { timeout: 5_000, interval: 5 });
      // The endpoint's eight slots are taken: this one is seen by the next claim and held back.
      const waiting = await announce("Transaction:waiting");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(r.state.inFlight).toBe(8);
      // One slot frees (7 of 8 still busy: less than the quarter a claim waits for).
      releases.get(busy[0]!)!();
      await r.until(2);
      expect(r.hits.map((h) => h.webhookId)).toContain(waiting);
    } finally {
      for (const release of releases.values()) release();
      await worker.stop();
    }
  });

  it("holds a webhook behind an earlier one that keeps failing for at most NOTIFICATIONS_ORDER_HOLD_MS, then sends it", async () => {
    const n = await notifications({ NOTIFICATIONS_ORDER_HOLD_MS: String(10 * 60_000) });
    const r = await receiver();
    const platformId = await platformWith(n, r.url);
    r.state.answer = async (hit) => (hit.type === "OUTGOING_PAYMENT_PENDING" ? 500 : 204);
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_PENDING", "Transaction:h1", clock.now()));
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:h1", clock.now()));

    await drain(n);
    clock.advance(10 * 60_000 - 1000);
    await drain(n);
    expect(r.hits.filter((h) => h.type === "OUTGOING_PAYMENT_COMPLETED")).toEqual([]);
    expect(r.hits.length).toBeGreaterThan(1); // PENDING retried meanwhile

    clock.advance(1000);
    await drain(n);
    expect(r.hits.filter((h) => h.type === "OUTGOING_PAYMENT_COMPLETED")).toHaveLength(1);
    const rows = await listQueued(n.db, platformId);
    expect(rows.map((q) => q.status)).toEqual(["PENDING", "DELIVERED"]);
  });

  it("never sends a webhook twice with two workers on one database", async () => {
    const n1 = await notifications({ NOTIFICATIONS_DELIVERY_PER_ENDPOINT: "4" });
    const n2 = await notifications({ NOTIFICATIONS_DELIVERY_PER_ENDPOINT: "4" });
    const r = await receiver();
    const platformId = await platformWith(n1, r.url);
    n1.worker.start();
    n2.worker.start();
    const total = 40;
    for (let i = 0; i < total; i++) {
      const n = i % 2 === 0 ? n1 : n2;
      // Ten resources with four webhooks each: order and leases both at play.
      await n.handle(n.ledgerConsumer, transactionEvent(platformId, i % 4 === 3 ? "OUTGOING_PAYMENT_COMPLETED" : "OUTGOING_PAYMENT_PROCESSING", `Transaction:d${i % 10}`, clock.now()));
    }
    await r.until(total);
    await n1.worker.stop();
    await n2.worker.stop();

    const ids = r.hits.map((h) => h.webhookId);
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
    expect(r.state.maxInFlight).toBeLessThanOrEqual(4);
    const rows = await listQueued(n1.db, platformId);
    expect(rows.every((q) => q.status === "DELIVERED" && q.attempts === 1)).toBe(true);
    // Per resource, the receiver saw them in the order they were enqueued.
    for (let k = 0; k < 10; k++) {
      const enqueued = rows.filter((q) => JSON.parse(q.payload).data.id === `Transaction:d${k}`).map((q) => q.webhook_id);
      expect(r.hits.filter((h) => h.resource === `Transaction:d${k}`).map((h) => h.webhookId)).toEqual(enqueued);
    }
  });

  it("does not release to a newly set endpoint the webhooks of events that occurred before it was set", async () => {
    const n = await notifications();
    const r = await receiver();
    const platformId = newPlatformId();
    await n.deliver(platformCreated(platformId, "", clock.now()));
    clock.advance(1000);
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:b1", clock.now()));
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:b2", clock.now()));

    clock.advance(1000);
    await n.deliver(configUpdated(platformId, r.url, clock.now()));
    clock.advance(1000);
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:b3", clock.now()));
    n.worker.start();
    await r.until(1);
    await n.worker.stop();

    expect(r.hits.map((h) => h.resource)).toEqual(["Transaction:b3"]);
    const rows = await listQueued(n.db, platformId);
    // Every event stays stored; the two before the endpoint are SKIPPED without an attempt.
    expect(rows.map((q) => [JSON.parse(q.payload).data.id, q.status, q.attempts])).toEqual([
      ["Transaction:b1", "SKIPPED", 0],
      ["Transaction:b2", "SKIPPED", 0],
      ["Transaction:b3", "DELIVERED", 1],
    ]);
    expect(rows[0]!.last_error).toContain("before the webhookEndpoint was set");
    expect((await listDeliveries(n.db, platformId)).map((d) => d.webhookId)).toEqual([rows[2]!.webhook_id]);
  });

  it("does not release to a changed endpoint the webhooks of events before the change, even while they were retrying", async () => {
    const n = await notifications();
    const [oldR, newR] = [await receiver(), await receiver()];
    oldR.state.answer = async () => 500;
    const platformId = await platformWith(n, oldR.url);
    clock.advance(1000);
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:c1", clock.now()));
    await drain(n);
    expect(oldR.hits).toHaveLength(1);

    clock.advance(1000);
    await n.deliver(configUpdated(platformId, newR.url, clock.now()));
    clock.advance(1000);
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:c2", clock.now()));
    // A later PATCH of other fields (same endpoint) does not move the time the endpoint was set.
    clock.advance(1000);
    await n.deliver(configUpdated(platformId, newR.url, clock.now()));
    clock.advance(retryDelayMs(1));
    await drain(n);

    expect(newR.hits.map((h) => h.resource)).toEqual(["Transaction:c2"]);
    expect(oldR.hits).toHaveLength(1);
    expect((await listQueued(n.db, platformId)).map((q) => q.status)).toEqual(["SKIPPED", "DELIVERED"]);
  });

  it("skips at once an event of a platform auth-sessions says has no endpoint, and delivers one that follows an endpoint the copy has not heard of yet", async () => {
    const current = new Map<string, { webhookEndpoint: string; updatedAt: Date }>();
    const authSessions = createRouterTransport((router) =>
      router.service(AuthSessionsService, {
        async getPlatformConfig(req) {
          const c = current.get(req.platformId)!;
          return { config: create(PlatformConfigSchema, { platformId: req.platformId, webhookEndpoint: c.webhookEndpoint, updatedAt: timestampFromDate(c.updatedAt), createdAt: timestampFromDate(c.updatedAt) }) };
        },
      }),
    );
    const n = await notifications({}, { "auth-sessions": authSessions });
    const r = await receiver();
    const none = newPlatformId();
    await n.deliver(platformCreated(none, "", clock.now()));
    current.set(none, { webhookEndpoint: "", updatedAt: clock.now() });
    const lagging = newPlatformId();
    await n.deliver(platformCreated(lagging, "", clock.now()));
    clock.advance(1000);
    // PATCH /config set the endpoint; its event has not reached notifications when the payment happens.
    current.set(lagging, { webhookEndpoint: r.url, updatedAt: clock.now() });
    clock.advance(1000);
    await n.handle(n.ledgerConsumer, transactionEvent(none, "OUTGOING_PAYMENT_COMPLETED", "Transaction:n1", clock.now()));
    await n.handle(n.ledgerConsumer, transactionEvent(lagging, "OUTGOING_PAYMENT_COMPLETED", "Transaction:l1", clock.now()));

    await drain(n);

    expect((await listQueued(n.db, none)).map((q) => [q.status, q.last_error])).toEqual([["SKIPPED", "no webhookEndpoint was set when it occurred"]]);
    expect(r.hits.map((h) => h.resource)).toEqual(["Transaction:l1"]);
    expect((await listQueued(n.db, lagging)).map((q) => q.status)).toEqual(["DELIVERED"]);
  });

  it("without auth-sessions, waits a little for an endpoint copy that may lag, then skips", async () => {
    const n = await notifications();
    const platformId = newPlatformId();
    await n.deliver(platformCreated(platformId, "", clock.now()));
    clock.advance(1000);
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:g1", clock.now()));
    await drain(n);
    expect((await listQueued(n.db, platformId))[0]).toMatchObject({ status: "PENDING", attempts: 0 });
    for (let i = 0; i < 10; i++) {
      clock.advance(60_000);
      await drain(n);
    }
    expect((await listQueued(n.db, platformId))[0]).toMatchObject({ status: "SKIPPED", attempts: 0 });
    expect(await listDeliveries(n.db, platformId)).toEqual([]);
  });

  it("sleeps until the next retry is due (not a poll), and sends it then", async () => {
    const n = await notifications();
    const r = await receiver();
    const platformId = await platformWith(n, r.url);
    let status = 500;
    r.state.answer = async () => status;
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:s1", clock.now()));
    const t = manualTimers();
    const worker = createDeliveryWorker({
      db: n.db,
      sender: createHttpSender({ timeoutMs: 5000, environmentOf: sandboxPlatform , signingKey: testSigningKey }),
      clock,
      log: createLogger("delivery-test", "silent"),
      pollIntervalMs: HOUR,
      leaseMs: 35_000,
      concurrency: 4,
      perEndpoint: 2,
      orderHoldMs: HOUR,
      timers: t.timers,
    });
    try {
      const slept = t.nextSleep();
      worker.start();
      await r.until(1);
      expect(await slept).toBe(retryDelayMs(1));

      status = 204;
      clock.advance(retryDelayMs(1));
      t.fireAll();
      await r.until(2);
      expect(r.hits.map((h) => h.status)).toEqual([500, 204]);
    } finally {
      await worker.stop();
    }
  });

  it("after a restart, sends every due webhook at once up to the bound, those of a crashed worker included", async () => {
    const n = await notifications({ NOTIFICATIONS_DELIVERY_PER_ENDPOINT: "8" });
    const r = await receiver();
    const platformId = await platformWith(n, r.url);
    const total = 30;
    for (let i = 0; i < total; i++) await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", `Transaction:${crypto.randomUUID()}`, clock.now()));
    // A third were leased by a worker that died: their leases have run out.
    const rows = await listQueued(n.db, platformId);
    await n.db
      .updateTable("webhook_queue")
      .set({ leased_until: new Date(clock.now().getTime() - 1) })
      .where(
        "webhook_id",
        "in",
        rows.slice(0, 10).map((q) => q.webhook_id),
      )
      .execute();
    const g = gate([{ r, total }], 8, 64);

    n.worker.start();
    await r.until(total);

    expect(new Set(r.hits.map((h) => h.webhookId)).size).toBe(total);
    expect(g.maxInFlight()).toBe(8);
  });
});
