import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { configVersion, ManualClock, memoryConfigBoard, topics, type BusMessage, type ConfigBoard, type DatabaseHandle } from "@corridor/kit";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { PlatformConfigSchema } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { listQueued } from "../src/data/queue-repo.js";
import { newPlatformId, openTestDatabase, platformCreated, startNotifications, type NotificationsUnderTest } from "./support.js";

// Issue 28: an event of a platform without a webhook endpoint costs notifications no row, no
// statement and no transaction (the webhook consumers' admit reads the platform's config through
// the config board, once per fetched batch). The rule, and why an endpoint saved while events are
// being handled loses none produced after it: docs/events.md, "Which events an endpoint receives".

function ledgerMessage(platformId: string, txId: string, at: Date): BusMessage {
  const ts = timestampFromDate(at);
  const usd = { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 };
  const event = create(LedgerEventSchema, {
    eventId: `Event:${crypto.randomUUID()}`,
    occurredAt: ts,
    platformId,
    eventType: "OUTGOING_PAYMENT_COMPLETED",
    payload: {
      case: "transactionChanged",
      value: { transaction: { id: txId, status: "COMPLETED", type: "OUTGOING", amount: 1000n, sentAmount: 1000n, currency: usd, sentCurrency: usd, exchangeRate: "1", createdAt: ts, updatedAt: ts } },
    },
  });
  return { topic: topics.ledgerTransactions, key: platformId, value: toBinary(LedgerEventSchema, event), headers: { "event-id": event.eventId } };
}

async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} did not happen`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("events of a platform without endpoint (admitted at enqueue)", () => {
  const clock = new ManualClock(new Date());
  /** auth-sessions' config per platform (absent: it cannot answer), and how often it was asked. */
  const current = new Map<string, { webhookEndpoint: string; updatedAt: Date }>();
  let asked = 0;
  const authSessions = createRouterTransport((router) =>
    router.service(AuthSessionsService, {
      async getPlatformConfig(req) {
        asked++;
        const c = current.get(req.platformId);
        if (!c) throw new ConnectError("auth-sessions is unreachable", Code.Unavailable);
        return { config: create(PlatformConfigSchema, { platformId: req.platformId, webhookEndpoint: c.webhookEndpoint, updatedAt: timestampFromDate(c.updatedAt), createdAt: timestampFromDate(c.updatedAt) }) };
      },
    }),
  );
  let board: ConfigBoard;
  let handle: DatabaseHandle;
  let close: () => Promise<void>;
  const opened: NotificationsUnderTest[] = [];
  const servers: ReturnType<typeof createServer>[] = [];

  beforeAll(async () => {
    ({ handle, close } = await openTestDatabase());
  });
  afterEach(async () => {
    for (const n of opened.splice(0)) await n.worker.stop();
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  });
  afterAll(async () => {
    await close();
  });

  async function notifications(): Promise<NotificationsUnderTest> {
    board = memoryConfigBoard();
    const n = await startNotifications(handle, clock, { NOTIFICATIONS_DELIVERY_POLL_MS: "3600000" }, { "auth-sessions": authSessions }, undefined, { configBoard: board });
    opened.push(n);
    return n;
  }
  /** A platform as auth-sessions creates it: its config, the board's version, and notifications' settings row. */
  async function platform(n: NotificationsUnderTest, webhookEndpoint = ""): Promise<string> {
    const platformId = newPlatformId();
    const at = clock.now();
    current.set(platformId, { webhookEndpoint, updatedAt: at });
    await board.offer(platformId, configVersion(at));
    await n.deliver(platformCreated(platformId, webhookEndpoint, at));
    return platformId;
  }
  /** PATCH /config as auth-sessions makes it: mark the board, commit, publish; resolved when the PATCH would answer. */
  async function saveEndpoint(platformId: string, url: string, between: () => Promise<void> = async () => undefined): Promise<Date> {
    await board.markChanging(platformId);
    await between();
    const at = clock.now();
    current.set(platformId, { webhookEndpoint: url, updatedAt: at });
    await between();
    await board.publish(platformId, configVersion(at));
    return at;
  }
  async function receiver(): Promise<{ url: string; hits: Map<string, number> }> {
    const hits = new Map<string, number>();
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const id = JSON.parse(Buffer.concat(chunks).toString("utf8")).data.id as string;
        hits.set(id, (hits.get(id) ?? 0) + 1);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    servers.push(server);
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, hits };
  }

  it("writes no row and sends no statement or transaction for an event of a platform without endpoint", async () => {
    const n = await notifications();
    const none = await platform(n);
    const before = { ...n.consumed };
    asked = 0;
    clock.advance(1000);
    // A fetched batch of five, then three fetched one by one.
    await n.consume(Array.from({ length: 5 }, (_, i) => ledgerMessage(none, `Transaction:none${i}`, clock.now())));
    for (let i = 5; i < 8; i++) await n.consume([ledgerMessage(none, `Transaction:none${i}`, clock.now())]);
    expect(n.consumed).toEqual(before);
    expect(await listQueued(n.db, none)).toEqual([]);
    // The board vouches for the copy: auth-sessions was asked once, for the first batch.
    expect(asked).toBe(1);

    // What an event cost before (and still costs when auth-sessions cannot tell): its row, one INSERT, in the batch's transaction.
    const unknown = newPlatformId();
    await n.consume(Array.from({ length: 5 }, (_, i) => ledgerMessage(unknown, `Transaction:unk${i}`, clock.now())));
    expect({ statements: n.consumed.statements - before.statements, transactions: n.consumed.transactions - before.transactions }).toEqual({ statements: 5, transactions: 1 });
    expect((await listQueued(n.db, unknown)).map((q) => q.status)).toEqual(Array(5).fill("PENDING"));
  });

  it("delivers the events produced after an endpoint is saved, before notifications has consumed the config change", async () => {
    const r = await receiver();
    const n = await notifications();
    const platformId = await platform(n);
    n.worker.start();
    clock.advance(1000);
    await n.consume([ledgerMessage(platformId, "Transaction:early", clock.now())]);
    clock.advance(1000);
    await saveEndpoint(platformId, r.url);
    clock.advance(1000);
    // The platform event of that change never reaches this process (another replica took it).
    await n.consume([ledgerMessage(platformId, "Transaction:late1", clock.now()), ledgerMessage(platformId, "Transaction:late2", clock.now())]);

    const rows = await until("both webhooks delivered", async () => {
      const rows = await listQueued(n.db, platformId);
      return rows.length === 2 && rows.every((q) => q.status === "DELIVERED") ? rows : undefined;
    });
    expect(rows.map((q) => JSON.parse(q.payload).data.id)).toEqual(["Transaction:late1", "Transaction:late2"]);
    expect([...r.hits].sort()).toEqual([
      ["Transaction:late1", 1],
      ["Transaction:late2", 1],
    ]);
  });

  it("race: an endpoint saved while two partitions' events are being handled and redelivered gets every event produced after the save, each once", async () => {
    const r = await receiver();
    const n = await notifications();
    const platformId = await platform(n);
    n.worker.start();
    clock.advance(1000);

    const PER_LANE = 120;
    /** Event (transaction id) → when it was produced relative to the save. */
    const phase = new Map<string, "before" | "during" | "after">();
    let state: "before" | "during" | "after" = "before";
    let produced = 0;
    let thirdProduced!: () => void;
    const third = new Promise<void>((r) => (thirdProduced = r));
    const lane = async (name: string) => {
      let last: BusMessage[] = [];
      for (let i = 0; i < PER_LANE; ) {
        // A fetch brings what was produced since the last one: one to four events.
        const batch: BusMessage[] = [];
        for (let k = 0; k < 1 + (i % 4) && i < PER_LANE; k++, i++) {
          clock.advance(1);
          const txId = `Transaction:${name}-${i}`;
          phase.set(txId, state);
          if (++produced === Math.ceil((2 * PER_LANE) / 3)) thirdProduced();
          batch.push(ledgerMessage(platformId, txId, clock.now()));
        }
        await n.consume(batch);
        // The next fetch is a round trip too: the lanes and the save's statements interleave.
        await sql`select 1`.execute(n.db);
        // The bus delivers a batch again now and then (at least once).
        if (i % 7 === 0) await n.consume(last);
        last = batch;
      }
    };
    const save = async () => {
      await third;
      state = "during";
      // Statements of the config transaction: the lanes keep handling events between them.
      const roundTrip = async () => {
        for (let k = 0; k < 3; k++) await sql`select 1`.execute(n.db);
      };
      await saveEndpoint(platformId, r.url, roundTrip);
      state = "after";
    };
    await Promise.all([lane("a"), lane("b"), save()]);

    const after = [...phase].filter(([, p]) => p === "after").map(([id]) => id);
    expect(after.length).toBeGreaterThan(PER_LANE / 2);
    await until("every event produced after the save delivered", async () => (after.every((id) => r.hits.has(id)) ? true : undefined));
    await until("no webhook left pending", async () => ((await listQueued(n.db, platformId)).every((q) => q.status !== "PENDING") ? true : undefined));

    for (const [id, count] of r.hits) expect({ id, count }).toEqual({ id, count: 1 });
    for (const [id, p] of phase) if (p === "before") expect(r.hits.has(id), id).toBe(false);
    // An event produced before the save started has no row (handled before the save) or a SKIPPED one (handled after it).
    const rows = await listQueued(n.db, platformId);
    expect(rows.filter((q) => phase.get(JSON.parse(q.payload).data.id) === "before" && q.status !== "SKIPPED")).toEqual([]);
    expect(rows.filter((q) => phase.get(JSON.parse(q.payload).data.id) === "after").map((q) => q.status)).toEqual(after.map(() => "DELIVERED"));
  });
});
