/**
 * The ledger's records as the domain and the handlers see them: plain values, one field per stored
 * column (data/tables.ts stores them; its selected rows have exactly these shapes).
 */

export type OwnerKind = "CUSTOMER" | "PLATFORM" | "SYSTEM";

/** An internal account (customer, platform or system), amounts in minor units. */
export interface AccountRow {
  id: string;
  platform_id: string;
  owner_kind: OwnerKind;
  owner_key: string;
  customer_id: string | null;
  type: string;
  currency: string;
  balance: bigint;
  held: bigint;
  reference: string;
  funding_instructions: unknown[];
  created_at: Date;
  updated_at: Date;
  /** PENDING, ACTIVE, CLOSED, FROZEN or FAILED (domain/account-status.ts). */
  status: string;
  /** Wallet privacy of an EMBEDDED_WALLET (PATCH /internal-accounts/{id}, signed retry). */
  private_enabled: boolean;
}

export interface ExternalAccountRow {
  id: string;
  platform_id: string;
  owner_kind: "CUSTOMER" | "PLATFORM";
  customer_id: string | null;
  currency: string;
  account_type: string;
  account_info: Record<string, unknown>;
  platform_account_id: string;
  default_uma_deposit_account: boolean;
  status: string;
  beneficiary_verification_status: string;
  beneficiary_verified_data: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface TransactionRow {
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
  created_at: Date;
  updated_at: Date;
  source_type: string;
  destination_type: string;
  payment_rail: string | null;
  uma_address: string | null;
  quote_id: string | null;
  /** The receiver lookup whose CREATED transaction this is (or was, before a quote adopted it). */
  lookup_id: string | null;
  sent_amount: bigint | null;
  sent_currency: string | null;
  fees: bigint | null;
  exchange_rate: string | null;
  rate_details: Record<string, unknown> | null;
  counterparty_information: Record<string, string> | null;
  expires_at: Date | null;
  executed_at: Date | null;
  refund_reference: string | null;
  refund_status: "PENDING" | "COMPLETED" | "FAILED" | null;
  refund_reason: string | null;
  refund_initiated_at: Date | null;
  refund_settled_at: Date | null;
  /** Incoming UMA payments: receiver data given with the platform's approval. */
  receiver_customer_info: Record<string, string> | null;
  /** The rail's estimate of when the payment reaches its outcome; null until one arrives. */
  expected_settlement_at: Date | null;
  /** The connector its rail instruction went to; null before one went (or from before routing: the simulator). */
  connector: string | null;
  /** When the platform confirmed it delivered the receipt to its customer; null until then. */
  receipt_delivery_confirmed_at: Date | null;
}

/** Where a transaction's rail instruction goes (domain/rails.ts decides it). */
export interface RailRoute {
  environment: "SANDBOX" | "PRODUCTION";
  /** The connector's name: `sandbox` for every sandbox platform, the operator's binding for a production one. */
  connector: string;
  /** The payment rail ("" when a sandbox payment names none). */
  paymentRail: string;
}

/** The operator's routing of a production platform's (currency, payment rail) to a connector. */
export interface RailBindingRow {
  platform_id: string;
  currency: string;
  payment_rail: string;
  connector: string;
  source: "OPERATOR" | "CONFIG";
  created_at: Date;
  updated_at: Date;
}

/** The system accounts of a platform, per currency (opened on first use). */
export const SYSTEM_TYPES = {
  railClearing: "RAIL_CLEARING",
  sandboxFunding: "SANDBOX_FUNDING",
  /** Per currency, the platform's side of every conversion: buys the sending, sells the receiving currency. */
  fxPool: "FX_POOL",
  /** Quote fees earned by the platform. */
  feeRevenue: "FEE_REVENUE",
  /** Money of a failed quote payout whose refund failed too: an operator settles it by hand. */
  refundSuspense: "REFUND_SUSPENSE",
  /**
   * A returned pull (transfer-in) the receiving account could no longer cover: what it lacked. The
   * platform owes it (docs/connectors.md, "Returns"); the operator collects it from the platform.
   */
  returnShortfall: "RETURN_SHORTFALL",
  /**
   * What ownership verification by micro-deposits cost (domain/ownership.ts): each credit that
   * completed, booked from here to RAIL_CLEARING. Negative: the operator's expense.
   */
  microDepositExpense: "MICRO_DEPOSIT_EXPENSE",
} as const;

export interface OpenAccountInput {
  platformId: string;
  ownerKind: OwnerKind;
  customerId?: string;
  type: string;
  currency: string;
  reference: string;
  fundingInstructions: unknown[];
  now: Date;
}

export interface InternalAccountFilter {
  platformId: string;
  ownerKind: "CUSTOMER" | "PLATFORM";
  customerId?: string;
  currency?: string;
  type?: string;
}

export interface ExternalAccountScope {
  platformId: string;
  ownerKind: "CUSTOMER" | "PLATFORM";
  customerId?: string;
}

/** A new external account (the JSON columns as values; the repository encodes them). */
export type NewExternalAccount = Omit<ExternalAccountRow, "account_info" | "beneficiary_verified_data"> & {
  account_info: Record<string, unknown>;
  beneficiary_verified_data: Record<string, unknown> | null;
};

export interface TransactionFilter {
  platformId: string;
  customerId?: string;
  platformCustomerId?: string;
  status?: string;
  type?: string;
  createdFrom?: Date;
  createdTo?: Date;
  reference?: string;
}

/** Columns a transfer leaves unset (quote and incoming-payment columns). */
type OptionalTransactionColumns =
  | "source_type"
  | "destination_type"
  | "payment_rail"
  | "uma_address"
  | "quote_id"
  | "lookup_id"
  | "sent_amount"
  | "sent_currency"
  | "fees"
  | "exchange_rate"
  | "expires_at"
  | "executed_at"
  | "refund_reference"
  | "refund_status"
  | "refund_reason"
  | "refund_initiated_at"
  | "refund_settled_at"
  | "expected_settlement_at"
  | "connector"
  | "receipt_delivery_confirmed_at";

/** A new transaction row; the JSON columns come as JSON text. */
export type NewTransaction = Omit<TransactionRow, OptionalTransactionColumns | "rate_details" | "counterparty_information" | "receiver_customer_info"> &
  Partial<Pick<TransactionRow, OptionalTransactionColumns>> & {
    rate_details?: string | null;
    counterparty_information?: string | null;
    receiver_customer_info?: string | null;
  };

/** The columns a transaction's later changes set. */
export type TransactionChange = Partial<
  Pick<
    TransactionRow,
    | "status"
    | "failure_reason"
    | "failure_detail"
    | "settled_at"
    | "updated_at"
    | "executed_at"
    | "refund_reference"
    | "refund_status"
    | "refund_reason"
    | "refund_initiated_at"
    | "refund_settled_at"
    | "destination_account_id"
    | "expected_settlement_at"
    | "connector"
    | "payment_rail"
    | "receipt_delivery_confirmed_at"
  >
> & { /** JSON text of a map of strings. */ receiver_customer_info?: string | null };

export interface CustomerHoldings {
  accounts: { accountId: string; type: string; currency: string; balance: bigint; held: bigint }[];
  inFlight: { transactionId: string; type: string; status: string; amount: bigint; currency: string; refundStatus: string }[];
  closed: boolean;
}

/** One (currency, owner kind, type) group of accounts with its sums, as bigint minor units. */
export interface TrialBalanceRow {
  currency: string;
  ownerKind: string;
  type: string;
  accounts: bigint;
  balance: bigint;
  posted: bigint;
  /** Accounts whose stored balance differs from the sum of their postings. */
  mismatched: bigint;
}

/** A credit the bank received, as the ledger keeps it (rail notice INCOMING_CREDIT). */
export interface ReceivedCreditRow {
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
  /** SUSPENSE: matched no internal account; CREDITED: an INCOMING transaction credited it; RETURN_REQUESTED: a RETURN instruction is with the connector; RETURNED; RETURN_FAILED: the connector failed it (still in suspense). */
  status: "SUSPENSE" | "CREDITED" | "RETURN_REQUESTED" | "RETURNED" | "RETURN_FAILED";
  /** Why it went to suspense ("" when matched at once). */
  suspense_reason: string;
  platform_id: string | null;
  internal_account_id: string | null;
  transaction_id: string | null;
  note: string;
  received_at: Date;
  updated_at: Date;
  /** The RETURN instruction's transaction id (rail contract 1.3; a new one per attempt), or null before any. */
  return_transaction_id: string | null;
  /** The return reason sent (ACH R-code) and why the connector failed it (RETURN_FAILED). */
  return_reason: string;
  return_detail: string;
}

/** A receiving bank's correction of an external account (rail notice ACCOUNT_CORRECTION). */
export interface AccountCorrectionRow {
  id: string;
  connector: string;
  bank_entry_id: string;
  transaction_id: string;
  platform_id: string | null;
  external_account_id: string | null;
  code: string;
  corrected: Record<string, string>;
  corrected_data: string;
  status: "APPLIED" | "REFUSED";
  detail: string;
  received_at: Date;
}

/** An external-account ownership challenge (micro-deposits or wallet signature; domain/ownership.ts). */
export interface OwnershipChallengeRow {
  id: string;
  platform_id: string;
  external_account_id: string;
  /** MICRO_DEPOSITS or WALLET_SIGNATURE. */
  method: string;
  status: "PENDING" | "VERIFIED" | "FAILED" | "EXPIRED";
  currency: string;
  attempts: number;
  max_attempts: number;
  /** Why a FAILED or EXPIRED challenge ended (ATTEMPTS_EXCEEDED, EXPIRED, REPLACED, a rail's reason). */
  failure_reason: string;
  /** WALLET_SIGNATURE: the exact message the wallet signs; "" for MICRO_DEPOSITS. */
  message_to_sign: string;
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** One credit of a micro-deposit challenge: a rail instruction of its own (transaction_id). */
export interface MicroDepositRow {
  transaction_id: string;
  challenge_id: string;
  platform_id: string;
  amount: bigint;
  currency: string;
  connector: string;
  payment_rail: string;
  reference: string;
  status: "PENDING" | "COMPLETED" | "FAILED" | "RETURNED";
  reason: string;
  created_at: Date;
  updated_at: Date;
}
