import { createHash } from "node:crypto";
import { secp256k1 } from "@noble/curves/secp256k1.js";
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
  for (let n = 0; ; n++) {
    const x = createHash("sha256").update(`corridor-sandbox-spark:${seed}:${n}`).digest();
    const compressed = new Uint8Array([0x02, ...x]);
    try {
      secp256k1.Point.fromBytes(compressed).assertValidity();
    } catch {
      continue; // x is not on the curve (about half the time): try the next
    }
    return bech32m.encode("sparkrt", bech32m.toWords(compressed), 200);
  }
}
