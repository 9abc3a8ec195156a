import type { ColumnType } from "kysely";

export interface ReceiverLookupsTable {
  id: string;
  platform_id: string;
  kind: "UMA" | "EXTERNAL_ACCOUNT";
  receiver_uma_address: string;
  account_id: string;
  customer_id: string;
  sender_uma_address: string;
  sending_currency: string;
  supported_currencies: ColumnType<StoredOffer[], string, string>;
  required_payer_data_fields: ColumnType<{ name: string; mandatory: boolean }[], string, string>;
  scenario: string;
  created_at: Date;
  expires_at: Date;
}

export interface StoredOffer {
  currencyCode: string;
  estimatedExchangeRate: string;
  min: string;
  max: string;
}

export interface QuotesTable {
  /** migrations/20261228100000_quote_sca.ts: the challenge of a PENDING_AUTHORIZATION quote (jsonb), else null. */
  sca_challenge: ColumnType<{ id: string; expiresAt: string; factor: string; availableFactors: string[]; purpose: string } | null, string | null | undefined, string | null>;
  execute_on_authorization: ColumnType<boolean, boolean | undefined, boolean>;
  id: string;
  platform_id: string;
  status: string;
  transaction_id: string;
  source_type: string;
  source_account_id: string;
  customer_id: string;
  destination_type: string;
  destination_account_id: string;
  payment_rail: string;
  uma_address: string;
  sending_currency: string;
  receiving_currency: string;
  total_sending_amount: bigint;
  total_receiving_amount: bigint;
  fees_included: bigint;
  exchange_rate: string;
  locked_currency_side: string;
  locked_currency_amount: bigint;
  lookup_id: string;
  description: string;
  purpose_of_payment: string;
  rate_details: ColumnType<Record<string, string>, string, string>;
  counterparty_information: ColumnType<Record<string, string>, string, string>;
  sender_customer_info: ColumnType<Record<string, string>, string, string>;
  payment_instructions: ColumnType<Record<string, unknown>[], string, string>;
  payload_to_sign: string;
  signature_request_id: string;
  signature_verified: boolean;
  failure_reason: string;
  execution_started_at: Date | null;
  /** migrations/20261228110000: hash of the Idempotency-Key whose request holds the execution claim; null without. */
  execution_claimant: ColumnType<string | null, string | null | undefined, string | null>;
  /** Agent:<uuidv7> that created the quote; null for the platform's own quotes. */
  agent_id: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * False while the quote is a draft: stored before the ledger was asked for its transaction, not
   * yet confirmed (invisible to every read). See migration 20261127180000_quote_drafts.
   */
  confirmed: ColumnType<boolean, boolean | undefined, boolean>;
  /** Hash of the (scoped) Idempotency-Key and request the quote was created under; null without a key. */
  creation_ref: ColumnType<string | null, string | null | undefined, string | null>;
  /** The service clock's time the draft was stored (the draft worker's age test). */
  drafted_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: Date;
  updated_at: Date;
  expires_at: Date;
}

export interface QuotesFxDatabase {
  receiver_lookups: ReceiverLookupsTable;
  quotes: QuotesTable;
  incoming_approvals: IncomingApprovalsTable;
  production_rates: ProductionRatesTable;
  platform_fee_rules: PlatformFeeRulesTable;
}

/** The operator's fee rules for one platform (same JSON shape as CORRIDOR_QUOTE_FEES). */
export interface PlatformFeeRulesTable {
  platform_id: string;
  rules: ColumnType<Record<string, Record<string, string | number>>, string, string>;
  updated_at: Date;
}

/** Production platforms' rates: the latest USD value of each currency, its source and age. */
export interface ProductionRatesTable {
  currency: string;
  /** Decimal text, USD per one major unit. */
  usd_value: string;
  /** `feed` (the configured feed), `operator` (pushed by the operator), … */
  source: string;
  /** When the source set the rate. */
  as_of: Date;
  recorded_at: Date;
}

/** An incoming UMA payment awaiting the platform: recorded before the webhook; acknowledged on 202. */
export interface IncomingApprovalsTable {
  transaction_id: string;
  platform_id: string;
  /** Null when recorded from the ledger's event; set by the request path or the worker. */
  deadline: Date | null;
  /** false until the platform answered 202 (the row is recorded before the webhook is sent). */
  acknowledged: ColumnType<boolean, boolean | undefined, boolean>;
  state: "AWAITING" | "DONE";
  /** JSON array of the receiver field names asked for in the approval webhook. */
  requested_fields: ColumnType<string[], string | undefined, string>;
  created_at: Date;
  updated_at: Date;
}
