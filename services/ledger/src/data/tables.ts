import type { ColumnType, Generated, Kysely, Transaction } from "kysely";
import type { KitTables } from "@corridor/kit";

/** Any handle of the ledger schema: the database or a transaction. */
export type Db = Kysely<LedgerDatabase> | Transaction<LedgerDatabase>;
export type Trx = Transaction<LedgerDatabase>;

type Json<T> = ColumnType<T, string, string>;
type Created = ColumnType<Date, Date, never>;

export interface PlatformsTable {
  id: string;
  environment: string;
  supported_currencies: Json<string[]>;
  updated_at: Date;
}

export interface CustomersTable {
  id: string;
  platform_id: string;
  platform_customer_id: string;
  currencies: Json<string[]>;
  is_deleted: boolean;
  updated_at: Date;
  /** Set by the ledger when it closed the customer (nothing held, about to be deleted); never cleared. */
  closed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** KYC/KYB status as the last event carrying one said; null until then. */
  verification_status: ColumnType<string | null, string | null | undefined, string | null>;
}

export type OwnerKind = "CUSTOMER" | "PLATFORM" | "SYSTEM";

export interface AccountsTable {
  id: string;
  platform_id: string;
  owner_kind: OwnerKind;
  owner_key: string;
  customer_id: string | null;
  type: string;
  currency: string;
  balance: ColumnType<bigint, bigint | undefined, bigint>;
  held: ColumnType<bigint, bigint | undefined, bigint>;
  reference: string;
  funding_instructions: Json<unknown[]>;
  created_at: Created;
  updated_at: Date;
  /** PENDING, ACTIVE, CLOSED, FROZEN or FAILED (domain/account-status.ts); ACTIVE by default. */
  status: ColumnType<string, string | undefined, string>;
  /** Wallet privacy of an EMBEDDED_WALLET (Grid's privateEnabled); false by default. */
  private_enabled: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface JournalEntriesTable {
  id: string;
  platform_id: string;
  transaction_id: string | null;
  kind: string;
  created_at: Created;
}

export interface PostingsTable {
  id: Generated<bigint>;
  entry_id: string;
  platform_id: string;
  account_id: string;
  currency: string;
  amount: bigint;
}

export interface HoldsTable {
  id: Generated<bigint>;
  platform_id: string;
  account_id: string;
  transaction_id: string;
  amount: bigint;
  status: "ACTIVE" | "RELEASED" | "CAPTURED";
  created_at: Created;
  updated_at: Date;
}

export interface ExternalAccountsTable {
  id: string;
  platform_id: string;
  owner_kind: "CUSTOMER" | "PLATFORM";
  customer_id: string | null;
  currency: string;
  account_type: string;
  account_info: Json<Record<string, unknown>>;
  platform_account_id: string;
  default_uma_deposit_account: boolean;
  status: string;
  beneficiary_verification_status: string;
  beneficiary_verified_data: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  created_at: Created;
  updated_at: Date;
  deleted_at: Date | null;
}

/** External-account ownership challenges (micro-deposits or wallet signature; issue 27). */
export interface OwnershipChallengesTable {
  id: string;
  platform_id: string;
  external_account_id: string;
  method: string;
  status: "PENDING" | "VERIFIED" | "FAILED" | "EXPIRED";
  currency: string;
  attempts: ColumnType<number, number | undefined, number>;
  max_attempts: number;
  failure_reason: ColumnType<string, string | undefined, string>;
  message_to_sign: ColumnType<string, string | undefined, string>;
  expires_at: Date;
  created_at: Created;
  updated_at: Date;
}

/** The credits of a micro-deposit challenge, one rail instruction each (keyed by its transaction id). */
export interface MicroDepositsTable {
  transaction_id: string;
  challenge_id: string;
  platform_id: string;
  amount: bigint;
  currency: string;
  connector: string;
  payment_rail: string;
  reference: string;
  status: "PENDING" | "COMPLETED" | "FAILED" | "RETURNED";
  reason: ColumnType<string, string | undefined, string>;
  created_at: Created;
  updated_at: Date;
}

export interface TransactionsTable {
  id: string;
  platform_id: string;
  type: "INCOMING" | "OUTGOING";
  status: string;
  source_account_id: string;
  destination_account_id: string;
  /** The internal account money leaves or enters; null for a real-time-funded quote. */
  internal_account_id: string | null;
  /** null for a UMA destination. */
  external_account_id: string | null;
  customer_id: string | null;
  platform_customer_id: string | null;
  amount: bigint;
  currency: string;
  reference: string;
  description: string;
  agent_id: string | null;
  failure_reason: string | null;
  failure_detail: string | null;
  settled_at: Date | null;
  created_at: Created;
  updated_at: Date;
  // ---- quote transactions (null for transfers) ----
  source_type: ColumnType<string, string | undefined, string>;
  destination_type: ColumnType<string, string | undefined, string>;
  payment_rail: ColumnType<string | null, string | null | undefined, string | null>;
  uma_address: ColumnType<string | null, string | null | undefined, string | null>;
  quote_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The receiver lookup whose CREATED transaction this is (or was, once a quote adopted it); null otherwise. */
  lookup_id: ColumnType<string | null, string | null | undefined, string | null>;
  sent_amount: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  sent_currency: ColumnType<string | null, string | null | undefined, string | null>;
  fees: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  exchange_rate: ColumnType<string | null, string | null | undefined, string | null>;
  rate_details: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  counterparty_information: ColumnType<Record<string, string> | null, string | null | undefined, string | null>;
  expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  executed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  refund_reference: ColumnType<string | null, string | null | undefined, string | null>;
  refund_status: ColumnType<"PENDING" | "COMPLETED" | "FAILED" | null, "PENDING" | "COMPLETED" | "FAILED" | null | undefined, "PENDING" | "COMPLETED" | "FAILED" | null>;
  refund_reason: ColumnType<string | null, string | null | undefined, string | null>;
  refund_initiated_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  refund_settled_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Incoming UMA payments: receiver data given with the platform's approval (jsonb map of strings). */
  receiver_customer_info: ColumnType<Record<string, string> | null, string | null | undefined, string | null>;
  /** The rail's estimate of when the payment reaches its outcome (RailOutcome.expected_settlement_at); null until one arrives. */
  expected_settlement_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The connector the transaction's rail instruction went to (sandbox, or the operator's binding); null: none yet, or from before routing (the simulator). */
  connector: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the platform confirmed it delivered the receipt to its customer (POST /transactions/{id}/confirm); null until then. */
  receipt_delivery_confirmed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** The operator's routing of a production platform's (currency, payment rail) to a connector. */
export interface RailBindingsTable {
  platform_id: string;
  currency: string;
  payment_rail: string;
  connector: string;
  source: "OPERATOR" | "CONFIG";
  created_at: Date;
  updated_at: Date;
}

/** A sandbox platform's clock offset, copied from corridor.sandbox.v1 ClockAdvanced (only grows). */
export interface SandboxClocksTable {
  platform_id: string;
  offset_ms: bigint;
  updated_at: Date;
}

/** A credit the bank received (rail notice INCOMING_CREDIT): credited, or in suspense for the operator. */
export interface ReceivedCreditsTable {
  id: string;
  connector: string;
  bank_entry_id: string;
  amount: bigint;
  currency: string;
  payment_rail: string;
  credited_account: string;
  credited_routing: string;
  reference: string;
  sender_name: string;
  sender_account: string;
  sender_routing: string;
  value_date: string;
  status: "SUSPENSE" | "CREDITED" | "RETURN_REQUESTED" | "RETURNED" | "RETURN_FAILED";
  suspense_reason: string;
  platform_id: string | null;
  internal_account_id: string | null;
  transaction_id: string | null;
  note: string;
  received_at: Date;
  updated_at: Date;
  return_transaction_id: string | null;
  return_reason: Generated<string>;
  return_detail: Generated<string>;
}

/** A receiving bank's correction of an external account (rail notice ACCOUNT_CORRECTION), applied or refused. */
export interface AccountCorrectionsTable {
  id: string;
  connector: string;
  bank_entry_id: string;
  transaction_id: string;
  platform_id: string | null;
  external_account_id: string | null;
  code: string;
  corrected: Json<Record<string, string>>;
  corrected_data: string;
  status: "APPLIED" | "REFUSED";
  detail: string;
  received_at: Date;
}

/** Connectors' bank statements, once per (connector, account, statement id) (migration 20261228100000). */
export interface RailStatementsTable {
  connector: string;
  account: string;
  statement_id: string;
  event_id: string;
  statement_date: string;
  time_zone: string;
  currency: string;
  opening_booked: bigint;
  closing_booked: bigint;
  entries: Json<unknown[]>;
  source_file: string;
  received_at: Date;
}

export interface ReconciliationReportsTable {
  id: string;
  connector: string;
  account: string;
  statement_id: string;
  statement_date: string;
  currency: string;
  status: "CLEAN" | "BREAKS" | "RESOLVED";
  entry_count: number;
  matched_count: number;
  opening_booked: bigint;
  closing_booked: bigint;
  entries_net: bigint;
  created_at: Date;
  updated_at: Date;
}

export interface ReconciliationBreaksTable {
  id: string;
  report_id: string;
  position: number;
  kind: string;
  transaction_id: string | null;
  bank_entry_id: string | null;
  reference: string;
  ledger_amount: bigint | null;
  statement_amount: bigint | null;
  ledger_direction: string | null;
  statement_direction: string | null;
  detail: string;
  resolved_at: Date | null;
  resolution_note: string | null;
}

export interface ReconciliationMatchesTable {
  report_id: string;
  bank_entry_id: string;
  transaction_id: string;
  direction: string;
}

export interface CardsTable {
  id: string;
  platform_id: string;
  cardholder_id: string;
  platform_card_id: string;
  state: string;
  state_reason: ColumnType<string, string | undefined, string>;
  form: string;
  currency: string;
  brand: ColumnType<string, string | undefined, string>;
  last4: ColumnType<string, string | undefined, string>;
  exp_month: ColumnType<number, number | undefined, number>;
  exp_year: ColumnType<number, number | undefined, number>;
  issuer_ref: ColumnType<string, string | undefined, string>;
  max_spend_per_transaction: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  created_at: Date;
  updated_at: Date;
}

export interface CardFundingSourcesTable {
  id: string;
  platform_id: string;
  card_id: string;
  account_id: string;
  priority: number;
  created_at: Date;
  updated_at: Date;
  removed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  delegated: ColumnType<boolean, boolean | undefined, boolean>;
}

/** The ledger's copy of auth-sessions' delegated keys made for card funding sources (their latest status). */
export interface CardDelegatedKeysTable {
  key_id: string;
  platform_id: string;
  funding_source_id: string;
  status: "PENDING" | "ACTIVE" | "REVOKED";
  updated_at: Date;
}

export interface LedgerDatabase extends KitTables {
  cards: CardsTable;
  card_funding_sources: CardFundingSourcesTable;
  card_delegated_keys: CardDelegatedKeysTable;
  received_credits: ReceivedCreditsTable;
  account_corrections: AccountCorrectionsTable;
  rail_statements: RailStatementsTable;
  reconciliation_reports: ReconciliationReportsTable;
  reconciliation_breaks: ReconciliationBreaksTable;
  reconciliation_matches: ReconciliationMatchesTable;
  platforms: PlatformsTable;
  sandbox_clocks: SandboxClocksTable;
  rail_bindings: RailBindingsTable;
  customers: CustomersTable;
  accounts: AccountsTable;
  journal_entries: JournalEntriesTable;
  postings: PostingsTable;
  holds: HoldsTable;
  external_accounts: ExternalAccountsTable;
  transactions: TransactionsTable;
  ownership_challenges: OwnershipChallengesTable;
  micro_deposits: MicroDepositsTable;
}
