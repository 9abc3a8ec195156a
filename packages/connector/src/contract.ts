/**
 * The rail contract, version 1 (docs/connectors.md): what the ledger asks a connector
 * (RailInstruction on the connector's instruction topic) and what a connector may answer
 * (RailOutcome on corridor.rail-outcomes.v1), as plain TypeScript. Nothing here knows Kafka, SQL or
 * protobuf; runtime.ts maps these to the wire.
 */

/** Version of the contract this package implements; bumped only with a new topic version. */
export const RAIL_CONTRACT_VERSION = 1;

export type RailEnvironment = "SANDBOX" | "PRODUCTION";

/** The sandbox simulator's name: every sandbox platform's rails, and nothing else. */
export const SANDBOX_CONNECTOR = "sandbox";

/** Topic every connector reports on (key: transaction id). */
export const RAIL_OUTCOMES_TOPIC = "corridor.rail-outcomes.v1";

/** Topic of what a bank says that is no outcome of an instruction (contract 1.2; key "<connector>:<bank entry id>"). */
export const RAIL_NOTICES_TOPIC = "corridor.rail-notices.v1";

/** The contract's minor version: 1.2 added notices (corridor.rail-notices.v1). */
export const RAIL_CONTRACT_MINOR_VERSION = 2;

/** A connector's name: lowercase letters, digits and dashes, 2 to 40 characters, starting with a letter. */
export const CONNECTOR_NAME = /^[a-z][a-z0-9-]{1,39}$/;

/**
 * The topic a connector receives its instructions on (key: transaction id). The simulator keeps
 * the contract's first topic, corridor.rails.v1; every other connector has one of its own, so a
 * real connector never even subscribes to sandbox traffic and the simulator never to production
 * traffic (and a Kafka ACL can say so).
 */
export function instructionTopic(connector: string): string {
  if (!CONNECTOR_NAME.test(connector)) throw new Error(`invalid connector name ${JSON.stringify(connector)}: ${CONNECTOR_NAME}`);
  return connector === SANDBOX_CONNECTOR ? "corridor.rails.v1" : `corridor.rails.${connector}.v1`;
}

/** The environment a connector serves: the simulator SANDBOX, every other connector PRODUCTION. */
export const environmentOf = (connector: string): RailEnvironment => (connector === SANDBOX_CONNECTOR ? "SANDBOX" : "PRODUCTION");

/** One instruction from the ledger, as a connector sees it. */
export interface RailInstruction {
  /** The instruction's event id: unique per instruction (the inbox deduplicates on it). */
  instructionId: string;
  /** When the ledger issued it. */
  occurredAt: Date;
  platformId: string;
  /** The platform's environment; a connector acts only on its own. */
  environment: RailEnvironment;
  /** The connector the ledger addressed; a connector acts only on instructions addressed to it. */
  connector: string;
  /** Transaction:<uuidv7>. A connector acts on at most one instruction per transaction. */
  transactionId: string;
  /** PAYOUT: push money to the external account. PULL: debit it (transfer-in). */
  direction: "PAYOUT" | "PULL";
  /**
   * TRANSFER (transfer-in/out), QUOTE_PAYOUT (the payout of an executed quote) or RETURN (contract
   * 1.3: send back a credit this connector reported; see `returnedCredit`).
   */
  kind: "TRANSFER" | "QUOTE_PAYOUT" | "RETURN";
  /** Minor units of `currency`. */
  amount: bigint;
  currency: string;
  /** ACH, WIRE, SEPA, ... ("" when the sandbox was not told one). */
  paymentRail: string;
  /** ExternalAccount:<uuidv7>, or "" for a UMA payout. */
  externalAccountId: string;
  /** The external account's accountInfo as the public API shows it ({} for a UMA payout). */
  accountInfo: Record<string, unknown>;
  /** The reconciliation reference to carry on the rail. */
  reference: string;
  /** QUOTE_PAYOUT to a UMA address; "" otherwise. */
  umaAddress: string;
  /** RETURN only (contract 1.3): the received credit to send back, as its INCOMING_CREDIT notice said. */
  returnedCredit?: ReturnedCredit;
}

/** What a RETURN instruction sends back (rail contract 1.3, docs/connectors.md). */
export interface ReturnedCredit {
  /** The notice's bank entry id (what the connector reported). */
  bankEntryId: string;
  /** The return reason the operator chose: R23 (default), R17 or R03. */
  reason: string;
  paymentRail: string;
  senderName: string;
  senderAccount: string;
  senderRouting: string;
  reference: string;
  creditedAccount: string;
  creditedRouting: string;
  valueDate: string;
  /** RailNotice:<uuidv7>, the ledger's suspense item. */
  suspenseItemId: string;
}

/**
 * What a connector may report about a transaction. PROCESSING: the rail accepted it (optional).
 * COMPLETED: the money moved. FAILED or REJECTED: it did not (and will not). RETURNED: money that
 * had moved (or was moving) came back. REFUND_COMPLETED, REFUND_FAILED and REFUNDED: quote payouts
 * only (the refund of a failed payout).
 */
export const OUTCOME_STATUSES = ["PROCESSING", "COMPLETED", "FAILED", "REJECTED", "RETURNED", "REFUND_COMPLETED", "REFUND_FAILED", "REFUNDED"] as const;
export type OutcomeStatus = (typeof OUTCOME_STATUSES)[number];

/** An outcome to report. */
export interface OutcomeReport {
  platformId: string;
  transactionId: string;
  status: OutcomeStatus;
  /** Cause of FAILED, REJECTED or RETURNED, for example INSUFFICIENT_FUNDS or R01; "" otherwise. */
  reason?: string;
  /** When the rail says it happened. */
  at: Date;
  /** When the rail expects the payment to reach its outcome, if it knows. */
  expectedSettlementAt?: Date;
}

/** An outcome as published: the report plus who sent it and its place in the transaction's sequence. */
export interface PublishedOutcome extends Required<Omit<OutcomeReport, "expectedSettlementAt">> {
  outcomeId: string;
  connector: string;
  environment: RailEnvironment;
  /** 1, 2, ... per transaction, in the order the connector reported them. */
  sequence: number;
  expectedSettlementAt?: Date;
}

/** The money of a transfer, as the contract defines it (the ledger's effect, reduced to its essence). */
export interface ContractState {
  status: "PENDING" | "PROCESSING" | "COMPLETED" | "FAILED";
  /** Whether the money has moved (and not come back). */
  moved: boolean;
  /** Whether a completed payment was reversed by a return. */
  reversed: boolean;
}

export const INITIAL_STATE: ContractState = { status: "PENDING", moved: false, reversed: false };

/**
 * The effect of one outcome on a transfer, as the ledger applies it (docs/connectors.md, "What each
 * outcome does to the money"): an outcome that does not apply (late, repeated, backwards) changes
 * nothing, so a consumer may see a transaction's outcomes in any order and reach the same end as
 * long as the connector keeps the contract's rule: at most one of COMPLETED, FAILED, REJECTED per
 * transaction, and RETURNED only for money it completed (or was completing).
 */
export function applyOutcome(s: ContractState, status: OutcomeStatus): ContractState {
  if (s.status === "FAILED") return s;
  switch (status) {
    case "PROCESSING":
      return s.status === "PENDING" ? { ...s, status: "PROCESSING" } : s;
    case "COMPLETED":
      return s.status === "COMPLETED" ? s : { status: "COMPLETED", moved: true, reversed: false };
    case "FAILED":
    case "REJECTED":
      return s.status === "COMPLETED" ? s : { status: "FAILED", moved: false, reversed: false };
    case "RETURNED":
      // After COMPLETED the money is reversed; before it (the return overtook the completion, or the
      // payment came back while in flight) nothing had moved: FAILED either way, and a COMPLETED
      // arriving later no longer applies.
      return { status: "FAILED", moved: false, reversed: s.status === "COMPLETED" };
    default:
      return s; // refunds: quote payouts only
  }
}

/** The end state of a transaction's outcomes applied in the given order. */
export const settle = (statuses: readonly OutcomeStatus[]): ContractState => statuses.reduce(applyOutcome, INITIAL_STATE);

/**
 * Money the bank credited to the operator's account that no instruction asked for (contract 1.2):
 * an ACH credit received as RDFI, a SEPA credit reported by camt.054/camt.053. The ledger matches
 * it to an internal account by its funding payment instructions, or keeps it in suspense.
 */
export interface IncomingCreditNotice {
  kind: "INCOMING_CREDIT";
  /** The bank's own id of the entry; with the connector's name, the notice's dedupe key. */
  bankEntryId: string;
  /** The value (settlement) date as the bank gave it. */
  at: Date;
  /** Minor units, positive. */
  amount: bigint;
  currency: string;
  paymentRail: string;
  /** The account credited (account number or IBAN), as the bank gave it. */
  creditedAccount: string;
  /** Its routing number or BIC, when given. */
  creditedRouting?: string;
  /** Reference and remittance information, as given. */
  reference: string;
  senderName: string;
  senderAccount?: string;
  senderRouting?: string;
  /** YYYY-MM-DD. */
  valueDate: string;
}

/** A receiving bank's correction of an account the ledger paid or pulled (ACH NOC, C01-C14). */
export interface AccountCorrectionNotice {
  kind: "ACCOUNT_CORRECTION";
  bankEntryId: string;
  at: Date;
  /** The transaction whose entry the correction concerns. */
  transactionId: string;
  platformId?: string;
  externalAccountId?: string;
  /** C01 ... C14. */
  code: string;
  /** Corrected fields by name: accountNumber, routingNumber, accountType, name, identification, transactionCode. */
  corrected: Record<string, string>;
  /** The corrected data as the bank gave it. */
  correctedData: string;
}

export type NoticeReport = IncomingCreditNotice | AccountCorrectionNotice;
