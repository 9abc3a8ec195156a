import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { ManualClock } from "@corridor/kit";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { listDeliveries } from "../src/data/deliveries-repo.js";
import { configUpdated, newPlatformId, openTestDatabase, startNotifications, type NotificationsUnderTest } from "./support.js";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A platform's webhook receiver on 127.0.0.1: verifies with `secret` and answers 204, or 400 when it does not verify. */
async function startReceiver(): Promise<{ url: string; received: Received[]; secret: { value: string }; close(): Promise<void> }> {
  const received: Received[] = [];
  const secret = { value: "" };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      received.push({ headers: req.headers, body });
      try {
        new Webhook(secret.value).verify(body, req.headers as Record<string, string>);
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    secret,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A URL nothing listens on: a port that was free a moment ago. */
async function unreachableUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/hooks`;
}

function verifies(secret: string, r: Received): boolean {
  try {
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    return true;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return false;
    throw err;
  }
}

describe("webhook settings and test deliveries", () => {
  // The receiver checks webhook-timestamp against Date.now(); Date follows the manual clock so
  // both sides agree without waiting on real time.
  const clock = new ManualClock(new Date());
  const advance = (ms: number) => {
    clock.advance(ms);
    vi.setSystemTime(clock.now());
  };
  let close: () => Promise<void>;
  let n: NotificationsUnderTest;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    const db = await openTestDatabase();
    close = db.close;
    n = await startNotifications(db.handle, clock, { NOTIFICATIONS_WEBHOOK_TIMEOUT_MS: "5000" });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await close();
  });
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(clock.now());
    receiver.received.length = 0;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function platformWithEndpoint(url: string): Promise<string> {
    const platformId = newPlatformId();
    await n.deliver(configUpdated(platformId, url, clock.now()));
    return platformId;
  }

  it("creates settings with a fresh whsec_ secret on first read, and answers the same secret after", async () => {
    const platformId = newPlatformId();
    const first = (await n.client.getWebhookSettings({ platformId })).settings;
    const second = (await n.client.getWebhookSettings({ platformId })).settings;
    expect(first?.platformId).toBe(platformId);
    expect(first?.secret).toMatch(/^whsec_/);
    expect(second?.secret).toBe(first?.secret);
    expect(first?.previousSecretExpiresAt).toBeUndefined();
  });

  it("gives each platform its own secret", async () => {
    const a = (await n.client.getWebhookSettings({ platformId: newPlatformId() })).settings;
    const b = (await n.client.getWebhookSettings({ platformId: newPlatformId() })).settings;
    expect(a?.secret).not.toBe(b?.secret);
  });

  it("posts a TEST envelope signed per Standard Webhooks that the receiver verifies with the platform's secret", async () => {
    const platformId = await platformWithEndpoint(receiver.url);
    const { settings } = await n.client.getWebhookSettings({ platformId });
    receiver.secret.value = settings!.secret;

    const { attempt } = await n.client.sendTestWebhook({ platformId });

    expect(attempt).toMatchObject({ type: "TEST", url: receiver.url, responseStatus: 204, delivered: true, error: "" });
    expect(attempt?.webhookId).toMatch(/^Webhook:[0-9a-f-]{36}$/);
    expect(receiver.received).toHaveLength(1);
    const [req] = receiver.received;
    expect(req!.headers["webhook-id"]).toBe(attempt?.webhookId);
    expect(req!.headers["webhook-timestamp"]).toBe(String(Math.floor(clock.now().getTime() / 1000)));
    expect(req!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(req!.body)).toEqual({
      id: attempt?.webhookId,
      type: "TEST",
      timestamp: clock.now().toISOString(),
      data: { platformId, message: expect.any(String) },
    });

    const [recorded] = await listDeliveries(n.db, platformId);
    expect(recorded).toMatchObject({ webhookId: attempt?.webhookId, type: "TEST", url: receiver.url, responseStatus: 204, delivered: true, error: null });
    expect(recorded?.requestBody).toBe(req!.body);
  });

  it("records a non-2xx answer as not delivered", async () => {
    const platformId = await platformWithEndpoint(receiver.url);
    receiver.secret.value = "whsec_" + Buffer.alloc(32, 7).toString("base64"); // not the platform's: the receiver answers 400

    const { attempt } = await n.client.sendTestWebhook({ platformId });

    expect(attempt).toMatchObject({ responseStatus: 400, delivered: false, error: "" });
  });

  it("sends both signatures during a rotation, each verifying with its own secret, and only the new one after 24 h", async () => {
    const platformId = await platformWithEndpoint(receiver.url);
    const old = (await n.client.getWebhookSettings({ platformId })).settings!;

    const rotated = (await n.client.rotateWebhookSecret({ platformId })).settings!;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(old.secret);
    expect(timestampDate(rotated.previousSecretExpiresAt!).getTime()).toBe(clock.now().getTime() + 24 * 3600 * 1000);
    expect((await n.client.getWebhookSettings({ platformId })).settings?.secret).toBe(rotated.secret);

    receiver.secret.value = rotated.secret;
    await n.client.sendTestWebhook({ platformId });
    const during = receiver.received.at(-1)!;
    expect(String(during.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(verifies(rotated.secret, during)).toBe(true);
    expect(verifies(old.secret, during)).toBe(true);

    advance(24 * 3600 * 1000 + 1000);
    expect((await n.client.getWebhookSettings({ platformId })).settings?.previousSecretExpiresAt).toBeUndefined();
    await n.client.sendTestWebhook({ platformId });
    const after = receiver.received.at(-1)!;
    expect(String(after.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect(verifies(rotated.secret, after)).toBe(true);
    expect(verifies(old.secret, after)).toBe(false);
  });

  it("keeps signing with the secret rotated out most recently when rotated twice", async () => {
    const platformId = await platformWithEndpoint(receiver.url);
    const first = (await n.client.getWebhookSettings({ platformId })).settings!;
    const second = (await n.client.rotateWebhookSecret({ platformId })).settings!;
    const third = (await n.client.rotateWebhookSecret({ platformId })).settings!;

    await n.client.sendTestWebhook({ platformId });
    const r = receiver.received.at(-1)!;
    expect(verifies(third.secret, r)).toBe(true);
    expect(verifies(second.secret, r)).toBe(true);
    expect(verifies(first.secret, r)).toBe(false);
  });

  it("records an unreachable endpoint as not delivered, as 'connection failed' without the socket error (no port scanner)", async () => {
    const url = await unreachableUrl();
    const platformId = await platformWithEndpoint(url);

    const { attempt } = await n.client.sendTestWebhook({ platformId });

    expect(attempt).toMatchObject({ url, responseStatus: 0, delivered: false });
    expect(attempt?.error).toBe("connection failed");
    const [recorded] = await listDeliveries(n.db, platformId);
    expect(recorded).toMatchObject({ delivered: false, responseStatus: 0, error: attempt?.error });
  });

  it("refuses a test webhook with 400 WEBHOOK_ENDPOINT_NOT_SET when the platform has no endpoint", async () => {
    const platformId = newPlatformId();
    const err = await n.client.sendTestWebhook({ platformId }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    const [detail] = (err as ConnectError).findDetails(PublicErrorSchema);
    expect(detail).toMatchObject({ outcome: "INVALID", code: "WEBHOOK_ENDPOINT_NOT_SET" });
    expect(await listDeliveries(n.db, platformId)).toEqual([]);
  });

  it("rejects a request without platform_id as INVALID_INPUT", async () => {
    const err = await n.client.getWebhookSettings({ platformId: "" }).catch((e: unknown) => e);
    const [detail] = (err as ConnectError).findDetails(PublicErrorSchema);
    expect(detail).toMatchObject({ outcome: "INVALID", code: "INVALID_INPUT" });
  });
});
