import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ManualClock } from "@corridor/kit";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listDeliveries } from "../src/data/deliveries-repo.js";
import { classifyReply, receiverInfoOf } from "../src/domain/incoming-approval.js";
import { configUpdated, newPlatformId, openTestDatabase, startNotifications, type NotificationsUnderTest } from "./support.js";

/** A platform endpoint answering whatever `reply` says; "hang" never answers (the sender's timeout ends it). */
async function startEndpoint() {
  const bodies: { headers: Record<string, string>; body: string }[] = [];
  let reply: { status: number; body?: string } | "hang" = { status: 200 };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      bodies.push({ headers: req.headers as Record<string, string>, body });
      if (reply === "hang") return;
      res.writeHead(reply.status, { "content-type": "application/json" }).end(reply.body ?? "");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    bodies,
    set: (r: typeof reply) => (reply = r),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe("RequestIncomingPaymentApproval", () => {
  // Real time here: the receiver checks webhook-timestamp against Date.now().
  const clock = new ManualClock(new Date());
  let n: NotificationsUnderTest;
  let close: () => Promise<void>;
  let endpoint: Awaited<ReturnType<typeof startEndpoint>>;
  let platformId: string;
  const tx = { id: "Transaction:0190aaaa-0000-7000-8000-000000000001", status: "PENDING", type: "INCOMING" };

  beforeAll(async () => {
    const db = await openTestDatabase();
    close = db.close;
    n = await startNotifications(db.handle, clock, { NOTIFICATIONS_WEBHOOK_TIMEOUT_MS: "300" });
    endpoint = await startEndpoint();
    platformId = newPlatformId();
    await n.deliver(configUpdated(platformId, endpoint.url, clock.now()));
  });
  afterAll(async () => {
    await endpoint.close();
    await close();
  });

  const ask = (p = platformId) => n.client.requestIncomingPaymentApproval({ platformId: p, transaction: tx, requestedReceiverCustomerInfoFields: ["FULL_NAME"] });

  it("posts a signed INCOMING_PAYMENT_PENDING envelope whose data is the transaction plus the requested fields; 200 → APPROVED with receiverCustomerInfo", async () => {
    endpoint.set({ status: 200, body: JSON.stringify({ receiverCustomerInfo: { FULL_NAME: "Alice" } }) });
    const res = await ask();
    expect(res.reply).toBe("APPROVED");
    expect(res.receiverCustomerInfo).toEqual({ FULL_NAME: "Alice" });
    const last = endpoint.bodies.at(-1)!;
    const { secret } = (await n.client.getWebhookSettings({ platformId })).settings!;
    const event = new Webhook(secret).verify(last.body, last.headers) as any;
    expect(event).toMatchObject({ id: expect.stringMatching(/^Webhook:/), type: "INCOMING_PAYMENT_PENDING", data: { ...tx, requestedReceiverCustomerInfoFields: ["FULL_NAME"] } });
    expect(res.attempt).toMatchObject({ type: "INCOMING_PAYMENT_PENDING", responseStatus: 200, delivered: true });
  });

  it("202 → ACKNOWLEDGED; 500 → ERROR; no reply within the timeout → ERROR; each posted once and recorded", async () => {
    endpoint.set({ status: 202 });
    expect((await ask()).reply).toBe("ACKNOWLEDGED");
    const before = endpoint.bodies.length;
    endpoint.set({ status: 500 });
    expect((await ask()).reply).toBe("ERROR");
    expect(endpoint.bodies.length).toBe(before + 1); // never retried
    endpoint.set("hang");
    const hung = await ask();
    expect(hung.reply).toBe("ERROR");
    expect(hung.attempt).toMatchObject({ responseStatus: 0, delivered: false, error: expect.stringContaining("no answer") });
    const recorded = (await listDeliveries(n.db, platformId)).filter((d) => d.type === "INCOMING_PAYMENT_PENDING");
    expect(recorded.length).toBeGreaterThanOrEqual(4);
  });

  it("answers NO_ENDPOINT, posting nothing, when the platform has no webhookEndpoint", async () => {
    const before = endpoint.bodies.length;
    const res = await ask(newPlatformId());
    expect(res.reply).toBe("NO_ENDPOINT");
    expect(res.attempt).toBeUndefined();
    expect(endpoint.bodies.length).toBe(before);
  });

  it("classifies replies and reads receiverCustomerInfo only from a JSON object", () => {
    expect([200, 202, 201, 204, 301, 409, 500].map((status) => classifyReply({ status }))).toEqual(["APPROVED", "ACKNOWLEDGED", "ERROR", "ERROR", "ERROR", "ERROR", "ERROR"]);
    expect(classifyReply({ error: "ECONNREFUSED" })).toBe("ERROR");
    expect(receiverInfoOf('{"receiverCustomerInfo":{"a":1}}')).toEqual({ a: 1 });
    expect(receiverInfoOf('{"receiverCustomerInfo":[1]}')).toBeUndefined();
    expect(receiverInfoOf("not json")).toBeUndefined();
    expect(receiverInfoOf(undefined)).toBeUndefined();
  });
});
