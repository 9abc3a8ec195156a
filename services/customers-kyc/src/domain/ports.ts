import type {
  After,
  BeneficialOwner,
  Customer,
  CustomerFilter,
  Invitation,
  InvitationView,
  KycDocument,
  KycLink,
  KycReview,
  KycStatus,
  ReviewStatus,
  PlatformSettings,
  Verification,
  VerificationFilter,
} from "./types.js";

/**
 * What the use cases need from storage and the outbox. `data/` implements it over one database
 * transaction, so a change and the events announcing it commit together. Every lookup takes the
 * platform id: another platform's record is simply not found.
 */
export interface Store {
  customers: {
    /** Throws Conflict("platformCustomerId" | "umaAddress") on a live duplicate. */
    insert(c: Customer): Promise<void>;
    /** Live or deleted; `forUpdate` locks the row until the transaction ends. */
    get(platformId: string, id: string, opts?: { forUpdate?: boolean }): Promise<Customer | undefined>;
    /** Throws Conflict like insert. */
    update(c: Customer): Promise<void>;
    findLiveByUma(platformId: string, umaAddress: string): Promise<Customer | undefined>;
    /** Up to `limit` live customers without a UMA address, oldest first, locked. */
    liveWithoutUma(platformId: string, limit: number): Promise<Customer[]>;
    /** `limit` rows newest first, strictly after `after`. */
    list(filter: CustomerFilter, page: { limit: number; after?: After }): Promise<Customer[]>;
    count(filter: CustomerFilter): Promise<number>;
  };
  verifications: {
    insert(v: Verification): Promise<void>;
    /** Status, errors and updatedAt. */
    update(v: Verification): Promise<void>;
    get(platformId: string, id: string): Promise<Verification | undefined>;
    list(filter: VerificationFilter, page: { limit: number; after?: After }): Promise<Verification[]>;
    count(filter: VerificationFilter): Promise<number>;
  };
  owners: {
    insert(o: BeneficialOwner): Promise<void>;
    get(platformId: string, id: string, opts?: { forUpdate?: boolean }): Promise<BeneficialOwner | undefined>;
    update(o: BeneficialOwner): Promise<void>;
    /** Every owner of one business, oldest first (for the UBO total and verification). */
    allOf(platformId: string, customerId: string): Promise<BeneficialOwner[]>;
    list(platformId: string, customerId: string, page: { limit: number; after?: After }): Promise<BeneficialOwner[]>;
    count(platformId: string, customerId: string): Promise<number>;
  };
  invitations: {
    /** False when the code is taken (the caller draws another). */
    insert(i: Invitation): Promise<boolean>;
    get(platformId: string, code: string, opts?: { forUpdate?: boolean }): Promise<Invitation | undefined>;
    update(i: Invitation): Promise<void>;
  };
  kycLinks: {
    insert(l: KycLink): Promise<void>;
    /** By the token's hash, whatever the platform (the token is the hosted page's credential). */
    getByToken(tokenSha256: string, opts?: { forUpdate?: boolean }): Promise<KycLink | undefined>;
    /** Ends the customer's open links at `now`. */
    expireOpen(platformId: string, customerId: string, now: Date): Promise<void>;
    complete(id: string, now: Date): Promise<void>;
  };
  reviews: {
    insert(r: KycReview): Promise<void>;
    update(r: KycReview): Promise<void>;
    /** Any platform's review (the queue is the operator's). */
    get(id: string, opts?: { forUpdate?: boolean }): Promise<KycReview | undefined>;
    /** The subject's open (SUBMITTED or MORE_INFO_REQUESTED) review. */
    openOf(platformId: string, subjectId: string, opts?: { forUpdate?: boolean }): Promise<KycReview | undefined>;
    /** Every review of a customer and its owners, oldest first. */
    ofCustomer(platformId: string, customerId: string): Promise<KycReview[]>;
    /** Oldest first. */
    list(filter: { status?: ReviewStatus; platformId?: string; customerId?: string; limit: number }): Promise<KycReview[]>;
  };
  documents: {
    insert(d: KycDocument, content: Uint8Array): Promise<void>;
    replace(d: KycDocument, content: Uint8Array): Promise<void>;
    delete(id: string): Promise<void>;
    /** `platformId` undefined only for the operator. */
    get(platformId: string | undefined, id: string, opts?: { forUpdate?: boolean }): Promise<KycDocument | undefined>;
    content(id: string): Promise<Uint8Array | undefined>;
    list(filter: { platformId: string; holder?: string; customerId?: string }, page: { limit: number; after?: After }): Promise<KycDocument[]>;
    count(filter: { platformId: string; holder?: string }): Promise<number>;
    /** The holders' documents not yet used by a final decision become used by `reviewId`. */
    markUsed(platformId: string, holders: string[], reviewId: string): Promise<void>;
  };
  events: {
    customerCreated(c: Customer, at: Date): Promise<void>;
    customerUpdated(c: Customer, at: Date): Promise<void>;
    customerDeleted(c: Customer, at: Date): Promise<void>;
    customerStatusChanged(c: Customer, previous: KycStatus, at: Date): Promise<void>;
    verificationUpdated(v: Verification, at: Date): Promise<void>;
    ownerChanged(o: BeneficialOwner, created: boolean, at: Date): Promise<void>;
    invitationChanged(i: InvitationView, at: Date): Promise<void>;
  };
}

/** Runs `work` in one database transaction (committed when it resolves, rolled back when it throws). */
export type Transact = <T>(work: (store: Store) => Promise<T>) => Promise<T>;

/** The platform facts this service needs, read from auth-sessions (never inside a transaction). */
export interface PlatformDirectory {
  settings(platformId: string): Promise<PlatformSettings & { environment: "SANDBOX" | "PRODUCTION" }>;
}

/** What a customer holds in the ledger (minor units as bigint); both lists empty means nothing. */
export interface CustomerHoldings {
  accounts: { accountId: string; type: string; currency: string; balance: bigint; held: bigint }[];
  inFlightTransactions: { transactionId: string; type: string; status: string; amount: bigint; currency: string; refundStatus: string }[];
  /** True once the ledger has closed the customer: it refuses every money movement for it. */
  closed: boolean;
}

/**
 * The ledger, asked before a customer is deleted (never inside a transaction). `closeIfEmpty`
 * checks and, when the customer holds nothing, closes it in the ledger in one step, so no money
 * movement can start between the check and the delete.
 */
export interface CustomerLedger {
  closeIfEmpty(platformId: string, customerId: string): Promise<CustomerHoldings>;
}

/** Thrown by inserts and updates on a unique-index violation. */
export class Conflict extends Error {
  constructor(readonly field: "platformCustomerId" | "umaAddress") {
    super(`${field} is already used by another customer`);
    this.name = "Conflict";
  }
}
