import { timestampDate } from "@bufbuild/protobuf/wkt";
import { topics, type ConsumerDefinition, type Logger } from "@corridor/kit";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { CustomerEventSchema } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import { RailOutcomeSchema, type RailOutcome } from "@corridor/proto/corridor/ledger/v1/rails_pb.js";
import { RailNoticeSchema } from "@corridor/proto/corridor/ledger/v1/rail_notices_pb.js";
import { SandboxEventSchema } from "@corridor/proto/corridor/sandbox/v1/events_pb.js";
import type { Cards } from "../domain/cards.js";
import type { Ledger } from "../domain/ledger.js";
import type { QuoteOutcomeStatus } from "../domain/quotes.js";
import type { RailOutcomeInput } from "../domain/rail-outcomes.js";
import type { RailStatus } from "../domain/transactions.js";

// REFUND_* and REFUNDED come only for QUOTE_PAYOUT instructions.
const RAIL_STATUSES: ReadonlySet<string> = new Set(["PROCESSING", "COMPLETED", "FAILED", "REJECTED", "RETURNED", "REFUND_COMPLETED", "REFUND_FAILED", "REFUNDED"]);

/** The ledger's consumers; the host runs each once per event id (kit inbox). */
export function ledgerConsumers(ledger: Ledger, log?: Pick<Logger, "error" | "warn">, cards?: Pick<Cards, "onCardIssued" | "onDelegatedKeyChanged">): ConsumerDefinition<any>[] {
  const platforms: ConsumerDefinition<typeof PlatformEventSchema> = {
    name: "platform-accounts",
    topic: topics.platforms,
    schema: PlatformEventSchema,
    eventId: (e) => e.eventId,
    // TokenRevoked (an older auth-sessions wrote it here) changes nothing for the ledger.
    relevant: (e) => e.payload.case === "platformCreated" || e.payload.case === "configUpdated",
    async handle(e, trx) {
      const at = e.occurredAt ? timestampDate(e.occurredAt) : new Date();
      if (e.payload.case === "platformCreated") {
        const env = e.payload.value.platform?.environment;
        await ledger.onPlatform(trx, {
          platformId: e.platformId,
          environment: env === Environment.PRODUCTION ? "PRODUCTION" : env === Environment.SANDBOX ? "SANDBOX" : undefined,
          currencies: e.payload.value.config?.supportedCurrencies.map((c) => c.currencyCode) ?? [],
          at,
        });
      } else if (e.payload.case === "configUpdated") {
        await ledger.onPlatform(trx, { platformId: e.platformId, currencies: e.payload.value.config?.supportedCurrencies.map((c) => c.currencyCode) ?? [], at });
      }
    },
  };

  const customers: ConsumerDefinition<typeof CustomerEventSchema> = {
    name: "customer-accounts",
    // The customer's record events (the kit's customerEventTopic), corridor.customers.v1 before.
    topic: topics.customerRecords,
    formerTopics: [topics.customers],
    schema: CustomerEventSchema,
    eventId: (e) => e.eventId,
    async handle(e, trx) {
      const p = e.payload;
      // Only these carry the summary (currencies); status changes etc. are not the ledger's concern.
      if (p.case !== "customerCreated" && p.case !== "customerUpdated" && p.case !== "customerDeleted") return;
      const c = p.value.customer;
      if (!c) return;
      await ledger.onCustomer(trx, {
        platformId: e.platformId || c.platformId,
        customerId: c.customerId,
        platformCustomerId: c.platformCustomerId,
        currencies: [...c.currencies],
        isDeleted: c.isDeleted || e.payload.case === "customerDeleted",
        verificationStatus: c.verificationStatus,
        at: e.occurredAt ? timestampDate(e.occurredAt) : new Date(),
      });
    },
  };

  const railOutcome = (e: RailOutcome): RailOutcomeInput => ({
    platformId: e.platformId,
    transactionId: e.transactionId,
    status: e.status as RailStatus | QuoteOutcomeStatus,
    reason: e.reason,
    at: e.occurredAt ? timestampDate(e.occurredAt) : new Date(),
    expectedSettlementAt: e.expectedSettlementAt ? timestampDate(e.expectedSettlementAt) : undefined,
    connector: e.connector,
    environment: e.environment,
  });
  const applyOutcomes = async (events: RailOutcome[], trx: Parameters<ConsumerDefinition["handle"]>[1]) => {
    const mine = events.filter((e) => RAIL_STATUSES.has(e.status));
    if (mine.length === 0) return;
    const results = await ledger.applyRailOutcomes(trx, mine.map(railOutcome));
    results.forEach((applied, i) => {
      if (applied !== "not-addressed") return;
      const e = mine[i]!;
      // A connector spoke for a transaction routed elsewhere (or of another environment): ignored.
      log?.error({ event_id: e.eventId, transaction_id: e.transactionId, connector: e.connector || "sandbox", environment: e.environment }, "rail outcome from a connector the transaction was not routed to; ignored");
    });
  };

  // The outcomes fetched together are applied together (one transaction, their accounts locked
  // up front in one order: domain/rail-outcomes.ts); a batch that fails is applied one by one.
  const outcomes: ConsumerDefinition<typeof RailOutcomeSchema> = {
    name: "rail-outcomes",
    topic: topics.railOutcomes,
    schema: RailOutcomeSchema,
    eventId: (e) => e.eventId,
    relevant: (e) => RAIL_STATUSES.has(e.status),
    batch: true,
    handle: (e, trx) => applyOutcomes([e], trx),
    handleMany: (events, trx) => applyOutcomes(events, trx),
  };

  // A sandbox platform's clock moved: its quote transactions due by the new sandbox time expire now.
  // The sandbox card issuer provisioned a card: it becomes ACTIVE (domain/cards.ts). The consumer
  // keeps its first name (its inbox) though it reads both.
  const sandboxClock: ConsumerDefinition<typeof SandboxEventSchema> = {
    name: "sandbox-clock",
    topic: topics.sandbox,
    schema: SandboxEventSchema,
    eventId: (e) => e.eventId,
    relevant: (e) => (e.payload.case === "clockAdvanced" && !!e.payload.value.now) || (e.payload.case === "cardIssued" && !!cards),
    async handle(e, trx) {
      if (e.payload.case === "cardIssued") {
        const c = e.payload.value;
        await cards?.onCardIssued(
          trx,
          e.platformId,
          { cardId: c.cardId, brand: c.brand, last4: c.last4, expMonth: c.expMonth, expYear: c.expYear, issuerRef: c.issuerRef },
          e.occurredAt ? timestampDate(e.occurredAt) : new Date(),
        );
        return;
      }
      if (e.payload.case !== "clockAdvanced" || !e.payload.value.now) return;
      const c = e.payload.value;
      await ledger.onSandboxClockAdvanced(trx, {
        platformId: e.platformId,
        sandboxNow: timestampDate(c.now!),
        offsetMs: c.offsetMs,
        at: c.realAt ? timestampDate(c.realAt) : new Date(),
      });
    },
  };

  // auth-sessions: a delegated key of a card funding source became ACTIVE or was REVOKED, written in
  // the key's transaction. The source's status follows it (ACTIVE while a key of it is, else
  // PENDING_AUTH); a stale or repeated change is recognised by the key's status (domain/cards.ts).
  const delegatedKeys: ConsumerDefinition<typeof PlatformEventSchema> = {
    name: "delegated-keys",
    topic: topics.platformDelegatedKeys,
    schema: PlatformEventSchema,
    eventId: (e) => e.eventId,
    relevant: (e) => !!cards && e.payload.case === "delegatedKeyChanged" && !!e.payload.value.fundingSourceId,
    async handle(e, trx) {
      if (!cards || e.payload.case !== "delegatedKeyChanged") return;
      const k = e.payload.value;
      const at = k.updatedAt ? timestampDate(k.updatedAt) : e.occurredAt ? timestampDate(e.occurredAt) : new Date();
      const outcome = await cards.onDelegatedKeyChanged(trx, e.platformId, { keyId: k.keyId, fundingSourceId: k.fundingSourceId, status: k.status, at });
      if (outcome === "ignored") log?.warn({ event_id: e.eventId, platform_id: e.platformId, key_id: k.keyId, funding_source_id: k.fundingSourceId, status: k.status }, "delegated key change not applied (stale, repeated, or for a funding source the ledger does not have)");
    },
  };

  // What a bank says that is no outcome (rail contract 1.2): deposits and notifications of change.
  const notices: ConsumerDefinition<typeof RailNoticeSchema> = {
    name: "rail-notices",
    topic: topics.railNotices,
    schema: RailNoticeSchema,
    eventId: (e) => e.eventId,
    async handle(e, trx) {
      const at = e.occurredAt ? timestampDate(e.occurredAt) : new Date();
      const n = e.notice;
      if (n.case === "incomingCredit") {
        const c = n.value;
        await ledger.onIncomingCredit(trx, {
          connector: e.connector,
          environment: e.environment,
          bankEntryId: e.bankEntryId,
          at,
          amount: c.amount,
          currency: c.currency,
          paymentRail: c.paymentRail,
          creditedAccount: c.creditedAccount,
          creditedRouting: c.creditedRouting,
          reference: c.reference,
          senderName: c.senderName,
          senderAccount: c.senderAccount,
          senderRouting: c.senderRouting,
          valueDate: c.valueDate,
        });
      } else if (n.case === "accountCorrection") {
        const c = n.value;
        await ledger.onAccountCorrection(trx, {
          connector: e.connector,
          environment: e.environment,
          bankEntryId: e.bankEntryId,
          at,
          transactionId: c.transactionId,
          platformId: c.platformId,
          externalAccountId: c.externalAccountId,
          code: c.code,
          corrected: { ...c.corrected },
          correctedData: c.correctedData,
        });
      } else {
        log?.error({ event_id: e.eventId, connector: e.connector }, "rail notice of a kind this ledger does not know; ignored");
      }
    },
  };

  return [platforms, customers, outcomes, sandboxClock, notices, delegatedKeys];
}
