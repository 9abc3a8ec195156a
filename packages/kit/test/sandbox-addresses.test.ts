import { secp256k1 } from "@noble/curves/secp256k1.js";
import { bech32m } from "bech32";
import { describe, expect, it } from "vitest";
import { sandboxSparkAddress } from "../src/sandbox-addresses.js";

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
