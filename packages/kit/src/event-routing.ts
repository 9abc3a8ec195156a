import type { PlatformEvent } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import type { AgentEvent } from "@corridor/proto/corridor/agents/v1/events_pb.js";
import type { CustomerEvent } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import type { LedgerEvent } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { topics } from "./topics.js";

/*
 * Which topic a producer writes an event to (issue 28: events reach only the services that act on
 * them). A topic is one audience: the set of services that act on every kind of event it carries
 * (docs/events.md, "Who acts on what"). Two rules keep the guarantees:
 * - Events whose relative order a consumer needs go to one topic: the route of a transaction's
 *   events depends only on facts fixed at its creation (quote, agent, type, source), so all of
 *   them share a topic and its key; a customer's record events share one.
 * - A consumer's filter (`relevant`) stays as it was, so an event routed too broadly is still
 *   ignored correctly; routing only spares the services that would have ignored it.
 * The outbox row keeps the topic chosen, so a row written before an upgrade is published where
 * its version wrote it (the former topics, read until drained: ConsumerDefinition.formerTopics).
 */

/** The event types of the ledger that no service turns into a webhook (notifications ignores them). */
const LEDGER_TYPES_WITHOUT_WEBHOOK: ReadonlySet<string> = new Set(["INCOMING_PAYMENT_PENDING"]);

/** The topic of a LedgerEvent (replaces corridor.ledger.v1). */
export function ledgerEventTopic(event: Pick<LedgerEvent, "eventType" | "payload">): string {
  if (event.payload.case !== "transactionChanged") return topics.ledgerAccounts;
  const t = event.payload.value.transaction;
  const quote = !!t?.quoteId;
  const agent = !!t?.agentId;
  if (quote && agent) return topics.ledgerAgentQuoteTransactions;
  if (quote) return topics.ledgerQuoteTransactions;
  if (agent) return topics.ledgerAgentTransactions;
  // A transaction of neither: notifications is its only reader, except for the one event type it
  // ignores, which goes where its only possible reader is (the incoming approval guard of
  // quotes-fx, for an incoming UMA payment) or to no reader. Nobody needs that event in order with
  // the transaction's later ones (notifications never reads it).
  if (LEDGER_TYPES_WITHOUT_WEBHOOK.has(event.eventType)) {
    return t?.type === "INCOMING" && t.source?.type === "UMA_ADDRESS" ? topics.ledgerIncomingApprovals : topics.ledgerUnconsumed;
  }
  return topics.ledgerTransactions;
}

/** The verification statuses of a customer that are webhooks (CUSTOMER_{KYC,KYB}_<status>, decisions §8). */
const CUSTOMER_WEBHOOK_STATUSES: ReadonlySet<string> = new Set(["APPROVED", "REJECTED", "PENDING"]);

/**
 * The topic of a CustomerEvent (replaces corridor.customers.v1): the customer's record (ledger),
 * the changes notifications turns into webhooks, or the others (no reader: beneficial owners,
 * invitations not claimed, statuses that are no webhook). Notifications' own rule
 * (services/notifications/src/events/webhook-events.ts, customerWebhook) is checked against this
 * one by its tests.
 */
export function customerEventTopic(event: Pick<CustomerEvent, "payload">): string {
  const p = event.payload;
  switch (p.case) {
    case "customerCreated":
    case "customerUpdated":
    case "customerDeleted":
      return topics.customerRecords;
    case "customerStatusChanged":
      return CUSTOMER_WEBHOOK_STATUSES.has(p.value.customer?.verificationStatus ?? "") ? topics.customerNotices : topics.customerUnconsumed;
    case "verificationUpdated":
      return p.value.verification?.verificationStatus ? topics.customerNotices : topics.customerUnconsumed;
    case "invitationUpdated":
      return p.value.invitation?.status === "CLAIMED" ? topics.customerNotices : topics.customerUnconsumed;
    case "customerImportFinished":
      return p.value.job?.status === "COMPLETED" || p.value.job?.status === "FAILED" ? topics.customerNotices : topics.customerUnconsumed;
    default:
      return topics.customerUnconsumed;
  }
}

/** The topic of an AgentEvent (replaces corridor.agents.v1): the approval request (notifications' webhook), or the others (no reader). */
export function agentEventTopic(event: Pick<AgentEvent, "eventType">): string {
  return event.eventType === "AGENT_ACTION_PENDING_APPROVAL" ? topics.agentApprovals : topics.agentActions;
}

/**
 * The topic of a PlatformEvent: a platform's creation and config changes stay on
 * corridor.platforms.v1 (every reader of it acts on them, in order), a token's revocation, which
 * no service acts on, goes to corridor.platforms.tokens.v1, a delegated key's change (the ledger's
 * alone: a card funding source's status) to corridor.platforms.delegated-keys.v1. Nothing moved
 * away from a topic someone reads, so no upgrade step: TokenRevoked events an older auth-sessions
 * wrote on corridor.platforms.v1 are ignored there as before.
 */
export function platformEventTopic(event: Pick<PlatformEvent, "payload">): string {
  switch (event.payload.case) {
    case "tokenRevoked":
      return topics.platformTokens;
    case "delegatedKeyChanged":
      return topics.platformDelegatedKeys;
    default:
      return topics.platforms;
  }
}
