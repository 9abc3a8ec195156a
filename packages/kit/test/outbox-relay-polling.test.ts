import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from "kysely";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Bus, BusMessage } from "../src/bus/types.js";
import { createLogger } from "../src/log.js";
import { createOutboxRelay, type OutboxRelay } from "../src/outbox/index.js";

// When the relay looks at its outbox, on fake time: the database is a stand-in that answers the
// relay's statements from an in-memory list of unpublished rows (the statements themselves, and
// the ordering and leasing they do, are tested against real databases in outbox.test.ts).

const log = createLogger("relay-polling-test", "silent");

function fakeOutbox() {
  let nextId = 1n;
  const unpublished: bigint[] = [];
  let looks = 0;
  const connection: DatabaseConnection = {
    async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
      if (q.sql.startsWith('with "candidates"')) {
        looks++;
        const rows = unpublished.splice(0).map((id) => ({ id, topic: "corridor.test.v1", key: "k", payload: new Uint8Array(), headers: { "event-id": `Event:${id}` } }));
        return { rows: rows as R[] };
      }
      // Marking rows published, and pruning: nothing the relay reads back matters here.
      return { rows: [], numAffectedRows: 0n };
    },
    streamQuery() {
      throw new Error("not used");
    },
  };
  const driver: Driver = {
    async init() {},
    async acquireConnection() {
      return connection;
    },
    async beginTransaction() {},
    async commitTransaction() {},
    async rollbackTransaction() {},
    async releaseConnection() {},
    async destroy() {},
  };
  const db = new Kysely<any>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return {
    db,
    /** Commits one event (without notifying anyone). */
    add: () => unpublished.push(nextId++),
    looks: () => looks,
  };
}

function recordingBus() {
  const published: string[] = [];
  const bus: Bus = {
    kind: "kafka",
    async publish(messages: BusMessage[]) {
      published.push(...messages.map((m) => m.headers["event-id"]!));
    },
    async subscribe() {
      return { close: async () => {} };
    },
    async close() {},
  };
  return { bus, published };
}

describe("outbox relay: when it looks without being woken", () => {
  let relay: OutboxRelay | undefined;
  beforeEach(() => vi.useFakeTimers());
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    vi.useRealTimers();
  });

  /** A relay with notifications the test sends (notify), or with listening failing. */
  async function start(opts: { listenFails?: boolean; pollIntervalMs?: number } = {}) {
    const outbox = fakeOutbox();
    const { bus, published } = recordingBus();
    let notify: () => void = () => {};
    relay = createOutboxRelay({
      db: outbox.db,
      bus,
      log,
      pollIntervalMs: opts.pollIntervalMs,
      wakeups: async (wake) => {
        if (opts.listenFails) throw new Error("cannot listen");
        notify = wake;
        return async () => {};
      },
    });
    relay.start();
    await vi.advanceTimersByTimeAsync(0);
    return { outbox, published, notify: () => notify() };
  }

  it("publishes a notified event at once, and looks on its own only every 8 s (the safety net)", async () => {
    const { outbox, published, notify } = await start();
    expect(outbox.looks()).toBe(1); // the pass at start
    outbox.add();
    notify();
    await vi.advanceTimersByTimeAsync(0);
    expect(published).toEqual(["Event:1"]);
    expect(outbox.looks()).toBe(2);
    await vi.advanceTimersByTimeAsync(7_999);
    expect(outbox.looks()).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(outbox.looks()).toBe(3);
    await vi.advanceTimersByTimeAsync(64_000);
    expect(outbox.looks()).toBe(11);
  });

  it("once the safety net finds rows nobody announced, looks every 2 s until a notification arrives", async () => {
    const { outbox, published, notify } = await start();
    outbox.add(); // committed, but its notification is lost
    await vi.advanceTimersByTimeAsync(8_000);
    expect(published).toEqual(["Event:1"]);
    const looks = outbox.looks();
    outbox.add();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(published).toEqual(["Event:1", "Event:2"]);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(outbox.looks()).toBe(looks + 3);
    // A notification: listening works again, and the safety net goes back to its pace.
    outbox.add();
    notify();
    await vi.advanceTimersByTimeAsync(0);
    expect(published).toEqual(["Event:1", "Event:2", "Event:3"]);
    const after = outbox.looks();
    await vi.advanceTimersByTimeAsync(7_999);
    expect(outbox.looks()).toBe(after);
    await vi.advanceTimersByTimeAsync(1);
    expect(outbox.looks()).toBe(after + 1);
  });

  it("polls every 200 ms when listening for notifications cannot start", async () => {
    const { outbox, published } = await start({ listenFails: true });
    outbox.add();
    await vi.advanceTimersByTimeAsync(200);
    expect(published).toEqual(["Event:1"]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(outbox.looks()).toBe(7);
  });

  it("keeps an explicit poll interval", async () => {
    const { outbox } = await start({ pollIntervalMs: 500 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(outbox.looks()).toBe(3);
  });
});
