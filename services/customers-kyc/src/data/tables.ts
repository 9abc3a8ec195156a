import type { ColumnType, JSONColumnType, Selectable } from "kysely";
import type { Address, BusinessInfo, PersonalInfo, VerificationError } from "../domain/types.js";

/** Kysely types of the customers_kyc schema (see migrations/). */

type Timestamp = ColumnType<Date, Date, Date>;
type NullableTimestamp = ColumnType<Date | null, Date | null | undefined, Date | null>;
type NullableJson<T> = ColumnType<T | null, string | null, string | null>;

export interface CustomersTable {
  id: string;
  platform_id: string;
  platform_customer_id: string;
  customer_type: "INDIVIDUAL" | "BUSINESS";
  uma_address: string;
  region: string;
  currencies: JSONColumnType<string[]>;
  email: string;
  verification_status: string;
  full_name: string;
  birth_date: string;
  nationality: string;
  address: NullableJson<Address>;
  business_info: NullableJson<BusinessInfo>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
  /** The email address the customer confirmed by code (contact verification); null until then. */
  verified_email: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface VerificationsTable {
  id: string;
  platform_id: string;
  customer_id: string;
  verification_status: string;
  errors: JSONColumnType<VerificationError[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface BeneficialOwnersTable {
  id: string;
  platform_id: string;
  customer_id: string;
  roles: JSONColumnType<string[]>;
  ownership_percentage: number;
  personal_info: JSONColumnType<PersonalInfo>;
  kyc_status: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface InvitationsTable {
  code: string;
  platform_id: string;
  inviter_customer_id: string;
  inviter_uma: string;
  status: "PENDING" | "CLAIMED" | "CANCELLED";
  first_name: string;
  /** int8, read as bigint. */
  amount_to_send: ColumnType<bigint | null, bigint | null, bigint | null>;
  amount_currency: string;
  invitee_uma: string;
  expires_at: NullableTimestamp;
  claimed_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface KycLinksTable {
  id: string;
  platform_id: string;
  customer_id: string;
  token_sha256: string;
  redirect_url: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  completed_at: NullableTimestamp;
}

export interface CustomersKycDatabase {
  customers: CustomersTable;
  verifications: VerificationsTable;
  beneficial_owners: BeneficialOwnersTable;
  invitations: InvitationsTable;
  kyc_links: KycLinksTable;
  kyc_reviews: KycReviewsTable;
  kyc_documents: KycDocumentsTable;
  contact_verification_codes: ContactVerificationCodesTable;
}

/** A sent contact-verification code: only its SHA-256, with the wrong guesses counted. */
export interface ContactVerificationCodesTable {
  platform_id: string;
  customer_id: string;
  channel: "EMAIL" | "PHONE";
  sent_to: string;
  code_sha256: string;
  attempts: number;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export type CustomerRow = Selectable<CustomersTable>;
export type VerificationRow = Selectable<VerificationsTable>;
export type BeneficialOwnerRow = Selectable<BeneficialOwnersTable>;
export type InvitationRow = Selectable<InvitationsTable>;
export type KycLinkRow = Selectable<KycLinksTable>;

export interface KycReviewsTable {
  id: string;
  platform_id: string;
  customer_id: string;
  subject_kind: string;
  subject_id: string;
  verification_id: string | null;
  status: string;
  reason: string;
  submissions: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface KycDocumentsTable {
  id: string;
  platform_id: string;
  customer_id: string;
  document_holder: string;
  document_type: string;
  side: string;
  country: string;
  document_number: string;
  issuing_authority: string;
  file_name: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  content: Uint8Array;
  used_by_review_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type KycReviewRow = Selectable<KycReviewsTable>;
export type KycDocumentRow = Selectable<KycDocumentsTable>;
