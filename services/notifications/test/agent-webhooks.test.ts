import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ManualClock, topics } from "@corridor/kit";
import { agentActionToJson } from "@corridor/kit/rest-json";
import { AgentEventSchema, type AgentEvent } from "@corridor/proto/corridor/agents/v1/events_pb.js";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { listQueued } from "../src/data/queue-repo.js";
import { agentWebhook } from "../src/events/webhook-events.js";
import { configUpdated, newPlatformId, openTestDatabase, startNotifications, type NotificationsUnderTest } from "./support.js";

/** An agent-action event as the agents service publishes it on corridor.agents.approvals.v1. */
function actionEvent(platformId: string, eventType: string, status: string, at: Date): AgentEvent {
  const ts = timestampFromDate(at);
  const usd = { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 };
  return create(AgentEventSchema, {
    eventId: `Event:${crypto.randomUUID()}`,
    occurredAt: ts,
    platformId,
    eventType,
    payload: {
      case: "actionChanged",
      value: {
        action: {
          id: `AgentAction:${crypto.randomUUID()}`,
          platformId,
          agentId: "Agent:a1",
          customerId: "Customer:c1",
          platformCustomerId: "user-1",
          status,
          type: "EXECUTE_QUOTE",
          createdAt: ts,
          updatedAt: ts,
          expiresAt: timestampFromDate(new Date(at.getTime() + 300_000)),
          transferDetails: { amount: 10_000n, currency: "USD", sourceAccountId: "InternalAccount:i1", destinationAccountId: "ExternalAccount:e1" },
          quote: {
            id: "Quote:q1",
            platformId,
            status: "PENDING",
            createdAt: ts,
            expiresAt: timestampFromDate(new Date(at.getTime() + 300_000)),
            source: { sourceType: "ACCOUNT", accountId: "InternalAccount:i1", customerId: "Customer:c1", currency: "USD" },
            destination: { destinationType: "ACCOUNT", accountId: "ExternalAccount:e1", currency: "EUR" },
            sendingCurrency: usd,
            receivingCurrency: { code: "EUR", name: "Euro", symbol: "€", decimals: 2 },
            totalSendingAmount: 10_000n,
            totalReceivingAmount: 9_196n,
            exchangeRate: "1.08216",
            feesIncluded: 48n,
            transactionId: "Transaction:t1",
            lockedCurrencySide: "SENDING",
            agentId: "Agent:a1",
          },
          countedAmount: 10_000n,
        },
      },
    },
  });
}

describe("AGENT_ACTION_PENDING_APPROVAL webhooks from corridor.agents.approvals.v1", () => {
  const clock = new ManualClock(new Date());
  let close: () => Promise<void>;
  let n: NotificationsUnderTest;
  const received: { body: string; verified: boolean }[] = [];
  let secret = "";
  let url = "";
  let server: ReturnType<typeof createServer>;

  beforeAll(async () => {
    const db = await openTestDatabase();
    close = db.close;
    n = await startNotifications(db.handle, clock, { NOTIFICATIONS_WEBHOOK_TIMEOUT_MS: "5000" });
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        let verified = false;
        try {
          new Webhook(secret).verify(body, req.headers as Record<string, string>);
          verified = true;
        } catch {
          verified = false;
        }
        received.push({ body, verified });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await close();
  });
  beforeEach(() => {
    // standardwebhooks checks webhook-timestamp against Date.now(): Date follows the manual clock.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(clock.now());
    received.length = 0;
  });
  afterEach(() => vi.useRealTimers());

  async function platformWithEndpoint(): Promise<string> {
    const platformId = newPlatformId();
    await n.deliver(configUpdated(platformId, url, clock.now()));
    secret = (await n.client.getWebhookSettings({ platformId })).settings!.secret;
    return platformId;
  }

  it("consumes the agents topic", () => {
    expect(n.agentConsumer.topic).toBe(topics.agentApprovals);
    expect(n.agentConsumer.formerTopics).toEqual([topics.agents]);
  });

  it("delivers AGENT_ACTION_PENDING_APPROVAL once, signed, with data = the AgentAction JSON of the public API", async () => {
    const platformId = await platformWithEndpoint();
    const event = actionEvent(platformId, "AGENT_ACTION_PENDING_APPROVAL", "PENDING_APPROVAL", clock.now());
    await n.handle(n.agentConsumer, event);
    while ((await n.worker.runOnce()) > 0);

    expect(received).toHaveLength(1);
    expect(received[0]!.verified).toBe(true);
    const body = JSON.parse(received[0]!.body);
    expect(body).toMatchObject({ type: "AGENT_ACTION_PENDING_APPROVAL", timestamp: clock.now().toISOString() });
    expect(body.id).toMatch(/^Webhook:/);
    const action = event.payload.case === "actionChanged" ? event.payload.value.action : undefined;
    expect(body.data).toEqual(JSON.parse(JSON.stringify(agentActionToJson(action))));
    expect(body.data).toMatchObject({
      agentId: "Agent:a1",
      customerId: "Customer:c1",
      status: "PENDING_APPROVAL",
      type: "EXECUTE_QUOTE",
      transferDetails: { amount: 10_000, currency: "USD", sourceAccountId: "InternalAccount:i1", destinationAccountId: "ExternalAccount:e1" },
      quote: { id: "Quote:q1" },
    });
    // Internal bookkeeping never reaches the platform.
    expect(body.data).not.toHaveProperty("countedAmount");
    expect(body.data).not.toHaveProperty("platformId");
  });

  it("enqueues nothing for the other action changes (APPROVED, REJECTED, FAILED)", async () => {
    const platformId = await platformWithEndpoint();
    for (const [type, status] of [["AGENT_ACTION_APPROVED", "APPROVED"], ["AGENT_ACTION_REJECTED", "REJECTED"], ["AGENT_ACTION_FAILED", "FAILED"]] as const) {
      await n.handle(n.agentConsumer, actionEvent(platformId, type, status, clock.now()));
    }
    expect(await listQueued(n.db, platformId)).toEqual([]);
  });

  it("ignores an event without an action", () => {
    const empty = create(AgentEventSchema, { eventId: "Event:e", platformId: "Platform:p", eventType: "AGENT_ACTION_PENDING_APPROVAL" });
    expect(agentWebhook(empty)).toBeUndefined();
  });
});
