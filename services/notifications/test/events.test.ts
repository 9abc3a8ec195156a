import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { ManualClock } from "@corridor/kit";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";
import { LedgerEventSchema, type LedgerEvent } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { RESPONSE_EXCERPT_CHARS } from "../src/domain/ports.js";
import { configUpdated, newPlatformId, openTestDatabase, startNotifications, type NotificationsUnderTest } from "./support.js";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  verified: boolean;
}

/** A platform's receiver: verifies each request with `secret`, answers `status` with `reply` as body. */
async function startReceiver() {
  const received: Received[] = [];
  const state = { secret: "", status: 200, reply: "", hangUp: false };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let verified = false;
      try {
        new Webhook(state.secret).verify(body, req.headers as Record<string, string>);
        verified = true;
      } catch {
        verified = false;
      }
      received.push({ headers: req.headers, body, verified });
      if (state.hangUp) return void req.socket.destroy();
      res.writeHead(state.status).end(state.reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function transactionEvent(platformId: string, eventType: string, txId: string, at: Date): LedgerEvent {
  const ts = timestampFromDate(at);
  const usd = { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 };
  return create(LedgerEventSchema, {
    eventId: `Event:${crypto.randomUUID()}`,
    occurredAt: ts,
    platformId,
    eventType,
    payload: {
      case: "transactionChanged",
      value: {
        transaction: {
          id: txId,
          status: "COMPLETED",
          type: "OUTGOING",
          amount: 1000n,
          sentAmount: 1000n,
          currency: usd,
          sentCurrency: usd,
          exchangeRate: "1",
          createdAt: ts,
          updatedAt: ts,
        },
      },
    },
  });
}

async function publicError(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    const [detail] = ConnectError.from(err).findDetails(PublicErrorSchema);
    return detail;
  }
  throw new Error("expected the call to fail");
}

describe("events API: ListWebhookEvents, GetWebhookEvent, RedeliverWebhookEvent", () => {
  // standardwebhooks checks webhook-timestamp against Date.now(): Date follows the manual clock.
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
    receiver.state.status = 200;
    receiver.state.reply = "";
    receiver.state.hangUp = false;
  });
  afterEach(() => vi.useRealTimers());

  async function platformWithEndpoint(url = receiver.url): Promise<string> {
    const platformId = newPlatformId();
    await n.deliver(configUpdated(platformId, url, clock.now()));
    receiver.state.secret = (await n.client.getWebhookSettings({ platformId })).settings!.secret;
    return platformId;
  }
  async function drain() {
    while ((await n.worker.runOnce()) > 0);
  }
  async function emit(platformId: string, type: string, txId: string) {
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, type, txId, clock.now()));
  }

  it("lists a platform's events newest first, filtered by type, resource and created range, paged with a cursor", async () => {
    const platformId = await platformWithEndpoint();
    const other = await platformWithEndpoint();
    advance(1000);
    const t0 = clock.now();
    await emit(platformId, "OUTGOING_PAYMENT_PENDING", "Transaction:a");
    advance(1000);
    await emit(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:a");
    advance(1000);
    const t2 = clock.now();
    await emit(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:b");
    await emit(other, "OUTGOING_PAYMENT_COMPLETED", "Transaction:c");
    await drain();

    const all = await n.client.listWebhookEvents({ platformId });
    expect(all.pageInfo?.totalCount).toBe(3n);
    expect(all.events.map((e) => [e.type, e.resourceId])).toEqual([
      ["OUTGOING_PAYMENT_COMPLETED", "Transaction:b"],
      ["OUTGOING_PAYMENT_COMPLETED", "Transaction:a"],
      ["OUTGOING_PAYMENT_PENDING", "Transaction:a"],
    ]);
    const [newest] = all.events;
    expect(newest).toMatchObject({ deliveryStatus: "DELIVERED", attemptCount: 1, lastError: "", attempts: [] });
    expect(newest!.id).toMatch(/^Webhook:/);
    expect(JSON.parse(newest!.payload)).toMatchObject({ id: newest!.id, type: "OUTGOING_PAYMENT_COMPLETED", data: { id: "Transaction:b" } });
    expect(timestampDate(newest!.createdAt!)).toEqual(t2);
    expect(newest!.lastAttemptAt).toBeDefined();
    expect(newest!.nextAttemptAt).toBeUndefined();

    const byType = await n.client.listWebhookEvents({ platformId, type: "OUTGOING_PAYMENT_PENDING" });
    expect(byType.events.map((e) => e.resourceId)).toEqual(["Transaction:a"]);
    const byResource = await n.client.listWebhookEvents({ platformId, resourceId: "Transaction:a" });
    expect(byResource.events.map((e) => e.type)).toEqual(["OUTGOING_PAYMENT_COMPLETED", "OUTGOING_PAYMENT_PENDING"]);
    expect(byResource.pageInfo?.totalCount).toBe(2n);
    const ranged = await n.client.listWebhookEvents({ platformId, created: { after: timestampFromDate(t0), before: timestampFromDate(new Date(t2.getTime() - 1)) } });
    expect(ranged.events.map((e) => e.type)).toEqual(["OUTGOING_PAYMENT_COMPLETED", "OUTGOING_PAYMENT_PENDING"]);
    expect(ranged.events.every((e) => e.resourceId === "Transaction:a")).toBe(true);

    const first = await n.client.listWebhookEvents({ platformId, page: { limit: 2 } });
    expect(first.events).toHaveLength(2);
    expect(first.pageInfo).toMatchObject({ hasMore: true, totalCount: 3n });
    const second = await n.client.listWebhookEvents({ platformId, page: { limit: 2, cursor: first.pageInfo!.nextCursor } });
    expect(second.events.map((e) => e.id)).toEqual([all.events[2]!.id]);
    expect(second.pageInfo).toMatchObject({ hasMore: false, nextCursor: "" });

    expect(await publicError(n.client.listWebhookEvents({ platformId, page: { cursor: "not-a-cursor" } }))).toMatchObject({ outcome: "INVALID", code: "INVALID_INPUT" });
    expect((await n.client.listWebhookEvents({ platformId: newPlatformId() })).events).toEqual([]);
  });

  it("answers an event with every attempt: status, latency, a bounded excerpt of the answer, the error when none came", async () => {
    const platformId = await platformWithEndpoint();
    receiver.state.status = 500;
    receiver.state.reply = "x".repeat(RESPONSE_EXCERPT_CHARS * 3);
    await emit(platformId, "OUTGOING_PAYMENT_FAILED", "Transaction:d");
    await drain();
    const [listed] = (await n.client.listWebhookEvents({ platformId })).events;
    const { event } = await n.client.getWebhookEvent({ platformId, eventId: listed!.id });
    expect(event).toMatchObject({ id: listed!.id, deliveryStatus: "PENDING", attemptCount: 1, lastError: "endpoint answered 500" });
    expect(event!.nextAttemptAt).toBeDefined();
    expect(event!.attempts).toHaveLength(1);
    const [a] = event!.attempts;
    expect(a).toMatchObject({ webhookId: listed!.id, url: receiver.url, responseStatus: 500, delivered: false, error: "" });
    expect(a!.id).not.toBe("");
    expect(a!.latencyMs).toBeGreaterThanOrEqual(0);
    expect(a!.responseExcerpt).toBe("x".repeat(RESPONSE_EXCERPT_CHARS));

    // The endpoint hangs up without answering: the next attempt records no status and the failure's category (never the socket error).
    receiver.state.hangUp = true;
    advance(30_000);
    await drain();
    const after = (await n.client.getWebhookEvent({ platformId, eventId: listed!.id })).event!;
    expect(after.attemptCount).toBe(2);
    expect(after.attempts[1]).toMatchObject({ url: receiver.url, responseStatus: 0, delivered: false, responseExcerpt: "" });
    expect(after.attempts[1]!.error).toBe("connection failed");
    expect(after.lastError).toBe(after.attempts[1]!.error);
    expect(timestampDate(after.attempts[0]!.attemptedAt!).getTime()).toBeLessThan(timestampDate(after.attempts[1]!.attemptedAt!).getTime());
  });

  it("answers 404 EVENT_NOT_FOUND for another platform's event and an unknown id", async () => {
    const platformId = await platformWithEndpoint();
    await emit(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:e");
    const [mine] = (await n.client.listWebhookEvents({ platformId })).events;
    const stranger = newPlatformId();
    for (const call of [
      () => n.client.getWebhookEvent({ platformId: stranger, eventId: mine!.id }),
      () => n.client.redeliverWebhookEvent({ platformId: stranger, eventId: mine!.id }),
      () => n.client.getWebhookEvent({ platformId, eventId: "Webhook:0190f0a8-0000-7000-8000-000000000000" }),
    ]) {
      expect(await publicError(call())).toMatchObject({ outcome: "NOT_FOUND", code: "EVENT_NOT_FOUND" });
    }
    await drain();
  });

  it("redelivers a delivered event to the current endpoint: same id and body, signed afresh, one more attempt", async () => {
    const platformId = await platformWithEndpoint();
    await emit(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:f");
    await drain();
    expect(receiver.received).toHaveLength(1);
    const [listed] = (await n.client.listWebhookEvents({ platformId })).events;

    advance(5000);
    const res = await n.client.redeliverWebhookEvent({ platformId, eventId: listed!.id });
    expect(res.replayed).toBe(false);
    expect(res.event).toMatchObject({ id: listed!.id, deliveryStatus: "PENDING", attemptCount: 1 });
    expect(timestampDate(res.event!.redeliveredAt!)).toEqual(clock.now());
    await drain();

    expect(receiver.received).toHaveLength(2);
    const [first, again] = receiver.received;
    expect(again!.headers["webhook-id"]).toBe(listed!.id);
    expect(again!.body).toBe(first!.body);
    expect(again!.verified).toBe(true);
    expect(Number(again!.headers["webhook-timestamp"])).toBeGreaterThan(Number(first!.headers["webhook-timestamp"]));
    const event = (await n.client.getWebhookEvent({ platformId, eventId: listed!.id })).event!;
    expect(event).toMatchObject({ deliveryStatus: "DELIVERED", attemptCount: 2 });
    expect(event.attempts.map((a) => a.responseStatus)).toEqual([200, 200]);
  });

  it("redelivers an event that was skipped (it occurred before the endpoint was set)", async () => {
    // The copy says "no endpoint" as of after the event: it is skipped.
    const platformId = newPlatformId();
    await emit(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:g");
    advance(1000);
    await n.deliver(configUpdated(platformId, "", clock.now()));
    await drain();
    const [skipped] = (await n.client.listWebhookEvents({ platformId })).events;
    expect(skipped).toMatchObject({ deliveryStatus: "SKIPPED", attemptCount: 0 });
    expect(skipped!.lastError).toContain("no webhookEndpoint");

    advance(1000);
    await n.deliver(configUpdated(platformId, receiver.url, clock.now()));
    receiver.state.secret = (await n.client.getWebhookSettings({ platformId })).settings!.secret;
    advance(1000);
    await n.client.redeliverWebhookEvent({ platformId, eventId: skipped!.id });
    await drain();
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.headers["webhook-id"]).toBe(skipped!.id);
    expect(receiver.received[0]!.verified).toBe(true);
    expect((await n.client.getWebhookEvent({ platformId, eventId: skipped!.id })).event).toMatchObject({ deliveryStatus: "DELIVERED", attemptCount: 1 });
  });

  it("refuses a redelivery with 400 WEBHOOK_ENDPOINT_NOT_SET when the platform has no endpoint, changing nothing", async () => {
    const platformId = newPlatformId();
    await emit(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:h");
    advance(1000);
    await n.deliver(configUpdated(platformId, "", clock.now()));
    await drain();
    const [skipped] = (await n.client.listWebhookEvents({ platformId })).events;
    expect(await publicError(n.client.redeliverWebhookEvent({ platformId, eventId: skipped!.id }))).toMatchObject({
      outcome: "INVALID",
      code: "WEBHOOK_ENDPOINT_NOT_SET",
    });
    expect((await n.client.getWebhookEvent({ platformId, eventId: skipped!.id })).event).toMatchObject({ deliveryStatus: "SKIPPED", attemptCount: 0 });
    expect(skipped!.redeliveredAt).toBeUndefined();
  });

  it("under one Idempotency-Key queues the redelivery once and answers the replay; another key queues again", async () => {
    const platformId = await platformWithEndpoint();
    await emit(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:i");
    await drain();
    const [listed] = (await n.client.listWebhookEvents({ platformId })).events;

    const first = await n.client.redeliverWebhookEvent({ platformId, eventId: listed!.id, idempotencyKey: "redo-1" });
    await drain();
    const replay = await n.client.redeliverWebhookEvent({ platformId, eventId: listed!.id, idempotencyKey: "redo-1" });
    await drain();
    expect(first.replayed).toBe(false);
    expect(replay.replayed).toBe(true);
    expect(replay.event).toMatchObject({ id: listed!.id, deliveryStatus: "DELIVERED", attemptCount: 2 });
    expect(receiver.received).toHaveLength(2);

    await n.client.redeliverWebhookEvent({ platformId, eventId: listed!.id, idempotencyKey: "redo-2" });
    await drain();
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"]))).toEqual(new Set([listed!.id]));
  });

  it("retries a failing redelivery on the usual schedule, counted from the redelivery", async () => {
    const platformId = await platformWithEndpoint();
    await emit(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:j");
    await drain();
    const [listed] = (await n.client.listWebhookEvents({ platformId })).events;
    // Eight days later the event is far past its own 7 days, but a redelivery starts a new window.
    advance(8 * 24 * 60 * 60_000);
    receiver.state.status = 503;
    await n.client.redeliverWebhookEvent({ platformId, eventId: listed!.id });
    await drain();
    const pending = (await n.client.getWebhookEvent({ platformId, eventId: listed!.id })).event!;
    expect(pending).toMatchObject({ deliveryStatus: "PENDING", attemptCount: 2, lastError: "endpoint answered 503" });
    expect(timestampDate(pending.nextAttemptAt!).getTime() - clock.now().getTime()).toBe(30_000);
    receiver.state.status = 200;
    advance(30_000);
    await drain();
    expect((await n.client.getWebhookEvent({ platformId, eventId: listed!.id })).event).toMatchObject({ deliveryStatus: "DELIVERED", attemptCount: 3 });
  });
});
