import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { ManualClock, appErrorFromConnect } from "@corridor/kit";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { PlatformConfigSchema } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { configUpdated, newPlatformId, openTestDatabase, startNotifications, type NotificationsUnderTest } from "./support.js";

async function publicError(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    const refusal = appErrorFromConnect(err);
    return refusal && { outcome: refusal.outcome, code: refusal.code, message: refusal.message, details: refusal.details };
  }
  throw new Error("expected the call to fail");
}

// Calls a platform makes (TEST, the incoming approval) read the endpoint from auth-sessions first,
// so a webhook right after PATCH /config does not wait for the config event.
describe("the endpoint is read from auth-sessions on a platform's request", () => {
  const clock = new ManualClock(new Date());
  /** What the fake auth-sessions answers per platform; a missing entry answers Unavailable. */
  const current = new Map<string, { webhookEndpoint: string; updatedAt: Date }>();
  const authSessions = createRouterTransport((router) =>
    router.service(AuthSessionsService, {
      async getPlatformConfig(req) {
        const c = current.get(req.platformId);
        if (!c) throw new ConnectError("auth-sessions is down", Code.Unavailable);
        return { config: create(PlatformConfigSchema, { platformId: req.platformId, webhookEndpoint: c.webhookEndpoint, updatedAt: timestampFromDate(c.updatedAt), createdAt: timestampFromDate(c.updatedAt) }) };
      },
    }),
  );
  const hits = { a: 0, b: 0 };
  let servers: Server[] = [];
  let urlA = "";
  let urlB = "";
  let n: NotificationsUnderTest;
  let close: () => Promise<void>;

  async function listen(onHit: () => void): Promise<string> {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        onHit();
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  }

  beforeAll(async () => {
    const db = await openTestDatabase();
    close = db.close;
    n = await startNotifications(db.handle, clock, { NOTIFICATIONS_WEBHOOK_TIMEOUT_MS: "5000" }, { "auth-sessions": authSessions });
    urlA = await listen(() => hits.a++);
    urlB = await listen(() => hits.b++);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    servers = [];
    await close();
  });
  beforeEach(() => {
    hits.a = 0;
    hits.b = 0;
  });

  it("TEST right after a PATCH whose event has not arrived goes to the new endpoint, and the copy keeps it", async () => {
    const platformId = newPlatformId();
    current.set(platformId, { webhookEndpoint: urlB, updatedAt: clock.now() });
    const { attempt } = await n.client.sendTestWebhook({ platformId });
    expect(attempt).toMatchObject({ url: urlB, delivered: true });
    expect(hits).toEqual({ a: 0, b: 1 });
    expect((await n.client.getWebhookSettings({ platformId })).settings!.webhookEndpoint).toBe(urlB);
    // The late event of that same version changes nothing.
    await n.deliver(configUpdated(platformId, urlB, current.get(platformId)!.updatedAt));
    expect((await n.client.getWebhookSettings({ platformId })).settings!.webhookEndpoint).toBe(urlB);
  });

  it("an answer older than the copy does not replace it", async () => {
    const platformId = newPlatformId();
    await n.deliver(configUpdated(platformId, urlA, new Date(clock.now().getTime() + 1000)));
    current.set(platformId, { webhookEndpoint: urlB, updatedAt: clock.now() });
    expect((await n.client.sendTestWebhook({ platformId })).attempt).toMatchObject({ url: urlA, delivered: true });
    expect(hits).toEqual({ a: 1, b: 0 });
  });

  it("with auth-sessions unreachable the copy is used; with no endpoint anywhere, 400 WEBHOOK_ENDPOINT_NOT_SET", async () => {
    const known = newPlatformId();
    await n.deliver(configUpdated(known, urlA, clock.now()));
    expect((await n.client.sendTestWebhook({ platformId: known })).attempt).toMatchObject({ url: urlA, delivered: true });
    const unknown = newPlatformId();
    expect(await publicError(n.client.sendTestWebhook({ platformId: unknown }))).toMatchObject({ outcome: "INVALID", code: "WEBHOOK_ENDPOINT_NOT_SET" });
  });

  it("a PATCH that cleared the endpoint is seen at once too", async () => {
    const platformId = newPlatformId();
    await n.deliver(configUpdated(platformId, urlA, clock.now()));
    current.set(platformId, { webhookEndpoint: "", updatedAt: new Date(clock.now().getTime() + 1000) });
    expect(await publicError(n.client.sendTestWebhook({ platformId }))).toMatchObject({ outcome: "INVALID", code: "WEBHOOK_ENDPOINT_NOT_SET" });
    expect(hits.a).toBe(0);
  });
});
