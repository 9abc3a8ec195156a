/** Strong customer authentication (docs/sca.md): what the use cases need from storage and the outside. */

/** LOGIN: an SCA login (POST /sca/login/start), its subject id the customer id. */
export type ScaSubjectType = "QUOTE" | "TRUST_BENEFICIARY" | "UNTRUST_BENEFICIARY" | "LOGIN";

/** A customer's TOTP authenticator (pending until its first code confirms it). */
export interface StoredTotpFactor {
  platformId: string;
  customerId: string;
  /** The shared secret, sealed under the wallet encryption key `keyId`. */
  secretSealed: Uint8Array;
  keyId: string;
  createdAt: Date;
  confirmedAt: Date | null;
  /** The last 30-second step whose code was accepted. */
  lastStep: number;
  /** SHA-256 hashes of the unused recovery codes. */
  recoveryCodesSha256: string[];
}

/** A customer's login-security state (failed logins and lockout). */
export interface LoginSecurity {
  failedAttempts: number;
  lockedUntil: Date | null;
  suspended: boolean;
}

export interface StoredScaChallenge {
  id: string;
  platformId: string;
  customerId: string;
  subjectType: ScaSubjectType;
  subjectId: string;
  factor: "SMS_OTP";
  purpose: string;
  /** SHA-256 of "<challenge id>:<code>"; the code itself is never stored. */
  codeSha256: string;
  attempts: number;
  createdAt: Date;
  expiresAt: Date;
  /** Service-clock time of the last delivery. */
  lastSentAt: Date;
  authorizedAt: Date | null;
}

/** A factor reset's stored status (EXPIRED is derived on read from expiresAt; reset.ts). */
export type ResetStatus = "INITIATED" | "PENDING_REVIEW" | "LIVENESS_PASSED" | "COMPLETED" | "REJECTED" | "EXPIRED";

/** A liveness-gated reset of a lost factor (POST /sca/factors/reset). */
export interface StoredFactorReset {
  id: string;
  platformId: string;
  customerId: string;
  factor: "SMS_OTP" | "TOTP";
  status: ResetStatus;
  /** Platform time (a sandbox clock advance expires it). */
  createdAt: Date;
  expiresAt: Date;
  /** Service-clock time of the start: the 5-per-24-hours limit counts these. */
  startedAt: Date;
  updatedAt: Date;
}

export type LivenessStatus = "AWAITING_SUBMISSION" | "SUBMITTED" | "APPROVED" | "REJECTED";

/** A liveness check of the operator's review queue (liveness-review.ts). */
export interface StoredLivenessCheck {
  id: string;
  platformId: string;
  customerId: string;
  resetId: string;
  environment: "SANDBOX" | "PRODUCTION";
  status: LivenessStatus;
  /** SHA-256 (hex) of the hosted page's token; the token itself is never stored. */
  tokenSha256: string;
  reason: string;
  selfieContentType: string;
  selfieSha256: string;
  selfieSizeBytes: number;
  createdAt: Date;
  submittedAt: Date | null;
  decidedAt: Date | null;
  expiresAt: Date;
}

/** Storage bound to one database transaction. */
export interface ScaStore {
  environmentOf(platformId: string): Promise<"SANDBOX" | "PRODUCTION" | undefined>;
  challenges: {
    insert(c: StoredScaChallenge): Promise<void>;
    /** The subject's latest challenge; with `forUpdate`, locked until the transaction ends. */
    latest(platformId: string, subjectType: ScaSubjectType, subjectId: string, opts?: { forUpdate?: boolean }): Promise<StoredScaChallenge | undefined>;
    setAttempts(id: string, attempts: number): Promise<void>;
    setCode(id: string, codeSha256: string, lastSentAt: Date): Promise<void>;
    markAuthorized(id: string, at: Date): Promise<void>;
  };
  totp: {
    /** The customer's TOTP row; with `forUpdate`, locked until the transaction ends. */
    get(platformId: string, customerId: string, opts?: { forUpdate?: boolean }): Promise<StoredTotpFactor | undefined>;
    /** Inserts, or replaces an unconfirmed row. */
    put(f: StoredTotpFactor): Promise<void>;
    confirm(platformId: string, customerId: string, at: Date, step: number, recoveryCodesSha256: string[]): Promise<void>;
    use(platformId: string, customerId: string, lastStep: number, recoveryCodesSha256: string[]): Promise<void>;
    /** Deletes the customer's TOTP factor (a completed reset). */
    remove(platformId: string, customerId: string): Promise<void>;
  };
  /** The mobile number an SMS_OTP reset enrolled (one per customer). */
  mobile: {
    set(platformId: string, customerId: string, countryCode: string, number: string, at: Date): Promise<void>;
    get(platformId: string, customerId: string): Promise<{ countryCode: string; number: string } | undefined>;
  };
  resets: {
    insert(r: StoredFactorReset): Promise<void>;
    /** The customer's reset; with `forUpdate`, locked until the transaction ends. */
    get(platformId: string, customerId: string, id: string, opts?: { forUpdate?: boolean }): Promise<StoredFactorReset | undefined>;
    setStatus(id: string, status: ResetStatus, at: Date): Promise<void>;
    /** Service-clock start times of the customer's resets started at or after `since`. */
    startedSince(platformId: string, customerId: string, since: Date): Promise<Date[]>;
  };
  liveness: {
    insert(c: StoredLivenessCheck): Promise<void>;
    get(id: string, opts?: { forUpdate?: boolean }): Promise<StoredLivenessCheck | undefined>;
    byToken(tokenSha256: string, opts?: { forUpdate?: boolean }): Promise<StoredLivenessCheck | undefined>;
    /** Oldest first. */
    list(filter: { status?: LivenessStatus; platformId?: string; limit: number }): Promise<StoredLivenessCheck[]>;
    submit(id: string, selfie: { contentType: string; sha256: string; content: Uint8Array }, at: Date): Promise<void>;
    decide(id: string, status: "APPROVED" | "REJECTED", reason: string, at: Date): Promise<void>;
    selfie(id: string): Promise<Uint8Array | undefined>;
  };
  loginSecurity: {
    /** With `forUpdate`: the row is created when missing and locked until the transaction ends. */
    get(platformId: string, customerId: string, opts?: { forUpdate?: boolean }): Promise<LoginSecurity>;
    set(platformId: string, customerId: string, state: LoginSecurity): Promise<void>;
  };
  trusted: {
    isTrusted(platformId: string, externalAccountId: string): Promise<boolean>;
    trust(platformId: string, customerId: string, externalAccountId: string, at: Date): Promise<void>;
    untrust(platformId: string, externalAccountId: string): Promise<void>;
  };
}

export type ScaTransact = <T>(work: (store: ScaStore) => Promise<T>) => Promise<T>;

/** What SCA needs to know of a customer (customers-kyc). */
export interface ScaCustomer {
  id: string;
  /** ISO 3166-1 alpha-2: the postal address's country, else the business's country of incorporation, else the region. */
  country: string;
  email: string;
}

export interface ScaCustomerDirectory {
  /** 404 USER_NOT_FOUND for an unknown or foreign customer. */
  get(platformId: string, customerId: string): Promise<ScaCustomer>;
}

/**
 * Delivers a challenge's one-time code to the customer (the deployment's mail server, as EMAIL_OTP
 * codes go). Never logs the code.
 */
export interface ScaCodeSender {
  sendOtp(to: string, code: string, ctx: { platformId: string; credentialId: string; environment: "SANDBOX" | "PRODUCTION" }): Promise<void>;
}

/**
 * The liveness provider connector contract (docs/sca.md, "Factor reset"): a factor reset opens a
 * check for the customer, the end user completes it with the handles it answers (an opaque access
 * token and a hosted page), and the decision comes back later through `applyLivenessOutcome`
 * (liveness.ts), which moves the reset (PENDING_REVIEW, LIVENESS_PASSED or REJECTED). The
 * operator's review queue (liveness.ts) is the connector that ships, as for KYC (docs/kyc.md).
 */
export interface LivenessStartRequest {
  platformId: string;
  customerId: string;
  /** The reset the check gates. */
  resetId: string;
  environment: "SANDBOX" | "PRODUCTION";
  /** The end of the reset window: the check is of no use after it. */
  expiresAt: Date;
}

export interface LivenessHandles {
  checkId: string;
  /** Opaque; a secret (never logged, stored only as a hash). */
  accessToken: string;
  /** The hosted page's path on the gateway; it carries the token. */
  verificationPath: string;
}

export interface LivenessProvider {
  /** Opens the check inside the caller's transaction (the reset and its check exist together) and decides nothing. */
  start(store: ScaStore, req: LivenessStartRequest, now: Date): Promise<LivenessHandles>;
}
