import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { customerEventTopic, ledgerEventTopic, ManualClock, topics } from "@corridor/kit";
import { CustomerEventSchema, type CustomerEvent } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import { LedgerEventSchema, type LedgerEvent } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { listDeliveries } from "../src/data/deliveries-repo.js";
import { listQueued } from "../src/data/queue-repo.js";
import { bulkUploadType, customerStatusType, invitationType, retryDelayMs, verificationType } from "../src/domain/event-webhooks.js";
import { LEDGER_WEBHOOK_TOPICS, ledgerWebhook } from "../src/events/webhook-events.js";
import { configUpdated, newPlatformId, openTestDatabase, startNotifications, type NotificationsUnderTest } from "./support.js";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  verified: boolean;
}

/** A platform's receiver on 127.0.0.1: verifies each request with `secret` and answers `reply.status`. */
async function startReceiver() {
  const received: Received[] = [];
  const state = { secret: "", status: 204 };
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
      res.writeHead(state.status).end();
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
          status: "PROCESSING",
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

function kycApproved(platformId: string, customerId: string, at: Date): CustomerEvent {
  return create(CustomerEventSchema, {
    eventId: `Event:${crypto.randomUUID()}`,
    occurredAt: timestampFromDate(at),
    platformId,
    payload: {
      case: "customerStatusChanged",
      value: {
        customer: {
          id: customerId,
          platformId,
          platformCustomerId: "user-1",
          customerType: "INDIVIDUAL",
          verificationStatus: "APPROVED",
          createdAt: timestampFromDate(at),
          updatedAt: timestampFromDate(at),
        },
        previousStatus: "PENDING",
      },
    },
  });
}

describe("event webhooks: enqueued by the consumers, delivered by the worker with retries", () => {
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
    receiver.state.status = 204;
  });
  afterEach(() => vi.useRealTimers());

  async function platformWithEndpoint(): Promise<string> {
    const platformId = newPlatformId();
    await n.deliver(configUpdated(platformId, receiver.url, clock.now()));
    receiver.state.secret = (await n.client.getWebhookSettings({ platformId })).settings!.secret;
    return platformId;
  }

  /** Polls until nothing is due (a poll that picked rows may leave none or more due). */
  async function drain() {
    while ((await n.worker.runOnce()) > 0);
  }

  it("consumes the customers and ledger topics", () => {
    expect(n.customerConsumer.topic).toBe(topics.customerNotices);
    expect(n.customerConsumer.formerTopics).toEqual([topics.customers]);
    expect(n.ledgerConsumer.topic).toEqual([topics.ledgerTransactions, topics.ledgerQuoteTransactions, topics.ledgerAgentTransactions, topics.ledgerAgentQuoteTransactions, topics.ledgerAccounts]);
    expect(n.ledgerConsumer.formerTopics).toEqual([topics.ledger]);
    // The queue row is unique per source event, so the webhook consumers write no inbox row.
    expect([n.customerConsumer.idempotent, n.ledgerConsumer.idempotent]).toEqual([true, true]);
  });

  it("is routed every event it turns into a webhook, and none it ignores (the kit's routing agrees with its rules)", () => {
    const at = clock.now();
    const ledgerTypes = [
      "OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_PROCESSING", "OUTGOING_PAYMENT_COMPLETED", "OUTGOING_PAYMENT_FAILED", "OUTGOING_PAYMENT_EXPIRED",
      "OUTGOING_PAYMENT_REFUND_PENDING", "OUTGOING_PAYMENT_REFUND_COMPLETED", "OUTGOING_PAYMENT_REFUND_FAILED",
      "INCOMING_PAYMENT_PENDING", "INCOMING_PAYMENT_COMPLETED", "INCOMING_PAYMENT_FAILED",
    ];
    let webhooks = 0;
    for (const type of ledgerTypes) {
      for (const facts of [{}, { quoteId: "Quote:1" }, { agentId: "Agent:1" }, { quoteId: "Quote:1", agentId: "Agent:1" }, { type: "INCOMING", source: { type: "UMA_ADDRESS" } }]) {
        const e = transactionEvent("p", type, "Transaction:t", at);
        const t = e.payload.case === "transactionChanged" ? e.payload.value.transaction! : undefined;
        Object.assign(t!, { quoteId: "", agentId: "" }, facts, "source" in facts ? { source: { ...t!.source, type: "UMA_ADDRESS" } } : {});
        const routed = (LEDGER_WEBHOOK_TOPICS as readonly string[]).includes(ledgerEventTopic(e));
        // A quote's or an agent's transaction keeps all its events on one topic (order), so notifications may be handed one it ignores there.
        if (ledgerWebhook(e)) {
          webhooks++;
          expect(routed, type).toBe(true);
        } else if (!("quoteId" in facts) && !("agentId" in facts)) expect(routed, type).toBe(false);
      }
    }
    expect(webhooks).toBeGreaterThan(0);
    for (const payload of [
      { case: "balanceUpdated" as const, value: {} },
      { case: "externalAccountChanged" as const, value: {} },
      { case: "cardChanged" as const, value: {} },
    ]) {
      const type = { balanceUpdated: "INTERNAL_ACCOUNT_BALANCE_UPDATED", externalAccountChanged: "EXTERNAL_ACCOUNT_UPDATED", cardChanged: "CARD_STATE_CHANGE" }[payload.case];
      const e = create(LedgerEventSchema, { eventType: type, payload });
      expect(ledgerEventTopic(e)).toBe(topics.ledgerAccounts);
    }
    // customerWebhook's rules (the type of each change; undefined: no webhook).
    const cases: (readonly [{ case: string; value: unknown }, string | undefined])[] = [
      ...["APPROVED", "REJECTED", "PENDING", "UNVERIFIED", "IN_PROGRESS"].map((st) => [{ case: "customerStatusChanged", value: { customer: { verificationStatus: st } } }, customerStatusType("INDIVIDUAL", st)] as const),
      ...["APPROVED", "IN_PROGRESS", ""].map((st) => [{ case: "verificationUpdated", value: { verification: { verificationStatus: st } } }, verificationType(st)] as const),
      ...["PENDING", "CLAIMED", "CANCELLED"].map((st) => [{ case: "invitationUpdated", value: { invitation: { status: st } } }, invitationType(st)] as const),
      ...["COMPLETED", "FAILED", "PROCESSING"].map((st) => [{ case: "customerImportFinished", value: { job: { status: st } } }, bulkUploadType(st)] as const),
      [{ case: "customerCreated", value: {} }, undefined],
      [{ case: "beneficialOwnerUpdated", value: {} }, undefined],
    ];
    for (const [payload, type] of cases) {
      const e = create(CustomerEventSchema, { eventId: "e", platformId: "p", payload: payload as never });
      expect(customerEventTopic(e) === topics.customerNotices, JSON.stringify(payload)).toBe(type !== undefined);
    }
  });

  it("delivers a ledger event once, signed, with data = the Transaction JSON, even when the consumer handles it twice", async () => {
    const platformId = await platformWithEndpoint();
    const event = transactionEvent(platformId, "OUTGOING_PAYMENT_PROCESSING", "Transaction:t1", clock.now());
    await n.handle(n.ledgerConsumer, event);
    await n.handle(n.ledgerConsumer, event);
    await drain();
    await drain();

    expect(receiver.received).toHaveLength(1);
    const [req] = receiver.received;
    expect(req!.verified).toBe(true);
    const body = JSON.parse(req!.body);
    expect(body).toMatchObject({ type: "OUTGOING_PAYMENT_PROCESSING", timestamp: clock.now().toISOString() });
    expect(body.id).toMatch(/^Webhook:/);
    expect(req!.headers["webhook-id"]).toBe(body.id);
    expect(body.data).toMatchObject({ id: "Transaction:t1", status: "PROCESSING", type: "OUTGOING", receivedAmount: { amount: 1000 } });
    const [row] = await listQueued(n.db, platformId);
    expect(row).toMatchObject({ status: "DELIVERED", attempts: 1 });
    const attempts = await listDeliveries(n.db, platformId);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ webhookId: body.id, responseStatus: 204, delivered: true });
  });

  it("delivers CUSTOMER_KYC_APPROVED with the customer as data", async () => {
    const platformId = await platformWithEndpoint();
    await n.handle(n.customerConsumer, kycApproved(platformId, "Customer:c1", clock.now()));
    await drain();
    expect(receiver.received).toHaveLength(1);
    const body = JSON.parse(receiver.received[0]!.body);
    expect(body).toMatchObject({ type: "CUSTOMER_KYC_APPROVED", data: { id: "Customer:c1", platformCustomerId: "user-1", customerType: "INDIVIDUAL", kycStatus: "APPROVED", isDeleted: false } });
    expect(receiver.received[0]!.verified).toBe(true);
  });

  it("delivers EXTERNAL_ACCOUNT_UPDATED (a bank's notification of change) with the external account as data", async () => {
    const platformId = await platformWithEndpoint();
    const event = create(LedgerEventSchema, {
      eventId: `Event:noc-${platformId}`,
      occurredAt: timestampFromDate(clock.now()),
      platformId,
      eventType: "EXTERNAL_ACCOUNT_UPDATED",
      payload: {
        case: "externalAccountChanged",
        value: {
          account: { id: "ExternalAccount:e1", status: "ACTIVE", currency: "USD", accountInfo: { accountType: "USD_ACCOUNT", accountNumber: "99990000", routingNumber: "021000021" }, createdAt: timestampFromDate(clock.now()), updatedAt: timestampFromDate(clock.now()) },
          changeCode: "C01",
          transactionId: "Transaction:t9",
          changedFields: ["accountNumber"],
        },
      },
    });
    await n.handle(n.ledgerConsumer, event);
    await drain();
    expect(receiver.received).toHaveLength(1);
    const body = JSON.parse(receiver.received[0]!.body);
    expect(body).toMatchObject({ type: "EXTERNAL_ACCOUNT_UPDATED", data: { id: "ExternalAccount:e1", currency: "USD", customerId: null, accountInfo: { accountNumber: "99990000" } } });
  });

  it("delivers CARD_STATE_CHANGE with the card as GET /cards/{id} answers it", async () => {
    const platformId = await platformWithEndpoint();
    const at = timestampFromDate(clock.now());
    const event = create(LedgerEventSchema, {
      eventId: `Event:card-${platformId}`,
      occurredAt: at,
      platformId,
      eventType: "CARD_STATE_CHANGE",
      payload: {
        case: "cardChanged",
        value: {
          card: { id: "Card:c1", platformId, cardholderId: "Customer:c1", platformCardId: "card-1", state: "ACTIVE", form: "VIRTUAL", brand: "VISA", last4: "4242", expMonth: 12, expYear: 2029, issuerRef: "sandbox_card_1", fundingSources: ["InternalAccount:a1"], currency: "USD", createdAt: at, updatedAt: at },
          previousState: "PROCESSING",
        },
      },
    });
    await n.handle(n.ledgerConsumer, event);
    await drain();
    expect(receiver.received).toHaveLength(1);
    const body = JSON.parse(receiver.received[0]!.body);
    expect(body).toMatchObject({ type: "CARD_STATE_CHANGE", data: { id: "Card:c1", state: "ACTIVE", stateReason: null, last4: "4242", fundingSources: ["InternalAccount:a1"], maxSpendPerTransaction: null } });
  });

  it("enqueues nothing for INCOMING_PAYMENT_PENDING or event types that are not webhooks", async () => {
    const platformId = await platformWithEndpoint();
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "INCOMING_PAYMENT_PENDING", "Transaction:t2", clock.now()));
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "RAIL_OUTBOUND", "Transaction:t3", clock.now()));
    await drain();
    expect(await listQueued(n.db, platformId)).toEqual([]);
    expect(receiver.received).toHaveLength(0);
  });

  it("retries after a 500 only once the backoff has passed, then delivers", async () => {
    const platformId = await platformWithEndpoint();
    receiver.state.status = 500;
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_COMPLETED", "Transaction:t4", clock.now()));
    await drain();
    expect(receiver.received).toHaveLength(1);

    advance(retryDelayMs(1) - 1000);
    await drain();
    expect(receiver.received).toHaveLength(1); // not yet due

    advance(1000);
    await drain();
    expect(receiver.received).toHaveLength(2);

    receiver.state.status = 200;
    advance(retryDelayMs(2));
    await drain();
    expect(receiver.received).toHaveLength(3);
    // Retries repeat the webhook id and body; the signature is fresh for each attempt's timestamp.
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(receiver.received.every((r) => r.verified)).toBe(true);

    const [row] = await listQueued(n.db, platformId);
    expect(row).toMatchObject({ status: "DELIVERED", attempts: 3 });
    const attempts = await listDeliveries(n.db, platformId);
    expect(attempts.map((a) => a.responseStatus).sort()).toEqual([200, 500, 500]);
  });

  it("does not retry after a 409", async () => {
    const platformId = await platformWithEndpoint();
    receiver.state.status = 409;
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_FAILED", "Transaction:t5", clock.now()));
    await drain();
    advance(60 * 60_000);
    await drain();
    expect(receiver.received).toHaveLength(1);
    const [row] = await listQueued(n.db, platformId);
    expect(row).toMatchObject({ status: "FAILED", attempts: 1 });
    expect(row?.last_error).toContain("409");
  });

  it("backs off exponentially up to 30 minutes and gives up after 7 days", async () => {
    const platformId = await platformWithEndpoint();
    receiver.state.status = 503;
    const start = clock.now().getTime();
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_EXPIRED", "Transaction:t6", clock.now()));
    await drain();
    for (let i = 0; i < 1000; i++) {
      const [row] = await listQueued(n.db, platformId);
      if (row!.status !== "PENDING") break;
      advance(row!.next_attempt_at.getTime() - clock.now().getTime());
      await drain();
    }
    const [row] = await listQueued(n.db, platformId);
    expect(row?.status).toBe("FAILED");
    expect(row?.last_error).toContain("7 days");
    const times = receiver.received.map((r) => Number(r.headers["webhook-timestamp"]) * 1000);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps.slice(0, 4)).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(Math.max(...gaps)).toBe(30 * 60_000);
    const last = times[times.length - 1]!;
    expect(last - start).toBeLessThanOrEqual(7 * 24 * 60 * 60_000);
    expect(last - start + 30 * 60_000).toBeGreaterThan(7 * 24 * 60 * 60_000);
    expect(row?.attempts).toBe(receiver.received.length);
  }, 120_000);

  // An endpoint receives the events that occur after it is set (see delivery.test.ts for the
  // backlog that is not released); here the endpoint was set first but its event arrives late.
  it("keeps a webhook waiting while the endpoint copy lags behind the event, and delivers it once the config set before the event arrives", async () => {
    const platformId = newPlatformId();
    const setAt = clock.now();
    advance(1000);
    await n.handle(n.ledgerConsumer, transactionEvent(platformId, "OUTGOING_PAYMENT_PENDING", "Transaction:t7", clock.now()));
    await drain();
    expect(await listDeliveries(n.db, platformId)).toEqual([]);
    expect((await listQueued(n.db, platformId))[0]).toMatchObject({ status: "PENDING", attempts: 0 });

    await n.deliver(configUpdated(platformId, receiver.url, setAt));
    receiver.state.secret = (await n.client.getWebhookSettings({ platformId })).settings!.secret;
    advance(60_000);
    await drain();
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.verified).toBe(true);
  });
});
