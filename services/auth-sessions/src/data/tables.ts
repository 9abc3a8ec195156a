import type { ColumnType, JSONColumnType, Selectable } from "kysely";

/** Kysely types of the auth_sessions schema (see migrations/). */

type Timestamp = ColumnType<Date, Date, Date>;

export interface PlatformsTable {
  id: string;
  name: string;
  environment: "SANDBOX" | "PRODUCTION";
  is_regulated: boolean;
  created_at: Timestamp;
}

export interface TokensTable {
  id: string;
  platform_id: string;
  name: string;
  /** JSON array of permission names. */
  permissions: JSONColumnType<string[]>;
  client_id: string;
  /** Hex SHA-256 of the secret; the secret itself is never stored. */
  secret_sha256: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/**
 * One supported currency as stored. Amounts are decimal strings: JSON numbers would pass through
 * floats, and money never does.
 */
export interface StoredSupportedCurrency {
  currencyCode: string;
  minAmount: string;
  maxAmount: string;
  requiredCounterpartyFields: { name: string; mandatory: boolean }[];
  enabledTransactionTypes: string[];
  providerRequiredCustomerFields: string[];
  providerRequiredCounterpartyCustomerFields: string[];
}

export interface PlatformConfigsTable {
  id: string;
  platform_id: string;
  uma_domain: string;
  proxy_uma_subdomain: string;
  webhook_endpoint: string;
  supported_currencies: JSONColumnType<StoredSupportedCurrency[]>;
  /** WebAuthn relying-party id; "" = the deployment's default relying party. */
  passkey_rp_id: string;
  /** JSON array of allowed WebAuthn origins; empty with an empty passkey_rp_id. */
  passkey_origins: JSONColumnType<string[]>;
  /** CORRIDOR (default) or GRID: how the platform's webhook event types are named. */
  webhook_event_naming: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

type NullableTimestamp = ColumnType<Date | null, Date | null | undefined, Date | null>;

export interface WalletCredentialsTable {
  id: string;
  platform_id: string;
  account_id: string;
  type: "EMAIL_OTP" | "OAUTH" | "PASSKEY";
  nickname: string;
  material: JSONColumnType<Record<string, unknown>>;
  last_challenge_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
}

export interface WalletOtpsTable {
  credential_id: string;
  platform_id: string;
  code_sha256: string;
  attempts: number;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface WalletPasskeyChallengesTable {
  id: string;
  platform_id: string;
  credential_id: string;
  challenge: string;
  client_public_key: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

export interface WalletSessionsTable {
  id: string;
  platform_id: string;
  account_id: string;
  credential_id: string;
  type: "EMAIL_OTP" | "OAUTH" | "PASSKEY";
  nickname: string;
  public_key: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
}

export interface WalletSignedRequestsTable {
  id: string;
  platform_id: string;
  account_id: string;
  operation: string;
  body_sha256: string;
  payload_to_sign: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

export interface WalletKeysTable {
  account_id: string;
  platform_id: string;
  sealed_key: Uint8Array;
  /** walletKeyId of the key that sealed it; null: sealed before key ids (migration 20261228). */
  key_id: string | null;
  created_at: Timestamp;
}

/** The deployment's identity: one row, written by its migration. */
export interface DeploymentTable {
  id: string;
  created_at: Timestamp;
}

/** Production platforms still to get their default UMA domain (issue 29, item 6); the worker empties it. */
export interface UmaDomainBackfillTable {
  platform_id: string;
  queued_at: Timestamp;
}

export interface AuthSessionsDatabase {
  deployment: DeploymentTable;
  uma_domain_backfill: UmaDomainBackfillTable;
  platforms: PlatformsTable;
  tokens: TokensTable;
  platform_configs: PlatformConfigsTable;
  wallet_credentials: WalletCredentialsTable;
  wallet_otps: WalletOtpsTable;
  wallet_passkey_challenges: WalletPasskeyChallengesTable;
  wallet_sessions: WalletSessionsTable;
  wallet_signed_requests: WalletSignedRequestsTable;
  wallet_keys: WalletKeysTable;
  wallet_delegated_keys: WalletDelegatedKeysTable;
}

/** Delegated keys (migration 20261228100000): the private key only sealed, under key_id. */
export interface WalletDelegatedKeysTable {
  id: string;
  platform_id: string;
  account_id: string;
  public_key: string;
  sealed_key: Uint8Array;
  key_id: string;
  nickname: string;
  status: "PENDING" | "ACTIVE" | "REVOKED";
  activation_request_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The card and funding source the key was made for (migration 20270102000000); null for wallet-scoped keys made before cards. */
  card_id: ColumnType<string | null, string | null | undefined, string | null>;
  funding_source_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export type PlatformRow = Selectable<PlatformsTable>;
export type TokenRow = Selectable<TokensTable>;
export type PlatformConfigRow = Selectable<PlatformConfigsTable>;
