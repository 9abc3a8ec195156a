import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { decimalsOf, formatMinor, formatMoney, parseMajor, percentOf, rememberCurrency } from "../app/format.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));

describe("the console package", () => {
  it("has public/ exactly as app/ builds to (run node packages/console/build.mjs after changing app/)", () => {
    const r = spawnSync(process.execPath, ["packages/console/build.mjs", "--check"], { cwd: root, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("type-checks (app/ has its own tsconfig: DOM and Preact's JSX)", () => {
    const r = spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "packages/console/tsconfig.json"], { cwd: root, encoding: "utf8" });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 60_000);
});

describe("amounts", () => {
  it("shows minor units in major units with the currency's decimals, exactly", () => {
    expect(formatMinor(123456, 2)).toBe("1,234.56");
    expect(formatMinor(5, 2)).toBe("0.05");
    expect(formatMinor(-250, 2)).toBe("-2.50");
    expect(formatMinor(1500, 0)).toBe("1,500");
    expect(formatMinor(1n, 8)).toBe("0.00000001");
    expect(formatMinor(9_007_199_254_740_993n, 2)).toBe("90,071,992,547,409.93");
    expect(formatMoney(2500, { code: "USD", decimals: 2 })).toBe("25.00 USD");
    expect(formatMoney(undefined, "USD")).toBe("—");
  });

  it("knows a currency's decimals from the API's Currency objects first, then ISO 4217", () => {
    expect(decimalsOf("JPY")).toBe(0);
    expect(decimalsOf("EUR")).toBe(2);
    rememberCurrency({ code: "BTC", decimals: 8 });
    expect(decimalsOf("BTC")).toBe(8);
    expect(formatMoney(150_000_000, "BTC")).toBe("1.50000000 BTC");
  });

  it("reads typed major units back into minor units, refusing what is not one", () => {
    expect(parseMajor("1,234.56", 2)).toEqual({ ok: true, minor: 123456n });
    expect(parseMajor("10", 2)).toEqual({ ok: true, minor: 1000n });
    expect(parseMajor(".5", 2)).toEqual({ ok: true, minor: 50n });
    expect(parseMajor("0.1", 8)).toEqual({ ok: true, minor: 10_000_000n });
    expect(parseMajor("12", 0)).toEqual({ ok: true, minor: 12n });
    for (const bad of ["", "abc", "1.234", "-5", "1e3", "1.2.3", "."]) expect(parseMajor(bad, 2).ok).toBe(false);
    expect(parseMajor("1.5", 0)).toMatchObject({ ok: false, reason: "This currency has no decimals." });
  });

  it("turns usage into a clamped percentage of a limit", () => {
    expect(percentOf(250, 1000)).toBe(25);
    expect(percentOf(2000, 1000)).toBe(100);
    expect(percentOf(5, undefined)).toBeUndefined();
    expect(percentOf(5, 0)).toBeUndefined();
  });
});
