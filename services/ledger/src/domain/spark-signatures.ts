import { secp256k1 } from "@noble/curves/secp256k1.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { base64, bech32m, hex, utf8 } from "@scure/base";

/**
 * Ownership proofs for Spark wallets (WALLET_SIGNATURE, issue 27). A Spark address is bech32m
 * (prefix spark, sparkt, sparkrt, sparks, sparkl; the older sp, spt, sprt, sps, spl) over a protobuf
 * SparkAddress whose field 1 is the wallet's 33-byte compressed secp256k1 identity public key (the
 * 35 bytes 0x0a, 0x21, key: read here by hand, the domain takes no protobuf library).
 * Whoever holds that key's private half controls the wallet, so a signature by it over the
 * challenge's message proves ownership. Curve arithmetic and encodings are the audited libraries'
 * (@noble/curves, @noble/hashes, @scure/base); nothing here is hand-rolled crypto.
 *
 * Schemes (the verify request's signatureScheme):
 * - bip137 (Grid's default): a Bitcoin signed message, base64 of 65 bytes (header, r, s) over
 *   sha256d("\x18Bitcoin Signed Message:\n" + compact size + message). The header carries the
 *   recovery id; the key recovered must be the identity key. Any of BIP-137's headers (27 to 42) is
 *   taken: the address type it names is a Bitcoin address's, and a Spark address has none.
 * - electrum: the same signed message as Electrum and Sparrow write it, headers 27 to 34 only
 *   (Electrum has no segwit headers).
 * - spark (a Corridor extension; Grid's enum has bip137 and electrum only): what the Spark SDK's
 *   signMessageWithIdentityKey and wallets' spark_signMessage give, an ECDSA signature by the
 *   identity key over sha256(message), hex or base64, DER or 64-byte compact.
 */
export const SPARK_SIGNATURE_SCHEMES = ["bip137", "electrum", "spark"] as const;
export type SparkSignatureScheme = (typeof SPARK_SIGNATURE_SCHEMES)[number];

const SPARK_PREFIXES: ReadonlySet<string> = new Set(["spark", "sparkt", "sparkrt", "sparks", "sparkl", "sp", "spt", "sprt", "sps", "spl"]);

/** The identity public key a Spark address encodes, or undefined when the string is none. */
export function sparkIdentityKey(address: string): Uint8Array | undefined {
  let decoded: { prefix: string; bytes: Uint8Array };
  try {
    decoded = bech32m.decodeToBytes(address as `${string}1${string}`);
  } catch {
    return undefined;
  }
  if (!SPARK_PREFIXES.has(decoded.prefix)) return undefined;
  // SparkAddress {1: identity_public_key}: tag 0x0a (field 1, length-delimited), length 33, the key.
  // A plain address carries that field alone (an invoice's other fields make it no address).
  const b = decoded.bytes;
  if (b.length !== 35 || b[0] !== 0x0a || b[1] !== 33) return undefined;
  const key = b.subarray(2);
  try {
    secp256k1.Point.fromBytes(key).assertValidity();
  } catch {
    return undefined;
  }
  return key;
}

/** Bitcoin's compact size prefix of a length. */
function compactSize(n: number): Uint8Array {
  if (n < 0xfd) return Uint8Array.of(n);
  if (n <= 0xffff) return Uint8Array.of(0xfd, n & 0xff, n >> 8);
  return Uint8Array.of(0xfe, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24);
}

/** The hash a Bitcoin signed message signs: sha256d over the magic prefix and the message, each length-prefixed. */
export function bitcoinMessageHash(message: string): Uint8Array {
  const magic = utf8.decode("Bitcoin Signed Message:\n");
  const body = utf8.decode(message);
  const parts = [compactSize(magic.length), magic, compactSize(body.length), body];
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return sha256(sha256(all));
}

function decodeBase64(s: string): Uint8Array | undefined {
  try {
    return base64.decode(s);
  } catch {
    return undefined;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** A 65-byte Bitcoin message signature (base64) by `identityKey` over `message`, its header in [lowest, highest]. */
function verifyBitcoinMessage(message: string, signature: string, identityKey: Uint8Array, highest: number): boolean {
  const sig = decodeBase64(signature.trim());
  if (!sig || sig.length !== 65) return false;
  const header = sig[0]!;
  if (header < 27 || header > highest) return false;
  const recovered = new Uint8Array(65);
  recovered[0] = (header - 27) & 3;
  recovered.set(sig.subarray(1), 1);
  try {
    const key = secp256k1.recoverPublicKey(recovered, bitcoinMessageHash(message), { prehash: false });
    return sameBytes(secp256k1.Point.fromBytes(key).toBytes(true), identityKey);
  } catch {
    return false;
  }
}

/** The Spark SDK's identity-key signature: ECDSA over sha256(message), hex or base64, DER or compact. */
function verifySparkMessage(message: string, signature: string, identityKey: Uint8Array): boolean {
  const s = signature.trim().replace(/^0x/i, "");
  let bytes: Uint8Array | undefined;
  if (/^([0-9a-fA-F]{2})+$/.test(s)) bytes = hex.decode(s.toLowerCase());
  else bytes = decodeBase64(s);
  if (!bytes) return false;
  const format = bytes.length === 64 ? "compact" : "der";
  try {
    return secp256k1.verify(bytes, utf8.decode(message), identityKey, { prehash: true, format, lowS: false });
  } catch {
    return false;
  }
}

/** Whether `signature` in `scheme` is the identity key's over exactly `message`. */
export function verifySparkSignature(scheme: SparkSignatureScheme, message: string, signature: string, identityKey: Uint8Array): boolean {
  switch (scheme) {
    case "bip137":
      return verifyBitcoinMessage(message, signature, identityKey, 42);
    case "electrum":
      return verifyBitcoinMessage(message, signature, identityKey, 34);
    case "spark":
      return verifySparkMessage(message, signature, identityKey);
  }
}
