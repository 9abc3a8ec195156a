import type { Environment } from "../types.js";

/** Embedded-wallet authentication shapes (plain TypeScript). */

export const CREDENTIAL_TYPES = ["EMAIL_OTP", "OAUTH", "PASSKEY"] as const;
export type CredentialType = (typeof CREDENTIAL_TYPES)[number];

export type CredentialMaterial =
  | { type: "EMAIL_OTP"; email: string }
  | { type: "OAUTH"; issuer: string; subject: string }
  | {
      type: "PASSKEY";
      credentialId: string;
      /** base64url COSE key; absent for a sandbox attestation that did not verify (magic values only). */
      publicKey?: string;
      counter: number;
      transports: string[];
    };

export interface Credential {
  id: string;
  platformId: string;
  accountId: string;
  type: CredentialType;
  nickname: string;
  material: CredentialMaterial;
  lastChallengeAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The public AuthMethod: exactly these fields. */
export interface AuthMethod {
  id: string;
  accountId: string;
  type: CredentialType;
  nickname: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface WalletSession {
  id: string;
  platformId: string;
  accountId: string;
  credentialId: string;
  type: CredentialType;
  nickname: string;
  /** Compressed P-256 public key (hex) of the session signing key. */
  publicKey: string;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

export interface IssuedSession extends WalletSession {
  /** The session private key sealed to the client's key (base58check HPKE). */
  encryptedSessionSigningKey: string;
}

export interface SignedChallenge {
  type: string;
  payloadToSign: string;
  requestId: string;
  expiresAt: Date;
}

export interface SignedRequest {
  id: string;
  platformId: string;
  accountId: string;
  operation: string;
  bodySha256: string;
  payloadToSign: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

export interface StoredOtp {
  credentialId: string;
  platformId: string;
  codeSha256: string;
  attempts: number;
  createdAt: Date;
  expiresAt: Date;
}

export interface PasskeyChallenge {
  id: string;
  platformId: string;
  credentialId: string;
  challenge: string;
  clientPublicKey: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

/** A key the service custodies to sign EXECUTE_QUOTE for one embedded wallet in place of a session (Grid's delegated key). */
export interface DelegatedKey {
  id: string;
  platformId: string;
  accountId: string;
  /** Compressed P-256 public key, lower-case hex. */
  publicKey: string;
  nickname: string;
  status: "PENDING" | "ACTIVE" | "REVOKED";
  createdAt: Date;
  updatedAt: Date;
  /** The card it was made for; undefined for a wallet-scoped key made before cards. */
  cardId?: string;
  /** The card funding source it was made for; undefined for a wallet-scoped key made before cards. */
  fundingSourceId?: string;
}

export interface StoredDelegatedKey extends DelegatedKey {
  /** The private key sealed under the wallet encryption key `keyId` (associated data: the key's id). */
  sealedKey: Uint8Array;
  keyId: string;
  /** The Request-Id of the challenge whose signed retry activates it. */
  activationRequestId: string;
}

/** The Request-Id and signature headers of a retry; absent on a first call. */
export interface SignedRetry {
  requestId: string;
  signature: string;
}

export type { Environment };

/** Lifetimes and limits (decisions §5, §6). */
export const LIMITS = {
  sessionMs: 15 * 60_000,
  signedChallengeMs: 5 * 60_000,
  otpMs: 5 * 60_000,
  otpAttempts: 5,
  passkeyChallengeMs: 5 * 60_000,
  challengeReissueMs: 30_000,
  oidcMaxAgeSeconds: 60,
} as const;

/** The reason strings of the spec's sandbox magic table, also used for the production checks. */
export const REASONS = {
  otp: "Invalid OTP code",
  passkey: "Invalid passkey signature",
  oidc: "Invalid OIDC token",
  signature: "Invalid Service-Wallet-Signature",
} as const;

export const SANDBOX_MAGIC = {
  otp: "000000",
  passkeySignature: "sandbox-valid-passkey-signature",
  oidcToken: "sandbox-valid-oidc-token",
  signature: "sandbox-valid-signature",
} as const;
