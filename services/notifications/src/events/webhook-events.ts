import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { newId, topics, type Clock, type ConsumerDefinition } from "@corridor/kit";
// data is the resource exactly as its GET answers it (decisions §8): the gateway's own mappers.
import { agentActionToJson, cardToJson, customerImportToJson, customerToJson, externalAccountToJson, internalAccountToJson, invitationToJson, transactionToJson, verificationToJson } from "@corridor/kit/rest-json";
import { AgentEventSchema, type AgentEvent } from "@corridor/proto/corridor/agents/v1/events_pb.js";
import { CustomerEventSchema, type CustomerEvent } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import { LedgerEventSchema, type LedgerEvent } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import type { Transaction } from "kysely";
import { enqueueWebhook, recordSkipped, type NewWebhook } from "../data/queue-repo.js";
import type { Db, NotificationsDatabase } from "../data/tables.js";
import type { WebhookEnvelope } from "../domain/delivery.js";
import { NO_ENDPOINT_REASON, type EndpointCopy } from "../workers/endpoint.js";
import { bulkUploadType, customerStatusType, invitationType, isDeliveredAgentType, isDeliveredLedgerType, verificationType } from "../domain/event-webhooks.js";

/** A webhook an event turns into: its public type and the resource as `data`. */
interface Derived {
  type: string;
  data: unknown;
}

export function customerWebhook(event: CustomerEvent): Derived | undefined {
  switch (event.payload.case) {
    case "customerStatusChanged": {
      const c = event.payload.value.customer;
      const type = c && customerStatusType(c.customerType, c.verificationStatus);
      return c && type ? { type, data: customerToJson(c) } : undefined;
    }
    case "verificationUpdated": {
      const v = event.payload.value.verification;
      const type = v && verificationType(v.verificationStatus);
      return v && type ? { type, data: verificationToJson(v) } : undefined;
    }
    case "invitationUpdated": {
      const i = event.payload.value.invitation;
      const type = i && invitationType(i.status);
      return i && type ? { type, data: invitationToJson(i) } : undefined;
    }
    case "customerImportFinished": {
      const j = event.payload.value.job;
      const type = j && bulkUploadType(j.status);
      return j && type ? { type, data: customerImportToJson(j) } : undefined;
    }
    default:
      return undefined;
  }
}

export function ledgerWebhook(event: LedgerEvent): Derived | undefined {
  if (!isDeliveredLedgerType(event.eventType)) return undefined;
  switch (event.payload.case) {
    case "transactionChanged":
      return event.payload.value.transaction ? { type: event.eventType, data: transactionToJson(event.payload.value.transaction) } : undefined;
    case "balanceUpdated":
      return event.payload.value.account ? { type: event.eventType, data: internalAccountToJson(event.payload.value.account) } : undefined;
    case "externalAccountChanged":
      return event.payload.value.account ? { type: event.eventType, data: externalAccountToJson(event.payload.value.account) } : undefined;
    case "cardChanged":
      return event.payload.value.card ? { type: event.eventType, data: cardToJson(event.payload.value.card) } : undefined;
    default:
      return undefined;
  }
}

/** AGENT_ACTION_PENDING_APPROVAL → the action as GET /agents/me/actions/{id} shows it; other action changes are not webhooks. */
export function agentWebhook(event: AgentEvent): Derived | undefined {
  if (!isDeliveredAgentType(event.eventType)) return undefined;
  switch (event.payload.case) {
    case "actionChanged":
      return event.payload.value.action ? { type: event.eventType, data: agentActionToJson(event.payload.value.action) } : undefined;
    default:
      return undefined;
  }
}

/** What the webhook consumers need. */
export interface WebhookConsumerDeps {
  clock: Clock;
  /**
   * What this process knows of each platform's endpoint: a webhook whose event occurred when
   * auth-sessions had already said the platform had no endpoint is stored SKIPPED at once (what
   * the worker would make of it), without being announced.
   */
  copy?: EndpointCopy;
  /**
   * Whether the platform has a webhook endpoint, read when asked (the kit's platform-facts client
   * over the config board: read-your-writes, see admitWithEndpoint); undefined when it cannot tell.
   * Without it every event is enqueued.
   */
  hasEndpoint?: (platformId: string) => Promise<boolean | undefined>;
}

/** An event as the webhook consumers read it. */
interface SourceEvent {
  eventId: string;
  platformId: string;
  occurredAt?: Timestamp;
}

/**
 * The webhook consumers' `admit` (ConsumerDefinition.admit), issue 28: the events of a platform
 * without an endpoint are stored SKIPPED here, in one multi-row INSERT for the fetched batch
 * (autocommit: no transaction, no inbox row; the queue row is unique per source event, so a
 * redelivery changes nothing), and refused, so they are never announced to the delivery worker
 * and its no-endpoint batch (look-up, settings, UPDATE to SKIPPED) never runs for them. They stay
 * readable through the events API (decisions §8), as the same rows the worker would have settled.
 *
 * The rule (docs/events.md, "Which events an endpoint receives"): an event is delivered iff
 * notifications, reading the platform's config after the event was fetched, finds an endpoint
 * there, and the event occurred no earlier than that endpoint was set (the worker's check,
 * endpointVerdict). The read is fresh: it happens after the event committed, and the config board
 * shows a change from before its transaction until after its commit (a PATCH marks the board,
 * commits, publishes, then answers), so a read that finds no endpoint proves none was saved
 * before the event committed; an endpoint saved later was saved after the event, which an
 * endpoint never receives (decisions §8), so SKIPPED is what the worker would have made of it.
 * Every event produced after the PATCH that set the endpoint answered is therefore delivered.
 * One read per platform per fetched batch; a platform it cannot tell about (auth-sessions
 * unreachable) is enqueued as before and the worker decides. A failed INSERT throws, which
 * admits every event (the consumer enqueues them and the worker decides).
 */
export async function admitWithEndpoint<E extends SourceEvent>(
  deps: WebhookConsumerDeps,
  events: E[],
  derive: (event: E) => Derived | undefined,
  db: Db,
): Promise<boolean[]> {
  const ask = deps.hasEndpoint;
  if (!ask) return events.map(() => true);
  const answers = new Map<string, Promise<boolean | undefined>>();
  for (const e of events) {
    if (answers.has(e.platformId)) continue;
    answers.set(
      e.platformId,
      ask(e.platformId).then(
        (has) => {
          // A fresh answer is also the best hint the worker can have (an endpoint appearing releases what it holds back).
          if (has !== undefined) deps.copy?.saw(e.platformId, has);
          return has;
        },
        () => undefined,
      ),
    );
  }
  const known = new Map<string, boolean | undefined>();
  for (const [platformId, p] of answers) known.set(platformId, await p);
  const admitted = events.map((e) => known.get(e.platformId) !== false);
  const skipped: NewWebhook[] = [];
  events.forEach((e, i) => {
    if (admitted[i]) return;
    // An event that is no webhook leaves no row either way.
    const derived = derive(e);
    if (derived) skipped.push(webhookOf(deps, e, derived));
  });
  await recordSkipped(db, skipped, NO_ENDPOINT_REASON);
  return admitted;
}

/** The queue row's content for an event's webhook: a fresh webhook id, and the envelope GET /events shows as its payload. */
function webhookOf(deps: WebhookConsumerDeps, event: SourceEvent, derived: Derived): NewWebhook & { occurredAt: Date } {
  const now = deps.clock.now();
  const webhookId = newId("Webhook");
  const occurredAt = new Date((event.occurredAt ? timestampDate(event.occurredAt) : now).toISOString());
  const envelope: WebhookEnvelope<unknown> = {
    id: webhookId,
    type: derived.type,
    timestamp: occurredAt.toISOString(),
    data: derived.data,
  };
  return { webhookId, platformId: event.platformId, sourceEventId: event.eventId, type: derived.type, payload: JSON.stringify(envelope), at: now, occurredAt };
}

/**
 * Enqueues the webhook in the consumer's transaction (for an event `admit` let through); the
 * delivery worker posts it later. The webhook consumers are batched (ConsumerDefinition.batch): an
 * enqueue only inserts, so a burst of events costs one transaction per batch, not one per event.
 * They are `idempotent`: the queue row is unique per source event (ON CONFLICT (source_event_id)
 * DO NOTHING), so it is the only row an event costs, and no inbox row is written beside it.
 */
async function enqueue(trx: Transaction<any>, deps: WebhookConsumerDeps, event: SourceEvent, derived: Derived): Promise<void> {
  const w = webhookOf(deps, event, derived);
  await enqueueWebhook(trx as Transaction<NotificationsDatabase>, { ...w, skipped: deps.copy?.skipAtEnqueue(event.platformId, w.occurredAt) });
}

/** The ledger's topics that carry webhooks (the kit's ledgerEventTopic: every audience notifications is part of). */
export const LEDGER_WEBHOOK_TOPICS = [topics.ledgerTransactions, topics.ledgerQuoteTransactions, topics.ledgerAgentTransactions, topics.ledgerAgentQuoteTransactions, topics.ledgerAccounts] as const;

/** corridor.customers.notices.v1 (corridor.customers.v1 before) → CUSTOMER_{KYC,KYB}_*, VERIFICATION_*, INVITATION_CLAIMED, BULK_UPLOAD_{COMPLETED,FAILED} webhooks. */
export function customerWebhooksConsumer(deps: WebhookConsumerDeps): ConsumerDefinition<typeof CustomerEventSchema> {
  return {
    name: "customer-webhooks",
    batch: true,
    idempotent: true,
    admit: (events, db) => admitWithEndpoint(deps, events, customerWebhook, db),
    topic: topics.customerNotices,
    formerTopics: [topics.customers],
    schema: CustomerEventSchema,
    eventId: (e) => e.eventId,
    async handle(event, trx) {
      const derived = customerWebhook(event);
      if (derived) await enqueue(trx, deps, event, derived);
    },
  };
}

/** The ledger's webhook topics (corridor.ledger.v1 before) → OUTGOING_PAYMENT_*, INCOMING_PAYMENT_{COMPLETED,FAILED}, INTERNAL_ACCOUNT_BALANCE_UPDATED, EXTERNAL_ACCOUNT_UPDATED webhooks. */
export function ledgerWebhooksConsumer(deps: WebhookConsumerDeps): ConsumerDefinition<typeof LedgerEventSchema> {
  return {
    name: "ledger-webhooks",
    batch: true,
    idempotent: true,
    admit: (events, db) => admitWithEndpoint(deps, events, ledgerWebhook, db),
    topic: LEDGER_WEBHOOK_TOPICS,
    formerTopics: [topics.ledger],
    schema: LedgerEventSchema,
    eventId: (e) => e.eventId,
    async handle(event, trx) {
      const derived = ledgerWebhook(event);
      if (derived) await enqueue(trx, deps, event, derived);
    },
  };
}

/** corridor.agents.approvals.v1 (corridor.agents.v1 before) → AGENT_ACTION_PENDING_APPROVAL webhooks (the platform approves or rejects the action). */
export function agentWebhooksConsumer(deps: WebhookConsumerDeps): ConsumerDefinition<typeof AgentEventSchema> {
  return {
    name: "agent-webhooks",
    batch: true,
    idempotent: true,
    admit: (events, db) => admitWithEndpoint(deps, events, agentWebhook, db),
    topic: topics.agentApprovals,
    formerTopics: [topics.agents],
    schema: AgentEventSchema,
    eventId: (e) => e.eventId,
    async handle(event, trx) {
      const derived = agentWebhook(event);
      if (derived) await enqueue(trx, deps, event, derived);
    },
  };
}
