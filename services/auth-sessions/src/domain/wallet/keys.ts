import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from "@hpke/core";
import { p256 } from "@noble/curves/nist.js";
import bs58check from "bs58check";

/**
 * The embedded-wallet key handling of decisions §6: P-256 session keys, HPKE sealing of a secret to
 * the client's key (the Turnkey-compatible wire form) and the uncompressed/compressed point forms.
 * Every primitive comes from a library: @noble/curves (P-256 arithmetic), @hpke/core (RFC 9180),
 * bs58check (base58check).
 */

/** HPKE `info` of decisions §6. */
export const HPKE_INFO = new TextEncoder().encode("turnkey_hpke");

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });

export const CLIENT_PUBLIC_KEY_PATTERN = /^04[0-9a-fA-F]{128}$/;

/** An uncompressed P-256 point in hex (04 ‖ x ‖ y) that lies on the curve; undefined otherwise. */
export function parseUncompressedPublicKey(hex: string): Uint8Array | undefined {
  if (!CLIENT_PUBLIC_KEY_PATTERN.test(hex)) return undefined;
  try {
    const point = p256.Point.fromHex(hex.toLowerCase());
    point.assertValidity();
    return point.toBytes(false);
  } catch {
    return undefined;
  }
}

/** A compressed P-256 point (33 bytes hex) in canonical lower case; undefined when not a valid point. */
export function normalizeCompressedPublicKey(hex: string): string | undefined {
  if (!/^0[23][0-9a-fA-F]{64}$/.test(hex)) return undefined;
  try {
    return p256.Point.fromHex(hex.toLowerCase()).toHex(true);
  } catch {
    return undefined;
  }
}

/** A fresh session signing key: the 32-byte secret and its compressed public key (hex). */
export function newSessionKeyPair(): { secretKey: Uint8Array; publicKeyCompressedHex: string } {
  const secretKey = p256.utils.randomSecretKey();
  return { secretKey, publicKeyCompressedHex: Buffer.from(p256.getPublicKey(secretKey, true)).toString("hex") };
}

/**
 * Seals `plaintext` to an uncompressed P-256 public key: HPKE base mode, DHKEM(P-256,
 * HKDF-SHA256), HKDF-SHA256, AES-256-GCM, info "turnkey_hpke", AAD = enc ‖ recipient key (both
 * uncompressed). Wire form: base58check(compressed enc ‖ ciphertext).
 */
export async function sealToPublicKey(plaintext: Uint8Array, recipientUncompressed: Uint8Array): Promise<string> {
  const recipientPublicKey = await suite.kem.deserializePublicKey(toArrayBuffer(recipientUncompressed));
  const sender = await suite.createSenderContext({ recipientPublicKey, info: toArrayBuffer(HPKE_INFO) });
  const enc = new Uint8Array(sender.enc);
  const aad = concat(enc, recipientUncompressed);
  const ciphertext = new Uint8Array(await sender.seal(toArrayBuffer(plaintext), toArrayBuffer(aad)));
  const compressedEnc = p256.Point.fromBytes(enc).toBytes(true);
  return bs58check.encode(concat(compressedEnc, ciphertext));
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function toArrayBuffer(u: Uint8Array): ArrayBuffer {
  return u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;
}
