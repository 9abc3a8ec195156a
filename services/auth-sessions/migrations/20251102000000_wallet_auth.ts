import { sql, type Kysely } from "kysely";

// Embedded-wallet authentication: credentials, OTPs, passkey challenges, sessions, signed-retry
// requests and wallet keys. Every table carries platform_id and every query filters by it.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("wallet_credentials")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull().references("platforms.id"))
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull().check(sql`type in ('EMAIL_OTP', 'OAUTH', 'PASSKEY')`))
    .addColumn("nickname", "text", (c) => c.notNull())
    // Type-specific material: EMAIL_OTP {email}; OAUTH {issuer, subject}; PASSKEY {credentialId,
    // publicKey (base64url COSE, absent for an unverified sandbox attestation), counter, transports}.
    .addColumn("material", "jsonb", (c) => c.notNull())
    .addColumn("last_challenge_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("deleted_at", "timestamptz")
    .execute();
  await db.schema
    .createIndex("wallet_credentials_account_idx")
    .on("wallet_credentials")
    .columns(["platform_id", "account_id", "created_at"])
    .where(sql.ref("deleted_at"), "is", null)
    .execute();
  // v1: at most one live EMAIL_OTP and one live PASSKEY per account, even under concurrent creates.
  await db.schema
    .createIndex("wallet_credentials_one_per_type_idx")
    .on("wallet_credentials")
    .unique()
    .columns(["platform_id", "account_id", "type"])
    .where(sql<boolean>`deleted_at is null and type in ('EMAIL_OTP', 'PASSKEY')`)
    .execute();

  await db.schema
    .createTable("wallet_otps")
    .addColumn("credential_id", "text", (c) => c.primaryKey().references("wallet_credentials.id"))
    .addColumn("platform_id", "text", (c) => c.notNull())
    // SHA-256 of "<credential id>:<code>"; the code itself is never stored.
    .addColumn("code_sha256", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("wallet_passkey_challenges")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("credential_id", "text", (c) => c.notNull().references("wallet_credentials.id"))
    .addColumn("challenge", "text", (c) => c.notNull())
    .addColumn("client_public_key", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("used_at", "timestamptz")
    .execute();

  await db.schema
    .createTable("wallet_sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("credential_id", "text", (c) => c.notNull().references("wallet_credentials.id"))
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("nickname", "text", (c) => c.notNull())
    // Compressed P-256 public key (hex) of the session signing key; the private key is never stored.
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("revoked_at", "timestamptz")
    .execute();
  await db.schema.createIndex("wallet_sessions_key_idx").on("wallet_sessions").columns(["platform_id", "account_id", "public_key"]).execute();

  await db.schema
    .createTable("wallet_signed_requests")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("operation", "text", (c) => c.notNull())
    .addColumn("body_sha256", "text", (c) => c.notNull())
    // Stored and compared byte for byte; never re-serialized.
    .addColumn("payload_to_sign", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("used_at", "timestamptz")
    .execute();

  await db.schema
    .createTable("wallet_keys")
    .addColumn("account_id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    // AES-256-GCM iv ‖ tag ‖ ciphertext of the 32-byte wallet secret key, AAD = account id.
    .addColumn("sealed_key", "bytea", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ["wallet_keys", "wallet_signed_requests", "wallet_sessions", "wallet_passkey_challenges", "wallet_otps", "wallet_credentials"]) {
    await db.schema.dropTable(t).execute();
  }
}
