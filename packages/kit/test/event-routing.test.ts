import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { AgentEventSchema } from "@corridor/proto/corridor/agents/v1/events_pb.js";
import { CustomerEventSchema } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { describe, expect, it } from "vitest";
import { PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { agentEventTopic, customerEventTopic, ledgerEventTopic, platformEventTopic } from "../src/event-routing.js";
import { topics } from "../src/topics.js";

const changed = (eventType: string, t: { quoteId?: string; agentId?: string; type?: string; source?: string; status?: string }) =>
  create(LedgerEventSchema, {
    eventType,
    payload: { case: "transactionChanged", value: { transaction: { id: "Transaction:1", quoteId: t.quoteId ?? "", agentId: t.agentId ?? "", type: t.type ?? "OUTGOING", status: t.status ?? "PENDING", source: { type: t.source ?? "ACCOUNT" } } } },
  });

const LIFECYCLE = ["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_PROCESSING", "OUTGOING_PAYMENT_COMPLETED", "OUTGOING_PAYMENT_FAILED", "OUTGOING_PAYMENT_REFUND_PENDING", "OUTGOING_PAYMENT_REFUND_COMPLETED"];

describe("ledgerEventTopic", () => {
  it("puts every event of a transaction on the one topic of its audience (quote, agent, both, neither)", () => {
    const cases: [{ quoteId?: string; agentId?: string }, string][] = [
      [{}, topics.ledgerTransactions],
      [{ quoteId: "Quote:1" }, topics.ledgerQuoteTransactions],
      [{ agentId: "Agent:1" }, topics.ledgerAgentTransactions],
      [{ quoteId: "Quote:1", agentId: "Agent:1" }, topics.ledgerAgentQuoteTransactions],
    ];
    for (const [facts, topic] of cases) {
      const routed = new Set(LIFECYCLE.map((type) => ledgerEventTopic(changed(type, facts))));
      expect([...routed]).toEqual([topic]);
    }
  });

  it("sends an incoming payment's PENDING to the approval guard when it is a UMA payment, nowhere read otherwise, and its outcome to notifications", () => {
    expect(ledgerEventTopic(changed("INCOMING_PAYMENT_PENDING", { type: "INCOMING", source: "UMA_ADDRESS" }))).toBe(topics.ledgerIncomingApprovals);
    expect(ledgerEventTopic(changed("INCOMING_PAYMENT_PENDING", { type: "INCOMING", source: "ACCOUNT" }))).toBe(topics.ledgerUnconsumed);
    expect(ledgerEventTopic(changed("INCOMING_PAYMENT_COMPLETED", { type: "INCOMING", source: "UMA_ADDRESS", status: "COMPLETED" }))).toBe(topics.ledgerTransactions);
    // A quote's or an agent's transaction keeps all its events on its topic, whatever the type.
    expect(ledgerEventTopic(changed("INCOMING_PAYMENT_PENDING", { type: "INCOMING", quoteId: "Quote:1" }))).toBe(topics.ledgerQuoteTransactions);
  });

  it("sends account events to the accounts topic", () => {
    expect(ledgerEventTopic(create(LedgerEventSchema, { eventType: "INTERNAL_ACCOUNT_BALANCE_UPDATED", payload: { case: "balanceUpdated", value: {} } }))).toBe(topics.ledgerAccounts);
    expect(ledgerEventTopic(create(LedgerEventSchema, { eventType: "EXTERNAL_ACCOUNT_UPDATED", payload: { case: "externalAccountChanged", value: {} } }))).toBe(topics.ledgerAccounts);
  });

  it("never routes to the former topic", () => {
    const all = [...LIFECYCLE, "INCOMING_PAYMENT_PENDING", "INCOMING_PAYMENT_COMPLETED"].flatMap((type) =>
      [{}, { quoteId: "q" }, { agentId: "a" }, { type: "INCOMING", source: "UMA_ADDRESS" }].map((f) => ledgerEventTopic(changed(type, f))),
    );
    expect(all).not.toContain(topics.ledger);
  });
});

describe("customerEventTopic", () => {
  const ev = (payload: MessageInitShape<typeof CustomerEventSchema>["payload"]) => create(CustomerEventSchema, { payload });
  it("puts the record events on the ledger's topic, the webhook ones on notifications', the rest on none", () => {
    expect(customerEventTopic(ev({ case: "customerCreated", value: {} }))).toBe(topics.customerRecords);
    expect(customerEventTopic(ev({ case: "customerUpdated", value: {} }))).toBe(topics.customerRecords);
    expect(customerEventTopic(ev({ case: "customerDeleted", value: {} }))).toBe(topics.customerRecords);
    expect(customerEventTopic(ev({ case: "customerStatusChanged", value: { customer: { verificationStatus: "APPROVED" } } }))).toBe(topics.customerNotices);
    expect(customerEventTopic(ev({ case: "customerStatusChanged", value: { customer: { verificationStatus: "UNVERIFIED" } } }))).toBe(topics.customerUnconsumed);
    expect(customerEventTopic(ev({ case: "verificationUpdated", value: { verification: { verificationStatus: "IN_PROGRESS" } } }))).toBe(topics.customerNotices);
    expect(customerEventTopic(ev({ case: "invitationUpdated", value: { invitation: { status: "CLAIMED" } } }))).toBe(topics.customerNotices);
    expect(customerEventTopic(ev({ case: "invitationUpdated", value: { invitation: { status: "PENDING" } } }))).toBe(topics.customerUnconsumed);
    expect(customerEventTopic(ev({ case: "customerImportFinished", value: { job: { status: "FAILED" } } }))).toBe(topics.customerNotices);
    expect(customerEventTopic(ev({ case: "beneficialOwnerUpdated", value: {} }))).toBe(topics.customerUnconsumed);
  });
});

describe("agentEventTopic", () => {
  it("puts the approval request on notifications' topic and the other action changes on none", () => {
    expect(agentEventTopic(create(AgentEventSchema, { eventType: "AGENT_ACTION_PENDING_APPROVAL" }))).toBe(topics.agentApprovals);
    for (const t of ["AGENT_ACTION_APPROVED", "AGENT_ACTION_REJECTED", "AGENT_ACTION_FAILED"]) expect(agentEventTopic(create(AgentEventSchema, { eventType: t }))).toBe(topics.agentActions);
  });
});

describe("platformEventTopic", () => {
  it("keeps a platform's creation and config changes on corridor.platforms.v1 and moves token revocations and delegated keys' changes off it", () => {
    expect(platformEventTopic(create(PlatformEventSchema, { payload: { case: "platformCreated", value: {} } }))).toBe(topics.platforms);
    expect(platformEventTopic(create(PlatformEventSchema, { payload: { case: "configUpdated", value: {} } }))).toBe(topics.platforms);
    expect(platformEventTopic(create(PlatformEventSchema, { payload: { case: "tokenRevoked", value: {} } }))).toBe(topics.platformTokens);
    expect(platformEventTopic(create(PlatformEventSchema, { payload: { case: "delegatedKeyChanged", value: {} } }))).toBe(topics.platformDelegatedKeys);
  });
});
