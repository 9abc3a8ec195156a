import type { Environment } from "../types.js";
import type { Credential, CredentialMaterial, DelegatedKey, PasskeyChallenge, SignedRequest, StoredDelegatedKey, StoredOtp, WalletSession } from "./types.js";

/** Storage of the wallet-auth use cases, bound to one database transaction. */
export interface WalletStore {
  environmentOf(platformId: string): Promise<Environment | undefined>;
  /** The platform's own WebAuthn relying party from its config; undefined when it uses the deployment's. */
  relyingPartyOf(platformId: string): Promise<RelyingParty | undefined>;
  credentials: {
    insert(c: Credential): Promise<void>;
    /** A live credential of that platform; with `forUpdate`, locked until the transaction ends. */
    get(platformId: string, id: string, opts?: { forUpdate?: boolean }): Promise<Credential | undefined>;
    /** Live credentials of the account, oldest first. */
    listByAccount(platformId: string, accountId: string): Promise<Credential[]>;
    updateMaterial(platformId: string, id: string, material: CredentialMaterial, at: Date): Promise<void>;
    setLastChallengeAt(platformId: string, id: string, at: Date): Promise<void>;
    markDeleted(platformId: string, id: string, at: Date): Promise<boolean>;
  };
  otps: {
    /** Replaces any earlier OTP of the credential. */
    put(otp: StoredOtp): Promise<void>;
    get(platformId: string, credentialId: string): Promise<StoredOtp | undefined>;
    setAttempts(platformId: string, credentialId: string, attempts: number): Promise<void>;
    remove(platformId: string, credentialId: string): Promise<void>;
  };
  passkeyChallenges: {
    insert(c: PasskeyChallenge): Promise<void>;
    get(platformId: string, id: string): Promise<PasskeyChallenge | undefined>;
    /** False when it was already used. */
    markUsed(platformId: string, id: string, at: Date): Promise<boolean>;
  };
  sessions: {
    insert(s: WalletSession): Promise<void>;
    get(platformId: string, id: string): Promise<WalletSession | undefined>;
    /** Sessions neither revoked nor expired at `now`, newest first. */
    listActive(platformId: string, accountId: string, now: Date): Promise<WalletSession[]>;
    findActiveByKey(platformId: string, accountId: string, publicKey: string, now: Date): Promise<WalletSession | undefined>;
    revoke(platformId: string, id: string, at: Date): Promise<boolean>;
    revokeByCredential(platformId: string, credentialId: string, at: Date): Promise<void>;
  };
  signedRequests: {
    insert(r: SignedRequest): Promise<void>;
    get(platformId: string, id: string): Promise<SignedRequest | undefined>;
    /** False when it was already used (the single-use guarantee). */
    markUsed(platformId: string, id: string, at: Date): Promise<boolean>;
  };
  delegatedKeys: {
    insert(k: StoredDelegatedKey): Promise<void>;
    /** With `forUpdate`, locked until the transaction ends. */
    get(platformId: string, id: string, opts?: { forUpdate?: boolean }): Promise<StoredDelegatedKey | undefined>;
    byActivationRequest(platformId: string, requestId: string): Promise<StoredDelegatedKey | undefined>;
    /** The account's ACTIVE key, if any. */
    active(platformId: string, accountId: string): Promise<StoredDelegatedKey | undefined>;
    /** The keys of the account or of the funding source (both: both), newest first. */
    list(platformId: string, filter: { accountId?: string; fundingSourceId?: string }): Promise<DelegatedKey[]>;
    /** Moves a key from one status to another; false when it was not in `from` any more. */
    setStatus(platformId: string, id: string, from: DelegatedKey["status"], to: DelegatedKey["status"], at: Date): Promise<boolean>;
  };
  walletKeys: {
    /** The sealed key and the id of the key that sealed it (null: sealed before key ids). */
    get(platformId: string, accountId: string): Promise<SealedWalletKey | undefined>;
    /** Keeps an existing row (a concurrent export created it first). */
    insertIfAbsent(platformId: string, accountId: string, sealed: SealedWalletKey, at: Date): Promise<void>;
    /**
     * Up to `limit` rows not sealed under `currentKeyId` (another key id, or none), after account
     * `after` in account-id order, locked for update (rows another pass holds are skipped).
     */
    notSealedUnder(currentKeyId: string, after: string, limit: number): Promise<(SealedWalletKey & { accountId: string })[]>;
    /** Rewrites a row's sealed key, only if it is still sealed under `fromKeyId` (false otherwise). */
    reseal(accountId: string, fromKeyId: string | null, sealed: SealedWalletKey): Promise<boolean>;
    /** How many rows each key id sealed (null: before key ids). */
    countByKeyId(): Promise<{ keyId: string | null; rows: number }[]>;
  };
  events: {
    /**
     * A delegated key of a card funding source became ACTIVE or was REVOKED: DelegatedKeyChanged
     * into this transaction's outbox, so the ledger hears of it if and only if the change commits
     * (the source's status, docs/cards.md). A wallet-scoped key (made before cards) writes nothing.
     */
    delegatedKeyChanged(key: DelegatedKey): Promise<void>;
  };
}

export interface SealedWalletKey {
  sealed: Uint8Array;
  keyId: string | null;
}

export type WalletTransact = <T>(work: (store: WalletStore) => Promise<T>) => Promise<T>;

/** The ledger, as far as wallet auth needs it. */
export interface AccountDirectory {
  /**
   * Throws 404 INTERNAL_ACCOUNT_NOT_FOUND for an unknown or foreign account and 400 for an account
   * that is not an EMBEDDED_WALLET.
   */
  requireEmbeddedWallet(platformId: string, accountId: string): Promise<void>;
  /**
   * A card funding source (the ledger's): its card and account. Throws 404
   * CARD_FUNDING_SOURCE_NOT_FOUND for an unknown or foreign one.
   */
  cardFundingSource(platformId: string, fundingSourceId: string): Promise<CardFundingSourceFacts>;
}

/** What a delegated key needs of a card funding source. */
export interface CardFundingSourceFacts {
  id: string;
  cardId: string;
  accountId: string;
  /** The bound account's type (EMBEDDED_WALLET for a key). */
  accountType: string;
  /** ACTIVE, PENDING_AUTH or INACTIVE (unbound). */
  status: string;
  /** The card's state. */
  cardState: string;
}

/** Sends OTP emails (SMTP when configured, the log otherwise). Called after the commit. */
export interface Mailer {
  /** Whether a code for a platform of this environment reaches its user (production: only by a real mail server). */
  deliversTo(environment: "SANDBOX" | "PRODUCTION"): boolean;
  sendOtp(to: string, code: string, ctx: { platformId: string; credentialId: string; environment: "SANDBOX" | "PRODUCTION" }): Promise<void>;
  /**
   * A customer's contact-verification code (customers-kyc). Never logged: false when nothing was
   * sent (a sandbox platform without a mail server); a production platform without one gets 400
   * EMAIL_DELIVERY_NOT_CONFIGURED.
   */
  sendContactCode(to: string, code: string, ctx: { platformId: string; customerId: string; environment: "SANDBOX" | "PRODUCTION" }): Promise<boolean>;
}

export interface OidcIdentity {
  issuer: string;
  subject: string;
  email?: string;
}

/** Checks OIDC identity tokens. Failures throw OidcRejected with a readable detail. */
export interface OidcVerifier {
  /**
   * Signature against the keys of an issuer configured for this platform, iss, aud, exp/nbf, iat
   * within 60 s of `now`. OidcIssuerUnavailable when the issuer's keys cannot be fetched.
   */
  verify(token: string, now: Date, platformId: string): Promise<OidcIdentity>;
  /** Structure only (a JWT whose iss is a known issuer or the sandbox one): sandbox creates. */
  inspect(token: string, now: Date): OidcIdentity;
}

/** Which check an OIDC token failed: a stable name, sent to the platform as `details.check`. */
export type OidcCheck =
  | "MALFORMED"
  | "ISSUER_UNKNOWN"
  | "ALGORITHM_NOT_ALLOWED"
  | "KEY_UNKNOWN"
  | "SIGNATURE"
  | "AUDIENCE"
  | "EXPIRED"
  | "NOT_YET_VALID"
  | "IAT_MISSING"
  | "IAT_TOO_OLD"
  | "IAT_IN_FUTURE"
  | "SUBJECT_MISSING"
  | "SUBJECT_MISMATCH"
  | "INVALID_CLAIMS";

export class OidcRejected extends Error {
  constructor(
    message: string,
    readonly check: OidcCheck = "INVALID_CLAIMS",
  ) {
    super(message);
  }
}

/** The issuer's keys could not be had (discovery or JWKS fetch failed): not the caller's fault. */
export class OidcIssuerUnavailable extends Error {
  constructor(
    readonly issuer: string,
    message: string,
  ) {
    super(message);
  }
}

export interface PasskeyRegistration {
  credentialId: string;
  publicKey: string;
  counter: number;
}

/** A WebAuthn relying party: the id authenticators hash into authenticatorData, and the origins allowed in clientDataJSON. */
export interface RelyingParty {
  rpId: string;
  origins: string[];
}

/** WebAuthn ceremonies against the given relying party (the platform's). Failures throw PasskeyRejected. */
export interface PasskeyVerifier {
  verifyRegistration(input: {
    rp: RelyingParty;
    challenge: string;
    attestation: { credentialId: string; clientDataJson: string; attestationObject: string; transports: string[] };
  }): Promise<PasskeyRegistration>;
  verifyAssertion(input: {
    rp: RelyingParty;
    expectedChallenge: string;
    credential: { credentialId: string; publicKey: string; counter: number; transports: string[] };
    assertion: { credentialId: string; clientDataJson: string; authenticatorData: string; signature: string; userHandle?: string };
  }): Promise<{ newCounter: number }>;
}

export class PasskeyRejected extends Error {}
