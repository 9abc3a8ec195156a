/** Strong customer authentication (docs/sca.md): what the use cases need from storage and the outside. */

export type ScaSubjectType = "QUOTE" | "TRUST_BENEFICIARY" | "UNTRUST_BENEFICIARY";

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
