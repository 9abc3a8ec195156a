import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createRouterTransport } from "@connectrpc/connect";
import { ManualClock, type DatabaseHandle } from "@corridor/kit";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { PlatformConfigSchema } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { listDeliveries } from "../src/data/deliveries-repo.js";
import { listQueued, type QueuedWebhook } from "../src/data/queue-repo.js";
import { configUpdated, newPlatformId, openTestDatabase, outgoingCompleted, platformCreated, startNotifications, until, type NotificationsUnderTest } from "./support.js";

// Issue 11: the webhooks of a platform without endpoint cost no per-event work in the worker.
// They are settled together (one question to auth-sessions, one statement), or stored SKIPPED at
// once when auth-sessions already said there was no endpoint when they occurred; a platform whose
// endpoint this process has not heard of yet still gets them. The worker runs on real timers here
// (the batch window is NO_ENDPOINT_BATCH_MS); waits are on rows or the receiver, never on time.

describe("webhooks of a platform without endpoint", () => {
  const clock = new ManualClock(new Date());
  /** auth-sessions' config per platform, and how often notifications asked for it. */
  const current = new Map<string, { webhookEndpoint: string; updatedAt: Date }>();
  const asked = new Map<string, number>();
  const authSessions = createRouterTransport((router) =>
    router.service(AuthSessionsService, {
      async getPlatformConfig(req) {
        asked.set(req.platformId, (asked.get(req.platformId) ?? 0) + 1);
        const c = current.get(req.platformId)!;
        return { config: create(PlatformConfigSchema, { platformId: req.platformId, webhookEndpoint: c.webhookEndpoint, updatedAt: timestampFromDate(c.updatedAt), createdAt: timestampFromDate(c.updatedAt) }) };
      },
    }),
  );
  let handle: DatabaseHandle;
  let close: () => Promise<void>;
  const opened: NotificationsUnderTest[] = [];
  const servers: ReturnType<typeof createServer>[] = [];

  beforeAll(async () => {
    const db = await openTestDatabase();
    handle = db.handle;
    close = db.close;
  });
  afterEach(async () => {
    for (const n of opened.splice(0)) await n.worker.stop();
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  });
  afterAll(async () => {
    await close();
  });

  async function notifications(): Promise<NotificationsUnderTest> {
    const n = await startNotifications(handle, clock, { NOTIFICATIONS_WEBHOOK_TIMEOUT_MS: "5000", NOTIFICATIONS_DELIVERY_POLL_MS: "3600000" }, { "auth-sessions": authSessions });
    opened.push(n);
    return n;
  }
  async function receiver(): Promise<{ url: string; hits: string[] }> {
    const hits: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        hits.push(JSON.parse(Buffer.concat(chunks).toString("utf8")).data.id);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    servers.push(server);
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, hits };
  }
  const settled = (n: NotificationsUnderTest, platformId: string, count: number) =>
    until(`${count} settled webhooks of ${platformId}`, async () => {
      const rows = await listQueued(n.db, platformId);
      return rows.length === count && rows.every((q) => q.status !== "PENDING") ? rows : undefined;
    });

  it("settles a burst with one question to auth-sessions, and stores SKIPPED at once what occurred before its answer", async () => {
    const n = await notifications();
    const none = newPlatformId();
    await n.deliver(platformCreated(none, "", clock.now()));
    current.set(none, { webhookEndpoint: "", updatedAt: clock.now() });
    n.worker.start();
    clock.advance(1000);

    for (let i = 0; i < 5; i++) await n.handle(n.ledgerConsumer, outgoingCompleted(none, `Transaction:nb${i}`, clock.now()));
    const rows = await settled(n, none, 5);
    expect(rows.map((q) => [q.status, q.attempts, q.last_error])).toEqual(Array(5).fill(["SKIPPED", 0, "no webhookEndpoint was set when it occurred"]));
    expect(asked.get(none)).toBe(1);

    // An event that occurred before that answer (it reached notifications late) is settled as it is stored.
    await n.handle(n.ledgerConsumer, outgoingCompleted(none, "Transaction:nb-late", clock.now()));
    const late = (await listQueued(n.db, none)).find((q: QueuedWebhook) => JSON.parse(q.payload).data.id === "Transaction:nb-late");
    expect(late).toMatchObject({ status: "SKIPPED", attempts: 0, last_error: "no webhookEndpoint was set when it occurred" });
    expect(asked.get(none)).toBe(1);
    expect(await listDeliveries(n.db, none)).toEqual([]);

    // One that occurred after it waits for the next batch, which asks again.
    clock.advance(1000);
    await n.handle(n.ledgerConsumer, outgoingCompleted(none, "Transaction:nb-next", clock.now()));
    await settled(n, none, 7);
    expect(asked.get(none)).toBe(2);
  });

  it("delivers the held webhooks of a platform whose endpoint was set before they occurred, though this process had not heard of it", async () => {
    const r = await receiver();
    const [n1, n2] = [await notifications(), await notifications()];
    const platformId = newPlatformId();
    // Both replicas know the platform without endpoint; the second then consumes the config event
    // that sets it (consumer groups: the first never sees it).
    await n1.deliver(platformCreated(platformId, "", clock.now()));
    await n2.client.getWebhookSettings({ platformId });
    clock.advance(1000);
    current.set(platformId, { webhookEndpoint: r.url, updatedAt: clock.now() });
    await n2.deliver(configUpdated(platformId, r.url, clock.now()));
    n1.worker.start();
    n2.worker.start();
    clock.advance(1000);

    for (let i = 0; i < 3; i++) await n1.handle(n1.ledgerConsumer, outgoingCompleted(platformId, `Transaction:lag${i}`, clock.now()));
    const rows = await settled(n1, platformId, 3);
    expect(rows.map((q) => q.status)).toEqual(["DELIVERED", "DELIVERED", "DELIVERED"]);
    expect(r.hits.sort()).toEqual(["Transaction:lag0", "Transaction:lag1", "Transaction:lag2"]);
  });

  it("hands the held webhooks to the worker when the endpoint's config event arrives", async () => {
    const r = await receiver();
    const n = await notifications();
    const platformId = newPlatformId();
    await n.deliver(platformCreated(platformId, "", clock.now()));
    clock.advance(1000);
    // PATCH /config set the endpoint just before the payment; its event comes after the payment's.
    current.set(platformId, { webhookEndpoint: r.url, updatedAt: clock.now() });
    const setAt = clock.now();
    n.worker.start();
    clock.advance(1000);
    await n.handle(n.ledgerConsumer, outgoingCompleted(platformId, "Transaction:cfg", clock.now()));
    await n.deliver(configUpdated(platformId, r.url, setAt));

    const rows = await settled(n, platformId, 1);
    expect(rows[0]).toMatchObject({ status: "DELIVERED", attempts: 1 });
    expect(r.hits).toEqual(["Transaction:cfg"]);
  });
});
