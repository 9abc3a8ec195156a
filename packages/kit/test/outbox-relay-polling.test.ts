import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from "kysely";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Bus, BusMessage } from "../src/bus/types.js";
import { createLogger } from "../src/log.js";
import { createOutboxRelay, type OutboxRelay } from "../src/outbox/index.js";

// When the relay looks at its outbox, on fake time: the database is a stand-in that answers the
// relay's statements from an in-memory list of unpublished rows (the statements themselves, and
// the ordering and leasing they do, are tested against real databases in outbox.test.ts).

const log = createLogger("relay-polling-test", "silent");

/** A statement the relay sent: a pass (marking the rows in `marks`, if any) or a mark alone. */
type Sent = { kind: "pass"; marks: string[] } | { kind: "mark"; marks: string[] };

/** The ids of the relay's array parameter ('{1,2}'), as strings. */
const idsParam = (q: CompiledQuery) => {
  const p = q.parameters.find((v) => typeof v === "string" && v.startsWith("{"));
  return p === undefined || p === "{}" ? [] : (p as string).slice(1, -1).split(",");
};

function fakeOutbox(batchSize = Number.POSITIVE_INFINITY) {
  let nextId = 1n;
  const unpublished: bigint[] = [];
  const sent: Sent[] = [];
  const connection: DatabaseConnection = {
    async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
      if (q.sql.includes('"candidates" as (')) {
        sent.push({ kind: "pass", marks: q.sql.startsWith('with "marked"') ? idsParam(q) : [] });
        const rows = unpublished.splice(0, batchSize).map((id) => ({ id, topic: "corridor.test.v1", key: "k", payload: new Uint8Array(), headers: { "event-id": `Event:${id}` }, bound: null }));
        // The lease is joined to `bound`: one row of nulls when nothing was leased.
        return { rows: (rows.length > 0 ? rows : [{ id: null, bound: null }]) as R[] };
      }
      if (q.sql.startsWith("update") && q.sql.includes('"published_at" = now()')) {
        sent.push({ kind: "mark", marks: idsParam(q) });
        return { rows: [], numAffectedRows: 0n };
      }
      // Pruning (once in 10 minutes), giving leases back: not counted, nothing read back matters.
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
    /** Passes: looks for rows, each one statement. */
    looks: () => sent.filter((x) => x.kind === "pass").length,
    /** The relay's passes and marks, in order. */
    sent,
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
  async function start(opts: { listenFails?: boolean; pollIntervalMs?: number; batchSize?: number; bus?: Bus } = {}) {
    const outbox = fakeOutbox(opts.batchSize);
    const recording = recordingBus();
    const { published } = recording;
    const bus = opts.bus ?? recording.bus;
    let notify: () => void = () => {};
    relay = createOutboxRelay({
      db: outbox.db,
      bus,
      log,
      batchSize: opts.batchSize,
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

  it("spends one statement per pass: the lease marks the rows the previous pass published", async () => {
    const { outbox, published, notify } = await start();
    for (let n = 1; n <= 3; n++) {
      outbox.add();
      notify();
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(published).toEqual(["Event:1", "Event:2", "Event:3"]);
    // The pass at start, then one per notification; each marks what the one before published.
    expect(outbox.sent).toEqual([
      { kind: "pass", marks: [] },
      { kind: "pass", marks: [] },
      { kind: "pass", marks: ["1"] },
      { kind: "pass", marks: ["2"] },
    ]);
  });

  it("marks the last pass's rows with a statement of their own 1 s later when no pass comes, and never twice", async () => {
    const { outbox, published, notify } = await start();
    outbox.add();
    outbox.add();
    notify();
    await vi.advanceTimersByTimeAsync(999);
    expect(published).toEqual(["Event:1", "Event:2"]);
    expect(outbox.sent.filter((x) => x.kind === "mark")).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(outbox.sent.slice(2)).toEqual([{ kind: "mark", marks: ["1", "2"] }]);
    // The next pass has nothing left to mark, and the 8 s safety net spends nothing more.
    await vi.advanceTimersByTimeAsync(7_000);
    expect(outbox.sent.slice(2)).toEqual([{ kind: "mark", marks: ["1", "2"] }, { kind: "pass", marks: [] }]);
  });

  it("follows a pass only after a full batch: no empty lease ends a drain", async () => {
    const { outbox, published, notify } = await start({ batchSize: 2 });
    for (let n = 0; n < 3; n++) outbox.add();
    notify();
    await vi.advanceTimersByTimeAsync(0);
    expect(published).toEqual(["Event:1", "Event:2", "Event:3"]);
    // At start, then 2 rows (a full batch), then 1: done.
    expect(outbox.sent).toEqual([
      { kind: "pass", marks: [] },
      { kind: "pass", marks: [] },
      { kind: "pass", marks: ["1", "2"] },
    ]);
    outbox.add();
    outbox.add();
    notify();
    await vi.advanceTimersByTimeAsync(0);
    // A full batch is followed by a pass that leases nothing: it is the batch's mark, not an extra statement.
    expect(outbox.sent.slice(3)).toEqual([
      { kind: "pass", marks: ["3"] },
      { kind: "pass", marks: ["4", "5"] },
    ]);
  });

  it("passes again for a notification that came after its lease was sent, not for one that came before", async () => {
    const held: (() => void)[] = [];
    const bus: Bus = {
      kind: "kafka",
      publish: () => new Promise<void>((resolve) => held.push(resolve)),
      async subscribe() {
        return { close: async () => {} };
      },
      async close() {},
    };
    const { outbox, notify } = await start({ bus });
    // Two notifications before the pass: its lease sees both commits.
    outbox.add();
    notify();
    outbox.add();
    notify();
    await vi.advanceTimersByTimeAsync(0);
    expect(outbox.looks()).toBe(2);
    expect(held).toHaveLength(1);
    held.shift()!();
    await vi.advanceTimersByTimeAsync(0);
    expect(outbox.looks()).toBe(2);
    // A commit notified while the pass publishes: the lease was sent before it, so one more pass.
    outbox.add();
    notify();
    await vi.advanceTimersByTimeAsync(0);
    expect(outbox.looks()).toBe(3);
    outbox.add();
    notify();
    held.shift()!();
    await vi.advanceTimersByTimeAsync(0);
    expect(outbox.looks()).toBe(4);
    held.shift()!();
    await vi.advanceTimersByTimeAsync(0);
    expect(outbox.looks()).toBe(4);
    expect(held).toHaveLength(0);
  });

  it("marks the last pass's rows when it stops", async () => {
    const { outbox, published, notify } = await start();
    outbox.add();
    notify();
    await vi.advanceTimersByTimeAsync(0);
    expect(published).toEqual(["Event:1"]);
    await relay!.stop();
    relay = undefined;
    // stop()'s drain is a pass, and it carries the mark.
    expect(outbox.sent.slice(2)).toEqual([{ kind: "pass", marks: ["1"] }]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(outbox.sent).toHaveLength(3);
  });
});
