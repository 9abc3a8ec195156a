import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

/**
 * Registering an external account under an Idempotency-Key, against the real database: the
 * account and the stored answer commit together (decisions §3), so however many requests with one
 * key race — with the same body or another — exactly one account exists per key, every success is
 * that account (the first fresh, the others replayed), the rest are IDEMPOTENCY_KEY_IN_USE (the
 * first still running) or IDEMPOTENCY_KEY_REUSED (another body), and a refused request (a deleted
 * customer, a refused beneficiary) stores nothing and frees its key.
 */
describe("external accounts under an Idempotency-Key", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  const create = (platformId: string, customerId: string, variant: number, idempotencyKey: string) =>
    h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "USD", accountInfo: usdInfo(`7770${variant}000`), idempotencyKey });
  const count = async (platformId: string, customerId: string) =>
    Number((await h.ledger.listExternalAccounts({ platformId, owner: "CUSTOMER", customerId })).pageInfo?.totalCount ?? 0n);

  it("creates exactly one account per key however requests with it race, and answers each the first account or a refusal", async () => {
    const platformId = await h.newPlatform();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        // Per request: which body it sends (0 is the first request's), and how many keys the batch spreads over.
        fc.array(fc.nat(2), { minLength: 2, maxLength: 10 }),
        fc.integer({ min: 1, max: 3 }),
        async (variants, keys) => {
          const customerId = await h.newCustomer(platformId);
          const key = (i: number) => `prop-${run}-${i % keys}`;
          run++;
          const settled = await Promise.allSettled(variants.map((v, i) => create(platformId, customerId, v, key(i))));
          const accounts = await count(platformId, customerId);
          const byKey = new Map<string, Set<string>>();
          for (const [i, s] of settled.entries()) {
            if (s.status === "fulfilled") {
              const ids = byKey.get(key(i)) ?? new Set<string>();
              ids.add(s.value.account!.id);
              byKey.set(key(i), ids);
            } else {
              const refusal = await publicError(Promise.reject(s.reason));
              expect(["IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED"]).toContain(refusal.code);
            }
          }
          // One account per key that had a success, and every success under a key is that account.
          for (const ids of byKey.values()) expect(ids.size).toBe(1);
          expect(accounts).toBe(byKey.size);
          // Afterwards every key answers its account again (replayed), for the body that made it.
          for (const [k, ids] of byKey) {
            const first = settled.findIndex((s, i) => key(i) === k && s.status === "fulfilled" && !s.value.replayed);
            expect(first).toBeGreaterThanOrEqual(0);
            const again = await create(platformId, customerId, variants[first]!, k);
            expect(again.replayed).toBe(true);
            expect(again.account?.id).toBe([...ids][0]);
          }
          expect(await count(platformId, customerId)).toBe(accounts);
        },
      ),
      { numRuns: Number(process.env.LEDGER_PROPERTY_RUNS ?? 15) },
    );
  });

  it("stores nothing for a refused request and frees its key for the corrected one", async () => {
    const platformId = await h.newPlatform();
    const customerId = await h.newCustomer(platformId);
    const refused = await publicError(
      h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "USD", accountInfo: usdInfo("000000105"), idempotencyKey: "fix-me" }),
    );
    expect(refused.code).toBe("INVALID_BANK_ACCOUNT");
    expect(await count(platformId, customerId)).toBe(0);
    const corrected = await create(platformId, customerId, 1, "fix-me");
    expect(corrected.replayed).toBe(false);
    expect(await count(platformId, customerId)).toBe(1);
  });
});
