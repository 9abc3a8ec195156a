import { createHash } from "node:crypto";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { bech32m } from "bech32";

/**
 * Deterministic, well-formed Spark addresses for the sandbox's funding instructions (issue 10: no
 * placeholders). A Spark address is bech32m with the prefix "sparkrt" (regtest, what the sandbox
 * uses) over the receiver's 33-byte compressed secp256k1 identity key. The key here is a curve
 * point whose x coordinate is sha256("corridor-sandbox-spark:<seed>:<n>") for the first n that
 * lands on the curve: nobody knows its private key, so the address is valid in form but can never
 * be spent from (money sent to it is lost). Sandbox only: the deposits it stands for are simulated.
 */
export function sandboxSparkAddress(seed: string): string {
  return bech32m.encode(SPARK_SANDBOX_HRP, bech32m.toWords(sandboxSparkIdentityKey(seed)), 200);
}

/** The network prefix of every sandbox Spark string (regtest). */
const SPARK_SANDBOX_HRP = "sparkrt";

/** The 33-byte compressed identity key behind sandboxSparkAddress(seed) (see there: nobody holds its private key). */
export function sandboxSparkIdentityKey(seed: string): Uint8Array {
  for (let n = 0; ; n++) {
    const x = createHash("sha256").update(`corridor-sandbox-spark:${seed}:${n}`).digest();
    const compressed = new Uint8Array([0x02, ...x]);
    try {
      secp256k1.Point.fromBytes(compressed).assertValidity();
    } catch {
      continue; // x is not on the curve (about half the time): try the next
    }
    return compressed;
  }
}

/**
 * A deterministic Spark invoice for a sandbox internal account's standing funding instruction
 * (spec "Payment instruction item", SPARK_WALLET `invoice`; Grid puts a Spark invoice there, the
 * sparkrt1… string of its example). Spark's own encoding: bech32m, prefix "sparkrt", over the
 * protobuf SparkAddress { 1 identity_public_key, 2 spark_invoice_fields } where SparkInvoiceFields
 * is { 1 version = 1, 2 id (16 bytes, a UUIDv8 from sha256 of the seed), 3 tokens_payment {1
 * token_identifier} or 4 sats_payment {} (no amount: the payer chooses it), 5 memo }. No expiry (a
 * standing instruction) and no signature field: the identity key is sandboxSparkIdentityKey(seed),
 * the same key as the account's address, and nobody holds its private key, so the invoice is
 * well-formed but never payable (sandbox deposits are simulated with the fund endpoint). BTC asks
 * for sats; any other asset (the sandbox's USDC) for a token whose identifier is
 * sha256("corridor-sandbox-token:<asset>"), a sandbox stand-in: the sandbox issues no real token.
 */
export function sandboxSparkInvoice(seed: string, opts: { assetType: string; memo: string }): string {
  const id = createHash("sha256").update(`corridor-sandbox-spark-invoice:${seed}`).digest().subarray(0, 16);
  id[6] = (id[6]! & 0x0f) | 0x80; // UUID version 8 (custom, RFC 9562)
  id[8] = (id[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const fields = new BinaryWriter().uint32((1 << 3) | 0).uint32(1).uint32((2 << 3) | 2).bytes(id);
  if (opts.assetType === "BTC") fields.uint32((4 << 3) | 2).bytes(new Uint8Array(0));
  else {
    const token = createHash("sha256").update(`corridor-sandbox-token:${opts.assetType}`).digest();
    fields.uint32((3 << 3) | 2).bytes(new BinaryWriter().uint32((1 << 3) | 2).bytes(token).finish());
  }
  if (opts.memo) fields.uint32((5 << 3) | 2).string(opts.memo);
  const address = new BinaryWriter()
    .uint32((1 << 3) | 2)
    .bytes(sandboxSparkIdentityKey(seed))
    .uint32((2 << 3) | 2)
    .bytes(fields.finish())
    .finish();
  return bech32m.encode(SPARK_SANDBOX_HRP, bech32m.toWords(address), 1023);
}
