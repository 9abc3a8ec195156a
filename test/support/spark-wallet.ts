import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { base64, bech32m, hex, utf8 } from "@scure/base";

/**
 * A Spark wallet for tests: a fresh secp256k1 identity key; its Spark address, bech32m over the
 * protobuf SparkAddress {1: identity public key} as the Spark SDK encodes it (prefix spark, mainnet:
 * Corridor's accountInfo takes sp, sprt and spark); and the three ways the ownership verify route
 * takes a signature, made with the library from the formats' definitions (not Corridor's verifier).
 */
export function sparkTestWallet(prefix = "spark") {
  const secretKey = secp256k1.utils.randomSecretKey();
  const publicKey = secp256k1.getPublicKey(secretKey, true);
  const payload = new BinaryWriter().uint32((1 << 3) | 2).bytes(publicKey).finish();
  const address = bech32m.encode(prefix, bech32m.toWords(payload), 1023);

  /** A Bitcoin signed message: base64(header, r, s) over sha256d(varstr(magic) + varstr(message)). */
  const bitcoinSigned = (message: string, headerBase: number) => {
    const magic = utf8.decode("Bitcoin Signed Message:\n");
    const body = utf8.decode(message);
    if (body.length > 0xffff) throw new Error("test messages are shorter than 64 KiB");
    // Bitcoin's compact size: one byte below 253, else 0xfd and two bytes little-endian.
    const size = body.length < 0xfd ? [body.length] : [0xfd, body.length & 0xff, body.length >> 8];
    const hash = sha256(sha256(new Uint8Array([magic.length, ...magic, ...size, ...body])));
    const recovered = secp256k1.sign(hash, secretKey, { prehash: false, format: "recovered" });
    const out = new Uint8Array(65);
    out[0] = headerBase + recovered[0]!;
    out.set(recovered.subarray(1), 1);
    return base64.encode(out);
  };
  return {
    address,
    publicKey,
    /** BIP-137, the header of a compressed P2PKH key (31 to 34) or, with segwit, of P2WPKH (39 to 42). */
    bip137: (message: string, segwit = false) => bitcoinSigned(message, segwit ? 39 : 31),
    /** Electrum's signed message (always the compressed P2PKH header). */
    electrum: (message: string) => bitcoinSigned(message, 31),
    /** The Spark SDK's signMessageWithIdentityKey: ECDSA over sha256(message), hex, DER (default) or compact. */
    spark: (message: string, format: "der" | "compact" = "der") => hex.encode(secp256k1.sign(utf8.decode(message), secretKey, { prehash: true, format })),
  };
}
