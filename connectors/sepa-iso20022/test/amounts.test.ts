import { describe, expect, it } from "vitest";
import { Iso20022Error, decimalFromMinorUnits, minorUnitsFromDecimal, sepaId, sepaText } from "../src/index.js";

describe("ISO 20022 amounts are exact minor units", () => {
  it("reads decimals of every width into minor units of the currency", () => {
    expect(minorUnitsFromDecimal("1500.00", "CHF")).toBe(150000n);
    expect(minorUnitsFromDecimal("4.5", "EUR")).toBe(450n);
    expect(minorUnitsFromDecimal("12", "EUR")).toBe(1200n);
    expect(minorUnitsFromDecimal("0.10000", "EUR")).toBe(10n);
    expect(minorUnitsFromDecimal("1500", "JPY")).toBe(1500n);
    expect(minorUnitsFromDecimal("1.234", "KWD")).toBe(1234n); // three-digit minor unit, from ISO 4217 data
    expect(minorUnitsFromDecimal("999999999999999999.99", "EUR")).toBe(99999999999999999999n); // beyond a double's precision
  });

  it("refuses amounts a ledger cannot hold: sub-cent digits, signs, exponents, garbage", () => {
    for (const [text, currency] of [["1.001", "EUR"], ["1.5", "JPY"], ["-1.00", "EUR"], ["1e3", "EUR"], ["", "EUR"], ["1,00", "EUR"], ["0x10", "EUR"], ["1.00", "E1R"]]) {
      expect(() => minorUnitsFromDecimal(text!, currency!)).toThrow(Iso20022Error);
    }
  });

  it("writes minor units back as the file's decimal text", () => {
    expect(decimalFromMinorUnits(150000n, "EUR")).toBe("1500.00");
    expect(decimalFromMinorUnits(5n, "EUR")).toBe("0.05");
    expect(decimalFromMinorUnits(0n, "EUR")).toBe("0.00");
    expect(decimalFromMinorUnits(1500n, "JPY")).toBe("1500");
    expect(() => decimalFromMinorUnits(-1n, "EUR")).toThrow(Iso20022Error);
  });
});

describe("SEPA text and identifiers", () => {
  it("folds free text to the SEPA character set and its length", () => {
    expect(sepaText("Zoë Straße & Søn <AG>", 70)).toBe("Zoe Strasse Son AG");
    expect(sepaText("a".repeat(100), 70)).toHaveLength(70);
    expect(sepaText("日本", 70)).toBe("");
  });

  it("refuses identifiers outside the set instead of rewriting them", () => {
    expect(sepaId("TX-0190a1b2", "id")).toBe("TX-0190a1b2");
    for (const bad of ["", "a b", "/lead", "trail/", "dou//ble", "x".repeat(36), "é"]) expect(() => sepaId(bad, "id")).toThrow(Iso20022Error);
  });
});
