import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { AppError } from "@corridor/kit";

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
export function walletEncryptionKey(value: string | undefined, setting = "CORRIDOR_WALLET_ENCRYPTION_KEY"): { key: Uint8Array; insecureDefault: boolean } {
  if (!value) return { key: createHash("sha256").update("corridor insecure development wallet key").digest(), insecureDefault: true };
  const text = value.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, "hex") : Buffer.from(text, "base64url");
  if (bytes.length !== 32) throw new Error(`${setting} must be 32 bytes (64 hex characters or base64)`);
  return { key: bytes, insecureDefault: false };
}

/**
 * A key's id, stored beside every row it sealed: the first 8 bytes of SHA-256 of the key, in hex.
 * It names the key (in the table, in logs) without revealing anything usable about it.
 */
export function walletKeyId(key: Uint8Array): string {
  return createHash("sha256").update(key).digest().subarray(0, 8).toString("hex");
}

/**
 * The keys wallet keys are sealed with: new rows always under the current key; reads open a row
 * with the key its key id names (current or previous). Rows from before key ids (key id null) are
 * tried under the current key, then the previous. The re-encryption worker moves every row sealed
 * under the previous key (or with no id) to the current one, after which the previous key can go.
 */
export interface WalletKeyring {
  currentId: string;
  /** The previous key's id, when CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS is set. */
  previousId?: string;
  seal(plaintext: Uint8Array, associatedData: string): { sealed: Uint8Array; keyId: string };
  /**
   * The plaintext, or an AppError (503 WALLET_ENCRYPTION_NOT_CONFIGURED) naming the key id when
   * neither configured key is the one that sealed it. Never a message with key material.
   */
  open(sealed: Uint8Array, associatedData: string, keyId: string | null): Uint8Array;
}

export function walletKeyring(current: Uint8Array, previous?: Uint8Array): WalletKeyring {
  const currentId = walletKeyId(current);
  const previousId = previous ? walletKeyId(previous) : undefined;
  if (previousId === currentId) throw new Error("CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS is the same key as CORRIDOR_WALLET_ENCRYPTION_KEY: give the key being replaced, or unset it");
  const ciphers = new Map<string, AtRestCipher>([[currentId, atRestCipher(current)]]);
  if (previous && previousId) ciphers.set(previousId, atRestCipher(previous));
  const unreadable = (what: string) =>
    new AppError(
      "UNAVAILABLE",
      "WALLET_ENCRYPTION_NOT_CONFIGURED",
      `The wallet key is sealed under ${what}, which neither CORRIDOR_WALLET_ENCRYPTION_KEY (key id ${currentId}) nor CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS (${previousId ? `key id ${previousId}` : "unset"}) is; the operator must configure that key`,
    );
  return {
    currentId,
    previousId,
    seal(plaintext, associatedData) {
      return { sealed: ciphers.get(currentId)!.encrypt(plaintext, associatedData), keyId: currentId };
    },
    open(sealed, associatedData, keyId) {
      if (keyId !== null) {
        const cipher = ciphers.get(keyId);
        if (!cipher) throw unreadable(`key id ${keyId}`);
        return cipher.decrypt(sealed, associatedData);
      }
      for (const cipher of ciphers.values()) {
        try {
          return cipher.decrypt(sealed, associatedData);
        } catch {
          // GCM's tag check failed: not this key; try the next.
        }
      }
      throw unreadable("a key recorded before key ids");
    },
  };
}
