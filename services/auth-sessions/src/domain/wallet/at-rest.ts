import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * AES-256-GCM for secrets at rest (wallet keys). Stored form: iv (12) ‖ tag (16) ‖ ciphertext.
 * The associated data binds a ciphertext to its row (the account id), so a row copied onto
 * another account does not decrypt.
 */
export interface AtRestCipher {
  encrypt(plaintext: Uint8Array, associatedData: string): Uint8Array;
  decrypt(stored: Uint8Array, associatedData: string): Uint8Array;
}

export function atRestCipher(key: Uint8Array): AtRestCipher {
  if (key.length !== 32) throw new Error("the wallet encryption key must be 32 bytes");
  return {
    encrypt(plaintext, associatedData) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(associatedData, "utf8"));
      const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), ct]);
    },
    decrypt(stored, associatedData) {
      const buf = Buffer.from(stored);
      const decipher = createDecipheriv("aes-256-gcm", key, buf.subarray(0, 12));
      decipher.setAAD(Buffer.from(associatedData, "utf8"));
      decipher.setAuthTag(buf.subarray(12, 28));
      return Buffer.concat([decipher.update(buf.subarray(28)), decipher.final()]);
    },
  };
}

/**
 * The key from CORRIDOR_WALLET_ENCRYPTION_KEY (32 bytes as 64 hex chars or base64/base64url).
 * Unset: a development key derived from a fixed label, the same in every process so embedded and
 * split setups can read what they wrote; the caller must log that it is insecure.
 */
export function walletEncryptionKey(value: string | undefined): { key: Uint8Array; insecureDefault: boolean } {
  if (!value) return { key: createHash("sha256").update("corridor insecure development wallet key").digest(), insecureDefault: true };
  const bytes = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, "hex") : Buffer.from(value, "base64url");
  if (bytes.length !== 32) throw new Error("CORRIDOR_WALLET_ENCRYPTION_KEY must be 32 bytes (64 hex characters or base64)");
  return { key: bytes, insecureDefault: false };
}
