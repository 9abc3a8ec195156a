import { describe, expect, it } from "vitest";
import { formatAmount } from "../src/currencies.js";

describe("formatAmount", () => {
  it("writes minor units as major units with the currency's decimals and code", () => {
    expect(formatAmount(10000n, "USD")).toBe("100.00 USD");
    expect(formatAmount(100, "USD")).toBe("1.00 USD");
    expect(formatAmount(5n, "EUR")).toBe("0.05 EUR");
    expect(formatAmount(500n, "JPY")).toBe("500 JPY");
    expect(formatAmount(1n, "BTC")).toBe("0.00000001 BTC");
    expect(formatAmount(1_234_567n, "USDC")).toBe("1.234567 USDC");
    expect(formatAmount(-250n, "USD")).toBe("-2.50 USD");
    expect(formatAmount(0n, "USD")).toBe("0.00 USD");
  });

  it("is exact for amounts beyond a double's integers", () => {
    expect(formatAmount(9_007_199_254_740_993n, "USD")).toBe("90071992547409.93 USD");
  });

  it("says minor units for a code it does not know", () => {
    expect(formatAmount(42n, "XYZ")).toBe("42 XYZ minor units");
  });
});
