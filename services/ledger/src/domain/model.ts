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
}
