import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { environmentOf, instructionTopic, SANDBOX_CONNECTOR } from "@corridor/connector";
import { afterCommit, enqueueEvent, ledgerEventTopic, newId, recordMoneyMoved } from "@corridor/kit";
import { LedgerEventSchema, type LedgerEvent } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { RailInstructionSchema } from "@corridor/proto/corridor/ledger/v1/rails_pb.js";
import type { Transaction } from "kysely";
import type { AccountRow, ExternalAccountRow, MicroDepositRow, ReceivedCreditRow, TransactionRow } from "../domain/model.js";
import type { RailRoute } from "../domain/rails.js";
import { externalAccountToPb, internalAccountToPb, transactionToPb } from "../handlers/mappers.js";

/**
 * Producer of the ledger's event topics (LedgerEvent) and the rail instruction topics (RailInstruction). Always
 * inside the money transaction: the events exist if and only if the change committed.
 */

/**
 * A LedgerEvent, on the topic of the services that act on it (the kit's ledgerEventTopic: one
 * per audience, a transaction's events all on one; docs/events.md, "Who acts on what").
 */
async function enqueueLedgerEvent(trx: Transaction<any>, input: { key: string; eventId: string; eventType: string; schema: typeof LedgerEventSchema; message: LedgerEvent }): Promise<void> {
  await enqueueEvent(trx, { ...input, topic: ledgerEventTopic(input.message) });
}
export async function emitTransactionChanged(trx: Transaction<any>, eventType: string, tx: TransactionRow, at: Date): Promise<void> {
  const eventId = newId("Event");
  await enqueueLedgerEvent(trx, {
    key: tx.id,
    eventId,
    eventType,
    schema: LedgerEventSchema,
    message: create(LedgerEventSchema, {
      eventId,
      occurredAt: timestampFromDate(at),
      platformId: tx.platform_id,
      eventType,
      payload: { case: "transactionChanged", value: { transaction: transactionToPb(tx) } },
    }),
  });
  // Money moved (corridor.ledger.transactions.completed), counted once the change is durable: a
  // rolled-back transaction counts nothing, a redelivered outcome finds it COMPLETED and emits nothing.
  // The environment is the connector's, as routing decided it (no connector: the simulator's, as
  // for outcomes: rows from before routing, simulated incoming UMA payments).
  if (COMPLETED_EVENTS.has(eventType)) {
    const environment = environmentOf(tx.connector ?? SANDBOX_CONNECTOR);
    afterCommit(trx, () => recordMoneyMoved({ currency: tx.currency, direction: tx.type, kind: tx.quote_id ? "quote" : "transfer", environment }));
  }
}

/** The events of a transaction reaching COMPLETED: its money arrived (INCOMING) or left (OUTGOING). */
const COMPLETED_EVENTS = new Set(["INCOMING_PAYMENT_COMPLETED", "OUTGOING_PAYMENT_COMPLETED"]);

export async function emitBalanceUpdated(trx: Transaction<any>, account: AccountRow, at: Date): Promise<void> {
  if (account.owner_kind === "SYSTEM") return;
  const eventId = newId("Event");
  const eventType = "INTERNAL_ACCOUNT_BALANCE_UPDATED";
  await enqueueLedgerEvent(trx, {
    key: account.id,
    eventId,
    eventType,
    schema: LedgerEventSchema,
    message: create(LedgerEventSchema, {
      eventId,
      occurredAt: timestampFromDate(at),
      platformId: account.platform_id,
      eventType,
      payload: { case: "balanceUpdated", value: { account: internalAccountToPb(account) } },
    }),
  });
}

/**
 * A transfer's instruction, on its connector's topic (corridor.rails.v1 for the simulator,
 * corridor.rails.<connector>.v1 otherwise) and addressed to it by name and environment: the
 * routing decided before the money transaction (domain/rails.ts).
 */
export async function emitRailInstruction(
  trx: Transaction<any>,
  tx: TransactionRow,
  external: ExternalAccountRow,
  route: RailRoute,
  at: Date,
): Promise<void> {
  const eventId = newId("Event");
  const direction = tx.type === "OUTGOING" ? "PAYOUT" : "PULL";
  await enqueueEvent(trx, {
    topic: instructionTopic(route.connector),
    key: tx.id,
    eventId,
    eventType: `RAIL_${direction}`,
    schema: RailInstructionSchema,
    message: create(RailInstructionSchema, {
      eventId,
      occurredAt: timestampFromDate(at),
      platformId: tx.platform_id,
      transactionId: tx.id,
      direction,
      amount: tx.amount,
      currency: tx.currency,
      externalAccountId: external.id,
      accountInfo: external.account_info as never,
      reference: tx.reference,
      kind: "TRANSFER",
      paymentRail: route.paymentRail,
      environment: route.environment,
      connector: route.connector,
    }),
  });
}

/**
 * One credit of a micro-deposit challenge (ownership verification): a PAYOUT of kind TRANSFER, so
 * every connector sends it as it sends a transfer-out (ACH: a credit entry in the window's file;
 * the simulator: at once), on its connector's topic and addressed to it. The outcomes name the
 * deposit's own transaction id.
 */
export async function emitMicroDeposit(trx: Transaction<any>, d: MicroDepositRow, external: ExternalAccountRow, route: RailRoute, at: Date): Promise<void> {
  const eventId = newId("Event");
  await enqueueEvent(trx, {
    topic: instructionTopic(route.connector),
    key: d.transaction_id,
    eventId,
    eventType: "RAIL_PAYOUT",
    schema: RailInstructionSchema,
    message: create(RailInstructionSchema, {
      eventId,
      occurredAt: timestampFromDate(at),
      platformId: d.platform_id,
      transactionId: d.transaction_id,
      direction: "PAYOUT",
      amount: d.amount,
      currency: d.currency,
      externalAccountId: external.id,
      accountInfo: external.account_info as never,
      reference: d.reference,
      kind: "TRANSFER",
      paymentRail: route.paymentRail,
      environment: route.environment,
      connector: route.connector,
    }),
  });
}

/** The payout of an executed quote: the receiving amount and currency, to the external account or UMA address. */
export async function emitQuotePayout(trx: Transaction<any>, tx: TransactionRow, external: ExternalAccountRow | undefined, route: RailRoute, at: Date): Promise<void> {
  const eventId = newId("Event");
  await enqueueEvent(trx, {
    topic: instructionTopic(route.connector),
    key: tx.id,
    eventId,
    eventType: "RAIL_QUOTE_PAYOUT",
    schema: RailInstructionSchema,
    message: create(RailInstructionSchema, {
      eventId,
      occurredAt: timestampFromDate(at),
      platformId: tx.platform_id,
      transactionId: tx.id,
      direction: "PAYOUT",
      kind: "QUOTE_PAYOUT",
      amount: tx.amount,
      currency: tx.currency,
      externalAccountId: external?.id ?? "",
      accountInfo: external ? (external.account_info as never) : undefined,
      umaAddress: tx.uma_address ?? "",
      paymentRail: tx.payment_rail || route.paymentRail,
      reference: tx.reference,
      environment: route.environment,
      connector: route.connector,
    }),
  });
}

/**
 * A RETURN instruction (rail contract 1.3): send a received credit back to its sender, through the
 * connector that reported it (its topic, addressed to it; always PRODUCTION: notices are). Keyed and
 * identified by the return's transaction id, which the connector's outcomes name.
 */
export async function emitReturnInstruction(trx: Transaction<any>, item: ReceivedCreditRow, returnTransactionId: string, at: Date): Promise<void> {
  const eventId = newId("Event");
  await enqueueEvent(trx, {
    topic: instructionTopic(item.connector),
    key: returnTransactionId,
    eventId,
    eventType: "RAIL_RETURN",
    schema: RailInstructionSchema,
    message: create(RailInstructionSchema, {
      eventId,
      occurredAt: timestampFromDate(at),
      platformId: item.platform_id ?? "",
      transactionId: returnTransactionId,
      direction: "PAYOUT",
      kind: "RETURN",
      amount: item.amount,
      currency: item.currency,
      reference: `RETURN ${item.reference}`.slice(0, 140),
      paymentRail: item.payment_rail,
      environment: "PRODUCTION",
      connector: item.connector,
      returnedCredit: {
        bankEntryId: item.bank_entry_id,
        reason: item.return_reason,
        paymentRail: item.payment_rail,
        senderName: item.sender_name,
        senderAccount: item.sender_account,
        senderRouting: item.sender_routing,
        reference: item.reference,
        creditedAccount: item.credited_account,
        creditedRouting: item.credited_routing,
        valueDate: item.value_date,
        suspenseItemId: item.id,
      },
    }),
  });
}

/** EXTERNAL_ACCOUNT_UPDATED: a receiving bank corrected the account (rail notice ACCOUNT_CORRECTION). */
export async function emitExternalAccountUpdated(trx: Transaction<any>, account: ExternalAccountRow, at: Date, why: { code: string; transactionId: string; fields: string[] } = { code: "", transactionId: "", fields: [] }): Promise<void> {
  const eventId = newId("Event");
  const eventType = "EXTERNAL_ACCOUNT_UPDATED";
  await enqueueLedgerEvent(trx, {
    key: account.id,
    eventId,
    eventType,
    schema: LedgerEventSchema,
    message: create(LedgerEventSchema, {
      eventId,
      occurredAt: timestampFromDate(at),
      platformId: account.platform_id,
      eventType,
      payload: { case: "externalAccountChanged", value: { account: externalAccountToPb(account), changeCode: why.code, transactionId: why.transactionId, changedFields: why.fields } },
    }),
  });
}
