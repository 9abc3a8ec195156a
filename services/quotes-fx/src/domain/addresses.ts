import { keccak_256 } from "@noble/hashes/sha3.js";
import { bech32, bech32m } from "bech32";
import bs58 from "bs58";
import bs58check from "bs58check";

export const CRYPTO_NETWORKS = ["SOLANA", "ETHEREUM", "BASE", "POLYGON", "SPARK", "LIGHTNING", "BITCOIN"] as const;
export type CryptoNetwork = (typeof CRYPTO_NETWORKS)[number];

/** Why an address is not valid on a network, or undefined when it is. `testnets` admits test encodings (sandbox). */
export function addressProblem(network: CryptoNetwork, address: string, testnets: boolean): string | undefined {
  switch (network) {
    case "ETHEREUM":
    case "BASE":
    case "POLYGON":
      return evmProblem(address);
    case "SOLANA":
      return solanaProblem(address);
    case "BITCOIN":
      return bitcoinProblem(address, testnets);
    case "LIGHTNING":
      return lightningProblem(address, testnets);
    case "SPARK":
      return sparkProblem(address, testnets);
  }
}

/** 0x + 40 hex digits; mixed case must carry a valid EIP-55 checksum. */
function evmProblem(address: string): string | undefined {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return "must be 0x followed by 40 hex digits";
  const hex = address.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return undefined;
  const hash = keccak_256(new TextEncoder().encode(hex.toLowerCase()));
  for (let i = 0; i < 40; i++) {
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0xf;
    const c = hex[i]!;
    if (/[a-f]/i.test(c) && (nibble >= 8 ? c !== c.toUpperCase() : c !== c.toLowerCase())) return "has an invalid EIP-55 checksum";
  }
  return undefined;
}

/** Base58 of a 32-byte ed25519 public key. */
function solanaProblem(address: string): string | undefined {
  try {
    if (bs58.decode(address).length === 32) return undefined;
  } catch {
    // not base58
  }
  return "must be the base58 encoding of a 32-byte public key";
}

function bitcoinProblem(address: string, testnets: boolean): string | undefined {
  const lower = address.toLowerCase();
  const hrps = testnets ? ["bc", "tb", "bcrt"] : ["bc"];
  const hrp = hrps.find((h) => lower.startsWith(`${h}1`));
  if (hrp) {
    if (address !== lower && address !== address.toUpperCase()) return "must not mix upper and lower case";
    return segwitProblem(lower);
  }
  try {
    const payload = bs58check.decode(address);
    const versions = testnets ? [0x00, 0x05, 0x6f, 0xc4] : [0x00, 0x05];
    if (payload.length === 21 && versions.includes(payload[0]!)) return undefined;
    return "is not a P2PKH or P2SH address of this network";
  } catch {
    return testnets ? "must be a bech32 (bc1/tb1) or base58check address" : "must be a bech32 (bc1) or base58check address";
  }
}

/** BIP-173/350: version 0 in bech32 with a 20- or 32-byte program, versions 1–16 in bech32m. */
function segwitProblem(address: string): string | undefined {
  const decoded = tryDecode(bech32, address, 90) ?? tryDecode(bech32m, address, 90);
  if (!decoded) return "is not valid bech32";
  const [version, ...words] = decoded.words;
  if (version === undefined || version > 16) return "has an invalid witness version";
  const expected = version === 0 ? bech32 : bech32m;
  if (!tryDecode(expected, address, 90)) return version === 0 ? "version 0 must use bech32" : "versions 1+ must use bech32m";
  const program = bech32.fromWordsUnsafe(words);
  if (!program || program.length < 2 || program.length > 40) return "has an invalid witness program";
  if (version === 0 && program.length !== 20 && program.length !== 32) return "has an invalid version 0 program length";
  return undefined;
}

/** BOLT 11: bech32 with prefix lnbc (mainnet) or, in the sandbox, lntb / lnbcrt. */
function lightningProblem(invoice: string, testnets: boolean): string | undefined {
  const lower = invoice.toLowerCase();
  const prefixes = testnets ? ["lnbcrt", "lntb", "lnbc"] : ["lnbc"];
  if (!prefixes.some((p) => lower.startsWith(p))) return `must be a BOLT 11 invoice starting with ${prefixes.join(" or ")}`;
  const decoded = tryDecode(bech32, lower, 7089);
  if (!decoded) return "is not a valid bech32 invoice";
  // The human-readable part is the network prefix and an optional amount (digits + multiplier).
  if (!/^ln(bcrt|tb|bc)(\d+[munp]?)?$/.test(decoded.prefix)) return "has an invalid amount part";
  return undefined;
}

/**
 * Spark addresses (our definition, README): bech32m with prefix "spark" (mainnet) or, in the
 * sandbox, "sparkrt"/"sparkt"; the payload is the receiver's 33-byte compressed secp256k1
 * identity key, raw or wrapped as Spark encodes it (0x0a 0x21 + key).
 */
function sparkProblem(address: string, testnets: boolean): string | undefined {
  const decoded = tryDecode(bech32m, address.toLowerCase(), 200);
  const allowed = testnets ? ["spark", "sparkrt", "sparkt"] : ["spark"];
  if (!decoded || !allowed.includes(decoded.prefix)) return `must be a bech32m Spark address with prefix ${allowed.join(" or ")}`;
  const bytes = bech32m.fromWordsUnsafe(decoded.words);
  if (!bytes) return "has an invalid payload";
  const key = bytes.length === 35 && bytes[0] === 0x0a && bytes[1] === 0x21 ? bytes.slice(2) : bytes;
  if (key.length !== 33 || (key[0] !== 0x02 && key[0] !== 0x03)) return "must carry a 33-byte compressed public key";
  return undefined;
}

function tryDecode(codec: typeof bech32, text: string, limit: number) {
  try {
    return codec.decode(text, limit);
  } catch {
    return undefined;
  }
}
