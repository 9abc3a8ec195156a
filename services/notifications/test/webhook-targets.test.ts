import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger, ManualClock, newId, type HostResolver } from "@corridor/kit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createHttpSender } from "../src/clients/standard-webhooks.js";
import { listDeliveries } from "../src/data/deliveries-repo.js";
import { enqueueWebhook, listQueued } from "../src/data/queue-repo.js";
import { createDeliveryWorker } from "../src/workers/delivery.js";
import { configUpdated, newPlatformId, openTestDatabase, startNotifications, testSigningKey, type NotificationsUnderTest } from "./support.js";

// Issue 23, finding 4: a webhook goes only where its platform's policy allows, checked when it is
// sent (the address every name resolves to, then the connection goes to that address), whatever
// endpoint was stored; redirects are answers, never followed; answers are read up to a bound.

const HOUR = 3_600_000;

/** A receiver on 127.0.0.1 whose answer each test sets; it counts what reached it. */
async function startReceiver() {
  const state: { hits: number; handle: (req: IncomingMessage, res: ServerResponse) => void } = {
    hits: 0,
    handle: (_req, res) => void res.writeHead(204).end(),
  };
  const server = createServer((req, res) => {
    state.hits++;
    req.resume();
    req.on("end", () => state.handle(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/hooks`,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Writes a 200 body until the client hangs up: a reader without a bound never finishes. */
function endlessBody(_req: IncomingMessage, res: ServerResponse) {
  res.writeHead(200, { "content-type": "text/plain" });
  const chunk = Buffer.alloc(16 * 1024, "z");
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once("drain", pump);
  };
  pump();
}

describe("webhook targets checked when webhooks are sent", () => {
  const clock = new ManualClock(new Date());
  const production = new Set<string>();
  let n: NotificationsUnderTest;
  let strict: NotificationsUnderTest;
  let receiver: Receiver;
  let elsewhere: Receiver;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const db = await openTestDatabase();
    close = db.close;
    const env = { NOTIFICATIONS_WEBHOOK_TIMEOUT_MS: "5000", NOTIFICATIONS_DELIVERY_POLL_MS: String(HOUR) };
    const environmentOf = (id: string) => (production.has(id) ? "PRODUCTION" : "SANDBOX") as "PRODUCTION" | "SANDBOX";
    n = await startNotifications(db.handle, clock, env, {}, environmentOf);
    // The same service where the operator turned loopback off (the Helm chart's setting).
    strict = await startNotifications(db.handle, clock, { ...env, CORRIDOR_WEBHOOK_ALLOW_LOOPBACK: "false" }, {}, environmentOf);
    receiver = await startReceiver();
    elsewhere = await startReceiver();
  });
  afterEach(() => {
    receiver.state.handle = (_req, res) => void res.writeHead(204).end();
    receiver.state.hits = 0;
    elsewhere.state.hits = 0;
  });
  afterAll(async () => {
    await receiver.close();
    await elsewhere.close();
    await close();
  });

  async function platform(url: string, env: "SANDBOX" | "PRODUCTION" = "SANDBOX"): Promise<string> {
    const platformId = newPlatformId();
    if (env === "PRODUCTION") production.add(platformId);
    await n.deliver(configUpdated(platformId, url, clock.now()));
    return platformId;
  }

  /** One event webhook of the platform, due now, delivered by a worker whose sender resolves every name with `resolve`. */
  async function deliverOnce(platformId: string, environment: "SANDBOX" | "PRODUCTION", resolve: HostResolver) {
    clock.advance(1000);
    const webhookId = newId("Webhook");
    const payload = JSON.stringify({ id: webhookId, type: "CUSTOMER_KYC_APPROVED", timestamp: clock.now().toISOString(), data: { id: `Customer:${crypto.randomUUID()}` } });
    await enqueueWebhook(n.db, { webhookId, platformId, sourceEventId: `Event:${crypto.randomUUID()}`, type: "CUSTOMER_KYC_APPROVED", payload, at: clock.now() });
    const worker = createDeliveryWorker({
      db: n.db,
      sender: createHttpSender({ timeoutMs: 5000, environmentOf: async () => environment, resolve , signingKey: testSigningKey }),
      clock,
      log: createLogger("webhook-targets-test", "silent"),
      pollIntervalMs: HOUR,
      leaseMs: 35_000,
      concurrency: 4,
      perEndpoint: 2,
      orderHoldMs: HOUR,
    });
    expect(await worker.runOnce()).toBe(1);
    return webhookId;
  }

  it("refuses a production platform's endpoint whose name resolves to loopback: a failed attempt naming the rule, and no connection", async () => {
    const platformId = await platform(`https://hooks.example.com:${receiver.port}/hooks`, "PRODUCTION");
    const webhookId = await deliverOnce(platformId, "PRODUCTION", async () => [{ address: "127.0.0.1", family: 4 }]);

    const [attempt] = await listDeliveries(n.db, platformId);
    expect(attempt).toMatchObject({ webhookId, delivered: false, responseStatus: 0 });
    expect(attempt!.error).toMatch(/^target refused: .*loopback.*rule NON_PUBLIC_ADDRESS/);
    // A failed attempt like any other: retried later, in case the platform fixes its DNS.
    expect((await listQueued(n.db, platformId))[0]).toMatchObject({ status: "PENDING", attempts: 1, last_error: attempt!.error });
    expect(receiver.state.hits).toBe(0);
  });

  it("refuses a sandbox platform's endpoint whose name resolves to a private or metadata address, loopback switch on or not", async () => {
    for (const address of ["10.0.0.5", "169.254.169.254", "::ffff:127.0.0.1"]) {
      const platformId = await platform(`https://hooks.example.com:${receiver.port}/hooks`);
      await deliverOnce(platformId, "SANDBOX", async () => [{ address, family: address.includes(":") ? 6 : 4 }]);
      const [attempt] = await listDeliveries(n.db, platformId);
      expect(attempt, address).toMatchObject({ delivered: false, responseStatus: 0 });
      expect(attempt!.error, address).toContain("rule NON_PUBLIC_ADDRESS");
    }
    expect(receiver.state.hits).toBe(0);
  });

  it("delivers a sandbox platform's endpoint whose name resolves to loopback while the operator allows loopback", async () => {
    const platformId = await platform(`http://localhost:${receiver.port}/hooks`);
    await deliverOnce(platformId, "SANDBOX", async () => [{ address: "127.0.0.1", family: 4 }]);
    expect((await listDeliveries(n.db, platformId))[0]).toMatchObject({ delivered: true, responseStatus: 204 });
    expect(receiver.state.hits).toBe(1);
  });

  it("refuses a TEST webhook to a production platform's loopback endpoint stored before the rules existed, and records it", async () => {
    const platformId = await platform(receiver.url, "PRODUCTION");
    const { attempt } = await n.client.sendTestWebhook({ platformId });
    expect(attempt).toMatchObject({ url: receiver.url, responseStatus: 0, delivered: false, responseExcerpt: "" });
    expect(attempt!.error).toMatch(/^target refused: .*127\.0\.0\.1 is loopback.*rule NON_PUBLIC_ADDRESS/);
    expect((await listDeliveries(n.db, platformId))[0]).toMatchObject({ delivered: false, error: attempt!.error });
    expect(receiver.state.hits).toBe(0);
  });

  it("refuses a production platform's stored metadata endpoint in any spelling at send time", async () => {
    for (const url of ["https://169.254.169.254/latest/meta-data/", "https://[::ffff:169.254.169.254]/", "https://2852039166/", "http://metadata.google.internal/"]) {
      const platformId = await platform(url, "PRODUCTION");
      const { attempt } = await n.client.sendTestWebhook({ platformId });
      expect(attempt!.error, url).toMatch(/^target refused: .*rule (NON_PUBLIC_ADDRESS|INTERNAL_HOSTNAME)/);
    }
  });

  it("refuses a sandbox platform's loopback endpoint where the operator turned loopback off", async () => {
    const platformId = newPlatformId();
    await strict.deliver(configUpdated(platformId, receiver.url, clock.now()));
    const { attempt } = await strict.client.sendTestWebhook({ platformId });
    expect(attempt).toMatchObject({ responseStatus: 0, delivered: false });
    expect(attempt!.error).toContain("rule NON_PUBLIC_ADDRESS");
    expect(receiver.state.hits).toBe(0);
  });

  it("does not follow a redirect: a TEST webhook answered 302 is not delivered and the Location is never asked", async () => {
    receiver.state.handle = (_req, res) => void res.writeHead(302, { location: elsewhere.url }).end("moved");
    const platformId = await platform(receiver.url);
    const { attempt } = await n.client.sendTestWebhook({ platformId });
    expect(attempt).toMatchObject({ responseStatus: 302, delivered: false, responseExcerpt: "moved" });
    expect(receiver.state.hits).toBe(1);
    expect(elsewhere.state.hits).toBe(0);
  });

  it("answers a TEST webhook whose endpoint never stops sending with its status and a bounded excerpt", async () => {
    receiver.state.handle = endlessBody;
    const platformId = await platform(receiver.url);
    const { attempt } = await n.client.sendTestWebhook({ platformId });
    expect(attempt).toMatchObject({ responseStatus: 200, delivered: true, responseExcerpt: "z".repeat(1024) });
  });

  it("reads a bounded part of an incoming-payment approval's endless 200 answer and approves, instead of waiting for its end", async () => {
    receiver.state.handle = endlessBody;
    const platformId = await platform(receiver.url);
    const res = await n.client.requestIncomingPaymentApproval({
      platformId,
      transaction: { id: "Transaction:0190aaaa-0000-7000-8000-0000000000aa", status: "PENDING", type: "INCOMING" },
      requestedReceiverCustomerInfoFields: [],
    });
    expect(res.reply).toBe("APPROVED");
    expect(res.attempt).toMatchObject({ responseStatus: 200, delivered: true, error: "" });
  });
});
