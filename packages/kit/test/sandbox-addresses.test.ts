import { secp256k1 } from "@noble/curves/secp256k1.js";
import { bech32m } from "bech32";
import { describe, expect, it } from "vitest";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { sandboxSparkAddress, sandboxSparkIdentityKey, sandboxSparkInvoice } from "../src/sandbox-addresses.js";

describe("sandbox Spark addresses", () => {
  it("are deterministic, distinct per seed, bech32m sparkrt over a valid compressed secp256k1 point", () => {
    const seeds = ["CRD-ABCDEFGHJK", "CRD-ABCDEFGHJM", "Quote:0190f0f0-0000-7000-8000-000000000000"];
    const addresses = seeds.map(sandboxSparkAddress);
    expect(seeds.map(sandboxSparkAddress)).toEqual(addresses);
    expect(new Set(addresses).size).toBe(seeds.length);
    for (const a of addresses) {
      expect(a).not.toMatch(/x{4}|…/);
      const { prefix, words } = bech32m.decode(a, 200);
      expect(prefix).toBe("sparkrt");
      const key = Uint8Array.from(bech32m.fromWords(words));
      expect(key).toHaveLength(33);
      expect(() => secp256k1.Point.fromBytes(key).assertValidity()).not.toThrow();
    }
  });
});

/** The fields of one protobuf message, by number (length-delimited as bytes, varints as numbers). */
function fieldsOf(bytes: Uint8Array): Map<number, Uint8Array | number> {
  const r = new BinaryReader(bytes);
  const out = new Map<number, Uint8Array | number>();
  while (r.pos < r.len) {
    const [no, wireType] = r.tag();
    out.set(no, wireType === 2 ? r.bytes() : r.uint32());
  }
  return out;
}

describe("sandbox Spark invoices (SPARK_WALLET funding instruction `invoice`)", () => {
  const decode = (invoice: string) => {
    const { prefix, words } = bech32m.decode(invoice, 1023);
    return { prefix, address: fieldsOf(Uint8Array.from(bech32m.fromWords(words))) };
  };

  it("encode Spark's SparkAddress message to the account's own identity key, amountless, the reference as memo, unsigned", () => {
    const seed = "CRD-ABCDEFGHJK";
    const invoice = sandboxSparkInvoice(seed, { assetType: "BTC", memo: seed });
    expect(invoice).toMatch(/^sparkrt1pgss/); // field 1, 33 bytes: as Grid's example invoice begins
    const { prefix, address } = decode(invoice);
    expect(prefix).toBe("sparkrt");
    const key = address.get(1) as Uint8Array;
    expect(key).toEqual(sandboxSparkIdentityKey(seed));
    // The address of the same account is the same key.
    expect(Uint8Array.from(bech32m.fromWords(bech32m.decode(sandboxSparkAddress(seed), 200).words))).toEqual(key);
    expect(address.has(3)).toBe(false); // no signature: nobody holds the key
    const fields = fieldsOf(address.get(2) as Uint8Array);
    expect(fields.get(1)).toBe(1); // version
    const id = fields.get(2) as Uint8Array;
    expect(id).toHaveLength(16);
    expect(id[6]! >> 4).toBe(8); // UUIDv8
    expect(fields.get(4)).toEqual(new Uint8Array(0)); // sats payment, no amount
    expect(fields.has(3)).toBe(false);
    expect(new TextDecoder().decode(fields.get(5) as Uint8Array)).toBe(seed);
    expect(fields.has(7)).toBe(false); // no expiry: a standing instruction
  });

  it("are deterministic per seed, distinct across seeds, and ask for a token (not sats) for other assets", () => {
    const a = sandboxSparkInvoice("CRD-A", { assetType: "BTC", memo: "CRD-A" });
    expect(sandboxSparkInvoice("CRD-A", { assetType: "BTC", memo: "CRD-A" })).toBe(a);
    expect(sandboxSparkInvoice("CRD-B", { assetType: "BTC", memo: "CRD-B" })).not.toBe(a);
    const usdc = fieldsOf(decode(sandboxSparkInvoice("CRD-A", { assetType: "USDC", memo: "CRD-A" })).address.get(2) as Uint8Array);
    expect(usdc.has(4)).toBe(false);
    expect(fieldsOf(usdc.get(3) as Uint8Array).get(1)).toHaveLength(32); // token identifier
  });
});
