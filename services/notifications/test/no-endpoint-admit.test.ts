import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { configVersion, ManualClock, memoryConfigBoard, topics, type BusMessage, type ConfigBoard, type DatabaseHandle } from "@corridor/kit";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { PlatformConfigSchema } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { listQueued, type EnqueuedWebhook } from "../src/data/queue-repo.js";
import { ledgerWebhook } from "../src/events/webhook-events.js";
import { NO_ENDPOINT_REASON } from "../src/workers/endpoint.js";
import { newPlatformId, openTestDatabase, outgoingCompleted, platformCreated, startNotifications, until as untilAnswered, type NotificationsUnderTest } from "./support.js";

// Issue 28: the events of a platform without a webhook endpoint are stored SKIPPED by the webhook
// consumers' admit (which reads the platform's config through the config board, once per fetched
// batch) in one INSERT per fetched batch, with no transaction, and never announced to the
// delivery worker; they stay readable through the events API (decisions §8). The rule, and why an
// endpoint saved while events are being handled loses none produced after it: docs/events.md,
// "Which events an endpoint receives".

function ledgerMessage(platformId: string, txId: string, at: Date): BusMessage {
  const event = outgoingCompleted(platformId, txId, at);
  return { topic: topics.ledgerTransactions, key: platformId, value: toBinary(LedgerEventSchema, event), headers: { "event-id": event.eventId } };
}

/** Waits up to 30 s (the race test's streams take a while on a busy machine). */
const until = <T>(what: string, check: () => Promise<T | undefined>) => untilAnswered(what, check, 30_000);

describe("events of a platform without endpoint (stored SKIPPED at admit)", () => {
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
    // The config commits after every event produced before the save began: a millisecond later, so none shares its time.
    clock.advance(1);
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

  it("stores the events of a platform without endpoint SKIPPED in one INSERT per fetched batch, with no transaction, never announced, readable through the events API", async () => {
    const n = await notifications();
    const none = await platform(n);
    const announced: EnqueuedWebhook[] = [];
    const notify = n.worker.notify.bind(n.worker);
    n.worker.notify = (ws) => (announced.push(...ws), notify(ws));
    const before = { ...n.consumed };
    const cost = () => ({ statements: n.consumed.statements - before.statements, transactions: n.consumed.transactions - before.transactions });
    asked = 0;
    clock.advance(1000);
    // A fetched batch of five, then three fetched one by one.
    const batch = Array.from({ length: 5 }, (_, i) => ledgerMessage(none, `Transaction:none${i}`, clock.now()));
    await n.consume(batch);
    expect(cost()).toEqual({ statements: 1, transactions: 0 });
    for (let i = 5; i < 8; i++) await n.consume([ledgerMessage(none, `Transaction:none${i}`, clock.now())]);
    expect(cost()).toEqual({ statements: 4, transactions: 0 });
    // The board vouches for the copy: auth-sessions was asked once, for the first batch.
    expect(asked).toBe(1);
    expect(announced).toEqual([]);

    // Each is the row the worker would have settled SKIPPED, and GET /events shows it so.
    const rows = await listQueued(n.db, none);
    expect(rows.map((q) => JSON.parse(q.payload).data.id)).toEqual(Array.from({ length: 8 }, (_, i) => `Transaction:none${i}`));
    expect(rows.map((q) => ({ status: q.status, attempts: q.attempts, lastError: q.last_error, leased: q.leased_until }))).toEqual(
      Array(8).fill({ status: "SKIPPED", attempts: 0, lastError: NO_ENDPOINT_REASON, leased: null }),
    );
    const listed = (await n.client.listWebhookEvents({ platformId: none })).events;
    expect(listed).toHaveLength(8);
    const first = listed.find((e) => e.resourceId === "Transaction:none0")!;
    expect(first).toMatchObject({ type: "OUTGOING_PAYMENT_COMPLETED", deliveryStatus: "SKIPPED", attemptCount: 0, lastError: NO_ENDPOINT_REASON });
    expect(first.nextAttemptAt).toBeUndefined();
    const event = fromBinary(LedgerEventSchema, batch[0]!.value);
    // The envelope the webhook would have carried, as the enqueue stores it: its id, type, the event's time, the resource as its GET returns it.
    expect(JSON.parse(first.payload)).toEqual({ id: first.id, type: "OUTGOING_PAYMENT_COMPLETED", timestamp: timestampDate(event.occurredAt!).toISOString(), data: ledgerWebhook(event)!.data });
    expect((await n.client.getWebhookEvent({ platformId: none, eventId: first.id })).event).toMatchObject({ deliveryStatus: "SKIPPED", attemptCount: 0, attempts: [] });

    // Delivered again (at least once): one INSERT that changes nothing.
    await n.consume(batch);
    expect(cost()).toEqual({ statements: 5, transactions: 0 });
    expect(await listQueued(n.db, none)).toEqual(rows);

    // An event of a platform auth-sessions cannot tell about: its row, one INSERT, in the batch's transaction, announced to the worker.
    const unknown = newPlatformId();
    const mark = { ...n.consumed };
    await n.consume(Array.from({ length: 5 }, (_, i) => ledgerMessage(unknown, `Transaction:unk${i}`, clock.now())));
    expect({ statements: n.consumed.statements - mark.statements, transactions: n.consumed.transactions - mark.transactions }).toEqual({ statements: 5, transactions: 1 });
    expect((await listQueued(n.db, unknown)).map((q) => q.status)).toEqual(Array(5).fill("PENDING"));
    expect(announced.map((w) => w.platformId)).toEqual(Array(5).fill(unknown));
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
      return rows.length === 3 && rows.slice(1).every((q) => q.status === "DELIVERED") ? rows : undefined;
    });
    // The event handled before the save is stored SKIPPED (readable, never sent); the later ones are delivered.
    expect(rows.map((q) => [JSON.parse(q.payload).data.id, q.status])).toEqual([
      ["Transaction:early", "SKIPPED"],
      ["Transaction:late1", "DELIVERED"],
      ["Transaction:late2", "DELIVERED"],
    ]);
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
    // Every event has its one row, readable through the events API: SKIPPED when produced before
    // the save started (stored so at admit if handled before the save, by the worker's
    // endpoint_set_at check if after it), DELIVERED when produced after it; either during it.
    const rows = await listQueued(n.db, platformId);
    const statusOf = new Map(rows.map((q) => [JSON.parse(q.payload).data.id as string, q.status]));
    expect(rows).toHaveLength(phase.size);
    for (const [id, p] of phase) {
      const status = statusOf.get(id);
      if (p === "before") expect({ id, status }).toEqual({ id, status: "SKIPPED" });
      else if (p === "after") expect({ id, status }).toEqual({ id, status: "DELIVERED" });
      else expect(["SKIPPED", "DELIVERED"], id).toContain(status);
    }
    expect(rows.filter((q) => phase.get(JSON.parse(q.payload).data.id) === "after").map((q) => q.status)).toEqual(after.map(() => "DELIVERED"));
  });
});
