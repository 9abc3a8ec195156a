import { createHash } from "node:crypto";
import { createRequire } from "node:module";

/**
 * bolt11 (CommonJS, with bitcoinjs-lib and its own dependencies: ~90 modules), required on the
 * first BTC funding quote instead of at every start (issue 28, item 4: a warm `npm start` in 3 s).
 * Synchronous, so fundingInstructions stays synchronous. scripts/build.mjs copies the package
 * (RUNTIME_PACKAGES) although no import names it.
 */
let bolt11: typeof import("bolt11") | undefined;
const loadBolt11 = (): typeof import("bolt11") => (bolt11 ??= createRequire(import.meta.url)("bolt11") as typeof import("bolt11"));

/** bitcoinjs network parameters of regtest, whose BOLT 11 prefix is "lnbcrt" (never payable on mainnet). */
const REGTEST = { bech32: "bcrt", pubKeyHash: 0x6f, scriptHash: 0xc4, validWitnessVersions: [0, 1] };

/**
 * The sandbox node's signing key: sha256 of a public label, so anyone can recompute it and it
 * secures nothing. It signs regtest invoices only; no node with this key holds channels or funds.
 */
const SANDBOX_NODE_KEY = createHash("sha256").update("corridor-sandbox-lightning-node").digest("hex");

/**
 * A well-formed BOLT 11 invoice (regtest, signed by the sandbox node key) for a real-time-funding
 * quote paid in BTC: the amount in satoshis, payment hash sha256("corridor-sandbox-invoice:<seed>"),
 * the quote's reference as description, expiring with the quote. Sandbox only: the payment is
 * simulated with POST /sandbox/send; paying it on a real network is impossible (regtest prefix).
 */
export function sandboxLightningInvoice(i: { seed: string; amountSats: bigint; memo: string; now: Date; expiresAt: Date }): string {
  const paymentHash = createHash("sha256").update(`corridor-sandbox-invoice:${i.seed}`).digest("hex");
  const timestamp = Math.floor(i.now.getTime() / 1000);
  const expireSeconds = Math.max(1, Math.ceil((i.expiresAt.getTime() - i.now.getTime()) / 1000));
  const { encode, sign } = loadBolt11();
  const unsigned = encode({
    network: REGTEST,
    satoshis: Number(i.amountSats),
    timestamp,
    tags: [
      { tagName: "payment_hash", data: paymentHash },
      { tagName: "description", data: i.memo },
      { tagName: "expire_time", data: expireSeconds },
    ],
  });
  const signed = sign(unsigned, SANDBOX_NODE_KEY);
  if (!signed.paymentRequest) throw new Error("bolt11 answered without a payment request");
  return signed.paymentRequest;
}
