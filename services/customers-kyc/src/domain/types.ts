/** Domain types of customers-kyc: plain data, no proto, no SQL. */

export type CustomerType = "INDIVIDUAL" | "BUSINESS";
export type KycStatus = "UNVERIFIED" | "PENDING" | "APPROVED" | "REJECTED";
export type VerificationStatus = "RESOLVE_ERRORS" | "PENDING" | "APPROVED" | "REJECTED";
export type InvitationStatus = "PENDING" | "CLAIMED" | "EXPIRED" | "CANCELLED";

export const KYC_STATUSES: readonly KycStatus[] = ["UNVERIFIED", "PENDING", "APPROVED", "REJECTED"];
export const VERIFICATION_STATUSES: readonly VerificationStatus[] = ["RESOLVE_ERRORS", "PENDING", "APPROVED", "REJECTED"];
export const OWNER_ROLES = ["UBO", "DIRECTOR", "COMPANY_OFFICER", "CONTROL_PERSON", "TRUSTEE", "GENERAL_PARTNER"] as const;
export type OwnerRole = (typeof OWNER_ROLES)[number];
export const ID_TYPES = ["SSN", "ITIN", "EIN", "NON_US_TAX_ID"] as const;

export interface Address {
  line1: string;
  line2?: string;
  city?: string;
  state?: string;
  postalCode: string;
  country: string;
}

export interface BusinessInfo {
  legalName: string;
  registrationNumber?: string;
  taxId?: string;
  incorporatedOn?: string;
  entityType?: string;
  countryOfIncorporation?: string;
  doingBusinessAs?: string;
  website?: string;
}

export interface Customer {
  id: string;
  platformId: string;
  platformCustomerId: string;
  customerType: CustomerType;
  /** "" when the platform has no UMA domain and none was given. */
  umaAddress: string;
  region: string;
  currencies: string[];
  email: string;
  /** kycStatus of an individual, kybStatus of a business. */
  verificationStatus: KycStatus;
  fullName: string;
  birthDate: string;
  nationality: string;
  address: Address | null;
  businessInfo: BusinessInfo | null;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
  /**
   * The email address the customer confirmed by code (contact verification); the email is
   * VERIFIED while it equals this. Written only by contact verification (absent: never verified).
   */
  verifiedEmail?: string | null;
}

/** Fields of a create or a patch as the caller sent them (absent = undefined). */
export interface CustomerInput {
  platformCustomerId?: string;
  customerType?: string;
  umaAddress?: string;
  region?: string;
  currencies?: string[];
  email?: string;
  fullName?: string;
  birthDate?: string;
  nationality?: string;
  address?: Partial<Address>;
  businessInfo?: Partial<BusinessInfo>;
  verificationStatus?: string;
}

export interface TimeWindow {
  after?: Date;
  before?: Date;
}

export interface CustomerFilter {
  platformId: string;
  platformCustomerId?: string;
  customerType?: CustomerType;
  created?: TimeWindow;
  updated?: TimeWindow;
  region?: string;
  currency?: string;
  umaAddress?: string;
  includeDeleted: boolean;
}

export interface VerificationError {
  type: "MISSING_FIELD" | "INVALID_FIELD" | "MISSING_BENEFICIAL_OWNER";
  field: string;
  reason: string;
}

export interface Verification {
  id: string;
  platformId: string;
  customerId: string;
  verificationStatus: VerificationStatus;
  errors: VerificationError[];
  createdAt: Date;
  updatedAt: Date;
}

export interface VerificationFilter {
  platformId: string;
  customerId?: string;
  verificationStatus?: VerificationStatus;
}

export interface PersonalInfo {
  firstName: string;
  lastName: string;
  middleName?: string;
  birthDate: string;
  nationality: string;
  address: Address;
  idType: (typeof ID_TYPES)[number];
  identifier: string;
  email?: string;
  phoneNumber?: string;
  countryOfIssuance?: string;
}

export interface BeneficialOwner {
  id: string;
  platformId: string;
  customerId: string;
  roles: OwnerRole[];
  ownershipPercentage: number;
  personalInfo: PersonalInfo;
  kycStatus: KycStatus;
  createdAt: Date;
  updatedAt: Date;
}

/** An invitation as stored: EXPIRED is never stored, it is derived on read. */
export interface Invitation {
  code: string;
  platformId: string;
  inviterCustomerId: string;
  inviterUma: string;
  status: "PENDING" | "CLAIMED" | "CANCELLED";
  firstName: string;
  amountToSend: bigint | null;
  amountCurrency: string;
  inviteeUma: string;
  expiresAt: Date | null;
  claimedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** An invitation as the API shows it: a pending one past its expiry reads EXPIRED. */
export interface InvitationView extends Omit<Invitation, "status"> {
  status: InvitationStatus;
  url: string;
}

/** What the service needs to know of a platform (from auth-sessions). */
export interface PlatformSettings {
  umaDomain: string;
  supportedCurrencies: string[];
  isRegulated: boolean;
}

export interface PageRequest {
  limit?: number;
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount: number;
}

/** Keyset position of the newest-first lists. */
export interface After {
  createdAt: Date;
  id: string;
}

/** A hosted verification link; `tokenSha256` is the hash of the single-use token its URL carries. */
export interface KycLink {
  id: string;
  platformId: string;
  customerId: string;
  tokenSha256: string;
  redirectUrl: string;
  createdAt: Date;
  expiresAt: Date;
  completedAt: Date | null;
}

/** The review queue's states: SUBMITTED → APPROVED | REJECTED | MORE_INFO_REQUESTED → (resubmitted) SUBMITTED. */
export type ReviewStatus = "SUBMITTED" | "APPROVED" | "REJECTED" | "MORE_INFO_REQUESTED";
export const REVIEW_STATUSES: readonly ReviewStatus[] = ["SUBMITTED", "APPROVED", "REJECTED", "MORE_INFO_REQUESTED"];
export type ReviewDecision = "APPROVE" | "REJECT" | "REQUEST_INFO";

/** One subject's (a customer's or a beneficial owner's) verification request to the KYC provider. */
export interface KycReview {
  id: string;
  platformId: string;
  customerId: string;
  subjectKind: "CUSTOMER" | "BENEFICIAL_OWNER";
  /** Customer:... or BeneficialOwner:... */
  subjectId: string;
  /** The verification the decision answers (for an owner: its business's verification). */
  verificationId: string | null;
  status: ReviewStatus;
  reason: string;
  submissions: number;
  createdAt: Date;
  updatedAt: Date;
}

export const DOCUMENT_TYPES = [
  "PASSPORT",
  "DRIVERS_LICENSE",
  "NATIONAL_ID",
  "PROOF_OF_ADDRESS",
  "BANK_STATEMENT",
  "TAX_RETURN",
  "CERTIFICATE_OF_INCORPORATION",
  "ARTICLES_OF_INCORPORATION",
  "ARTICLES_OF_ASSOCIATION",
  "STATE_REGISTRY_EXCERPT",
  "GOOD_STANDING_CERTIFICATE",
  "INFORMATION_STATEMENT",
  "INCUMBENCY_CERTIFICATE",
  "BUSINESS_LICENSE",
  "SHAREHOLDER_REGISTER",
  "POWER_OF_ATTORNEY",
  "UTILITY_BILL",
  "ELECTRICITY_BILL",
  "RENT_OR_LEASE_AGREEMENT",
  "DIRECTOR_REGISTRY",
  "TRUST_AGREEMENT",
  "STATE_COMPANY_REGISTRY",
  "PARTNERSHIP_CONTROL_AGREEMENT",
  "PARTNERSHIP_AGREEMENT",
  "SELFIE",
  "OTHER",
] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** A KYC document's metadata (its bytes are read only by the operator's review). */
export interface KycDocument {
  id: string;
  platformId: string;
  customerId: string;
  /** Customer:... or BeneficialOwner:... */
  documentHolder: string;
  documentType: DocumentType;
  side: "" | "FRONT" | "BACK";
  country: string;
  documentNumber: string;
  issuingAuthority: string;
  fileName: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  /** The final review decision that used it; it can no longer be replaced or deleted. */
  usedByReviewId: string | null;
  createdAt: Date;
  updatedAt: Date;
}
