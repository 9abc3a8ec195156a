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
