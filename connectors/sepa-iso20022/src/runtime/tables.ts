import type { Generated } from "kysely";

export type TransferState = "QUEUED" | "FILED" | "SENT" | "COMPLETED" | "REJECTED" | "RETURNED";

export interface SepaTables {
  sepa_transfers: {
    transaction_id: string;
    platform_id: string;
    end_to_end_id: string;
    amount: bigint;
    creditor_name: string;
    creditor_iban: string;
    creditor_bic: string | null;
    remittance: string;
    window_id: string;
    window_closes_at: Date;
    state: TransferState;
    file_name: string | null;
    created_at: Date;
    updated_at: Date;
  };
  sepa_files: {
    file_name: string;
    window_id: string;
    sequence: number;
    content: string;
    sha256: string;
    transfer_count: number;
    control_sum: bigint;
    state: "BUILT" | "UPLOADED" | "ACCEPTED" | "REJECTED" | "PARTIALLY_ACCEPTED";
    built_at: Date;
    uploaded_at: Date | null;
    /** The pain.002 that gave the bank's verdict on the file, its reason, and when it was read. */
    status_report: string | null;
    status_reason: string | null;
    acknowledged_at: Date | null;
  };
  sepa_bank_documents: { file_name: string; sha256: string; message: string; outcomes: number; read_at: Date };
  sepa_received_credits: {
    id: string;
    document: string;
    amount: bigint;
    currency: string;
    debtor_name: string | null;
    debtor_iban: string | null;
    reference: string | null;
    booking_date: string | null;
    received_at: Date;
  };
}

export type { Generated };
