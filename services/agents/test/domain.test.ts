import { describe, expect, it } from "vitest";
import { convertAmount } from "../src/domain/conversion.js";
import { displayDeviceCode, newDeviceCode, normalizeDeviceCode } from "../src/domain/credentials.js";
import { checkLimits, executionMode, spendingLimitExceeded } from "../src/domain/evaluation.js";
import { ManualClock } from "@corridor/kit";
import { platformTime } from "../src/domain/platform-time.js";
import { defaultPolicy } from "../src/domain/policy.js";
import { dayKey, monthKey, nextDay, nextMonth } from "../src/domain/windows.js";

// The pure parts of the domain: arithmetic, calendars and rules, without a database.

describe("conversion", () => {
  it("converts between minor units exactly and rounds up, whatever the decimals", () => {
    // 1_000 USD cents at 1.0850 USD per EUR = 921.658… EUR cents.
    expect(convertAmount(1_000n, "USD", "EUR", "1.0850")).toBe(922n);
    // 100 USD cents at 0.0067 USD per JPY (0 decimals) = 149.25… yen.
    expect(convertAmount(100n, "USD", "JPY", "0.0067")).toBe(150n);
    // 1 BTC (8 decimals) at 60000 USD per BTC, expressed as BTC per USD the other way round.
    expect(convertAmount(100_000_000n, "BTC", "USD", "0.0000166666666667")).toBe(6_000_000n);
    expect(convertAmount(5n, "USD", "USD", "7")).toBe(5n);
    expect(convertAmount(9_000_000_000_000_000n, "USD", "EUR", "1.0850")).toBe(8_294_930_875_576_037n);
  });

  it("refuses a rate that is no positive decimal", () => {
    for (const rate of ["", "1e3", "-1", "0", "abc", "1.2.3"]) expect(() => convertAmount(1n, "USD", "EUR", rate)).toThrow();
  });
});

describe("windows", () => {
  it("names the UTC day and month, and when they start again, across year ends and leap days", () => {
    expect(dayKey(new Date("2026-12-31T23:59:59.999Z"))).toBe("2026-12-31");
    expect(nextDay(new Date("2026-12-31T23:59:59.999Z"))).toBe("2027-01-01");
    expect(monthKey(new Date("2026-12-31T23:59:59.999Z"))).toBe("2026-12");
    expect(nextMonth(new Date("2026-12-31T23:59:59.999Z"))).toBe("2027-01");
    expect(nextDay(new Date("2028-02-28T10:00:00Z"))).toBe("2028-02-29");
    expect(nextMonth(new Date("2026-01-31T10:00:00Z"))).toBe("2026-02");
  });
});

describe("device codes", () => {
  it("draws 8 characters of the unambiguous alphabet and reads them back however they are typed", () => {
    for (let i = 0; i < 200; i++) {
      const code = newDeviceCode();
      expect(code).toMatch(/^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{8}$/);
      expect(normalizeDeviceCode(displayDeviceCode(code).toLowerCase())).toBe(code);
    }
    expect(normalizeDeviceCode("ABCD-EFG0")).toBeUndefined(); // 0 is not in the alphabet
    expect(normalizeDeviceCode("ABCD-EFGHJ")).toBeUndefined();
  });
});

describe("evaluation", () => {
  const policy = { ...defaultPolicy(), defaultExecutionMode: "AUTO" as const, spendingLimits: { currency: "USD", perTransactionLimit: 0n, dailyLimit: 100n, dailyTransactionLimit: 0n, monthlyLimit: 0n } };
  const none = { dayCount: 0n, dayAmount: 0n, monthAmount: 0n };

  it("a limit is reached, not passed, at exactly its amount", () => {
    expect(() => checkLimits(policy, { ...none, dayAmount: 60n }, { countedAmount: 40n, thresholdAmount: 0n, accountIds: [] })).not.toThrow();
    expect(() => checkLimits(policy, { ...none, dayAmount: 60n }, { countedAmount: 41n, thresholdAmount: 0n, accountIds: [] })).toThrow(/dailyLimit/);
  });

  it("APPROVAL_REQUIRED wins when two used accounts' rules differ; thresholds beat every rule", () => {
    const p = { ...policy, accountRules: [{ accountId: "a", executionMode: "AUTO" as const, perTransactionLimit: 0n }, { accountId: "b", executionMode: "APPROVAL_REQUIRED" as const, perTransactionLimit: 0n }] };
    expect(executionMode(p, { countedAmount: 1n, thresholdAmount: 1n, accountIds: ["a"] })).toBe("AUTO");
    expect(executionMode(p, { countedAmount: 1n, thresholdAmount: 1n, accountIds: ["a", "b"] })).toBe("APPROVAL_REQUIRED");
    const t = { ...p, approvalThresholds: { currency: "USD", amount: 10n } };
    expect(executionMode(t, { countedAmount: 11n, thresholdAmount: 11n, accountIds: ["a"] })).toBe("APPROVAL_REQUIRED");
  });
});

describe("platform time", () => {
  it("sandbox platforms live on their sandbox clock, production platforms on the service clock; environments are asked once", async () => {
    const clock = new ManualClock("2026-11-23T12:00:00Z");
    const asked: string[] = [];
    const time = platformTime({
      clock,
      environment: async (id) => {
        asked.push(id);
        return id === "prod" ? "PRODUCTION" : "SANDBOX";
      },
      sandboxNow: async () => new Date("2027-02-01T00:00:00Z"),
    });
    expect((await time.now("prod")).toISOString()).toBe("2026-11-23T12:00:00.000Z");
    expect((await time.now("sbx")).toISOString()).toBe("2027-02-01T00:00:00.000Z");
    await time.now("sbx");
    await time.now("prod");
    expect(asked).toEqual(["prod", "sbx"]);
  });
});

describe("SPENDING_LIMIT_EXCEEDED's message", () => {
  it("names amounts in major units with the currency, and counts as counts (issue 27)", () => {
    const money = spendingLimitExceeded({ limit: "dailyLimit", limitAmount: 50_000n, used: 45_000n, requested: 10_000n, currency: "USD" });
    expect(money.message).toBe("This action would exceed the agent's dailyLimit (450.00 USD of 500.00 USD used, 100.00 USD requested)");
    expect(money.details).toMatchObject({ limitAmount: 50_000, used: 45_000, requested: 10_000, currency: "USD" });
    const count = spendingLimitExceeded({ limit: "dailyTransactionLimit", limitAmount: 5n, used: 5n, requested: 1n, currency: "USD" });
    expect(count.message).toBe("This action would exceed the agent's dailyTransactionLimit (5 of 5 actions today, 1 requested)");
  });
});
