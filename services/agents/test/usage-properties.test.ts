import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_PERMISSIONS, expectUsageMatchesLiveActions, startHarness, transferOut, usageLedger, world, type Harness } from "./harness.js";

// Limits under races, against a real database: Postgres (a fresh database on DATABASE_URL, as CI
// runs it) with a pool wide enough for the submissions to really overlap; PGlite otherwise.

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ poolSize: 8 });
});
afterAll(async () => {
  await h?.close();
});

describe("usage under concurrent submissions", () => {
  it("50 concurrent transfer submissions with dailyTransactionLimit 10 accept exactly 10", async () => {
    const w = await world(h, { permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO", spendingLimits: { currency: "USD", dailyTransactionLimit: 10n } });
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => transferOut(h, w, 100n)));
    const accepted = results.filter((r) => r.status === "fulfilled");
    expect(accepted).toHaveLength(10);
    for (const r of results) {
      if (r.status === "rejected") expect(String(r.reason)).toContain("dailyTransactionLimit");
    }
    const { usage, live } = await usageLedger(h, w);
    expect(live).toHaveLength(10);
    expect(usage.find((u) => u.window_kind === "DAY")?.count).toBe(10n);
    expectUsageMatchesLiveActions(usage, live);
  });

  it("no interleaving of submissions and rejections passes a limit, and usage always equals the sum of live reservations", async () => {
    const limit = fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 5_000n }));
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          perTransactionLimit: limit,
          dailyLimit: limit,
          dailyTransactionLimit: fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 8n })),
          monthlyLimit: limit,
          mode: fc.constantFrom("AUTO", "APPROVAL_REQUIRED"),
          amounts: fc.array(fc.bigInt({ min: 1n, max: 2_000n }), { minLength: 1, maxLength: 16 }),
          rejectEvery: fc.integer({ min: 2, max: 4 }),
        }),
        async (p) => {
          const limits = { currency: "USD", perTransactionLimit: p.perTransactionLimit, dailyLimit: p.dailyLimit, dailyTransactionLimit: p.dailyTransactionLimit, monthlyLimit: p.monthlyLimit };
          const w = await world(h, { permissions: ALL_PERMISSIONS, defaultExecutionMode: p.mode, spendingLimits: limits });
          // Half the submissions race alone, the other half race with rejections of pending ones.
          const half = Math.ceil(p.amounts.length / 2);
          const first = await Promise.allSettled(p.amounts.slice(0, half).map((a) => transferOut(h, w, a)));
          const pending = first.flatMap((r) => (r.status === "fulfilled" && r.value.action?.status === "PENDING_APPROVAL" ? [r.value.action.id] : []));
          const second = await Promise.allSettled([
            ...p.amounts.slice(half).map((a) => transferOut(h, w, a)),
            ...pending.filter((_, i) => i % p.rejectEvery === 0).map((actionId) => h.client.rejectAction({ platformId: w.platformId, agentId: w.agentId, actionId })),
          ]);
          for (const r of [...first, ...second]) {
            if (r.status === "rejected") expect(String(r.reason)).toMatch(/exceed the agent's (perTransactionLimit|dailyTransactionLimit|dailyLimit|monthlyLimit)/);
          }
          const { usage, live } = await usageLedger(h, w);
          expectUsageMatchesLiveActions(usage, live);
          const day = usage.find((u) => u.window_kind === "DAY") ?? { count: 0n, amount: 0n };
          const month = usage.find((u) => u.window_kind === "MONTH") ?? { count: 0n, amount: 0n };
          if (p.dailyTransactionLimit > 0n) expect(day.count <= p.dailyTransactionLimit).toBe(true);
          if (p.dailyLimit > 0n) expect(day.amount <= p.dailyLimit).toBe(true);
          if (p.monthlyLimit > 0n) expect(month.amount <= p.monthlyLimit).toBe(true);
          if (p.perTransactionLimit > 0n) for (const a of live) expect(a.counted_amount <= p.perTransactionLimit).toBe(true);
        },
      ),
      { numRuns: 12 },
    );
  });
});
