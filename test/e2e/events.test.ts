import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { fund, platformAccount, platformExternal, txStatus } from "./ledger-helpers.js";

// The delivery worker polls often so webhooks arrive fast (split mode sets the same variable in
// test/infra/split-setup.ts).
process.env.NOTIFICATIONS_DELIVERY_POLL_MS ??= "100";

interface Received {
  headers: IncomingMessage["headers"];
  body: string;
}

/** The events API (docs/events.md) end to end: a real payment's webhook listed, inspected, redelivered. */
describe.skipIf(skipReason())(`events API (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let receiver: Server;
  let endpoint: string;
  const received: Received[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200, { "content-type": "text/plain" }).end("thanks");
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    system = await startTestSystem();
    p = await system.createPlatform({ name: "events e2e" });
  });
  afterAll(async () => {
    await system?.stop();
    await new Promise<void>((r) => receiver.close(() => r()));
  });

  const verify = (secret: string, r: Received) =>
    new Webhook(secret).verify(r.body, {
      "webhook-id": String(r.headers["webhook-id"]),
      "webhook-timestamp": String(r.headers["webhook-timestamp"]),
      "webhook-signature": String(r.headers["webhook-signature"]),
    }) as { id: string; type: string; data: { id: string } };

  it("lists a payment's webhook with its attempts and redelivers it: same event id, signed again", async () => {
    expect((await p.call("PATCH", "/config", { webhookEndpoint: endpoint })).status).toBe(200);
    // notifications learns the endpoint asynchronously; a delivered TEST proves it has it.
    await eventually(async () => {
      const res = await p.call("POST", "/sandbox/webhooks/test");
      return res.status === 200 && res.body.response_status === 200 ? true : undefined;
    });
    const secret = (await p.call("GET", "/config/webhook-secret")).body.secret as string;

    const usd = await platformAccount(p);
    await fund(p, usd.id, 10_000);
    const ext = await platformExternal(p, "000");
    const out = await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.id }, amount: 2500 });
    expect(out.status, JSON.stringify(out.body)).toBe(201);
    await txStatus(p, out.body.id, "COMPLETED");

    // Listed, filtered by type and resource, once the endpoint answered.
    const listed = await eventually(async () => {
      const res = await p.call("GET", `/events?type=OUTGOING_PAYMENT_COMPLETED&resourceId=${encodeURIComponent(out.body.id)}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data[0]?.deliveryStatus === "DELIVERED" ? res.body : undefined;
    });
    expect(listed).toMatchObject({ hasMore: false, totalCount: 1 });
    const [event] = listed.data;
    expect(event).toMatchObject({
      id: expect.stringMatching(/^Webhook:/),
      type: "OUTGOING_PAYMENT_COMPLETED",
      resourceId: out.body.id,
      deliveryStatus: "DELIVERED",
      attemptCount: 1,
      payload: { type: "OUTGOING_PAYMENT_COMPLETED", data: { id: out.body.id, status: "COMPLETED" } },
    });
    expect(event.payload.id).toBe(event.id);
    // The payload is the body the receiver got, and it verifies with the platform's secret.
    const first = received.find((r) => r.headers["webhook-id"] === event.id);
    expect(first).toBeDefined();
    expect(JSON.parse(first!.body)).toEqual(event.payload);
    expect(verify(secret, first!).id).toBe(event.id);

    // Every event of the payment is there; a created range after now finds none.
    const all = (await p.call("GET", `/events?resourceId=${encodeURIComponent(out.body.id)}&limit=100`)).body;
    expect(all.data.map((e: { type: string }) => e.type)).toContain("OUTGOING_PAYMENT_COMPLETED");
    expect(all.data.every((e: { resourceId: string }) => e.resourceId === out.body.id)).toBe(true);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await p.call("GET", `/events?createdAfter=${encodeURIComponent(future)}`)).body).toEqual({ data: [], hasMore: false, totalCount: 0 });
    expect((await p.call("GET", "/events?createdAfter=yesterday")).status).toBe(400);

    const detail = await p.call("GET", `/events/${event.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.attempts).toHaveLength(1);
    expect(detail.body.attempts[0]).toMatchObject({ url: endpoint, responseStatus: 200, delivered: true, responseExcerpt: "thanks" });
    expect(detail.body.attempts[0].latencyMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(detail.body.attempts[0].attemptedAt)).not.toBeNaN();

    // Redelivery: 202, the same id and body reach the endpoint again, signed.
    const redo = await p.call("POST", `/events/${event.id}/redeliver`, undefined, { "idempotency-key": `redo-${event.id}` });
    expect(redo.status, JSON.stringify(redo.body)).toBe(202);
    expect(redo.body).toMatchObject({ id: event.id, deliveryStatus: "PENDING", attemptCount: 1 });
    const again = await eventually(async () => {
      const hits = received.filter((r) => r.headers["webhook-id"] === event.id);
      return hits.length >= 2 ? hits[1] : undefined;
    });
    expect(again.body).toBe(first!.body);
    expect(verify(secret, again).id).toBe(event.id);
    const after = await eventually(async () => {
      const res = await p.call("GET", `/events/${event.id}`);
      return res.body.deliveryStatus === "DELIVERED" && res.body.attemptCount === 2 ? res.body : undefined;
    });
    expect(after.attempts.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([200, 200]);
    expect(after.redeliveredAt).toBeDefined();

    // The same Idempotency-Key answers the first redelivery again and queues nothing.
    const replay = await p.call("POST", `/events/${event.id}/redeliver`, undefined, { "idempotency-key": `redo-${event.id}` });
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toMatchObject({ id: event.id, attemptCount: 2 });
  }, 90_000);

  it("keeps events to their platform (404 EVENT_NOT_FOUND) and refuses a redelivery without an endpoint (400 WEBHOOK_ENDPOINT_NOT_SET)", async () => {
    const mine = (await p.call("GET", "/events?limit=1")).body.data[0];
    expect(mine).toBeDefined();
    const other = await system.createPlatform({ name: "events e2e other" });
    expect((await other.call("GET", `/events/${mine.id}`)).body).toMatchObject({ status: 404, code: "EVENT_NOT_FOUND" });
    expect((await other.call("POST", `/events/${mine.id}/redeliver`)).body).toMatchObject({ status: 404, code: "EVENT_NOT_FOUND" });
    expect((await other.call("GET", "/events")).body.data.find((e: { id: string }) => e.id === mine.id)).toBeUndefined();

    // The other platform has no endpoint: its events are recorded (SKIPPED) and cannot be redelivered.
    const usd = await platformAccount(other);
    await fund(other, usd.id, 1_000);
    const skipped = await eventually(async () => {
      const res = await other.call("GET", "/events");
      return res.body.data.find((e: { deliveryStatus: string }) => e.deliveryStatus === "SKIPPED");
    });
    expect(skipped.attemptCount).toBe(0);
    const refused = await other.call("POST", `/events/${skipped.id}/redeliver`);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ status: 400, code: "WEBHOOK_ENDPOINT_NOT_SET" });
    expect((await other.call("GET", `/events/${skipped.id}`)).body).toMatchObject({ deliveryStatus: "SKIPPED", attemptCount: 0 });
    expect((await p.call("GET", "/events/Webhook:not-an-id")).status).toBe(400);
  }, 60_000);
});
