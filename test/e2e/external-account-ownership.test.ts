import { createClient } from "@connectrpc/connect";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { individual } from "./customers-fixtures.js";
import { GRID, gridViolations } from "./grid-schema.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { usdAccountInfo } from "./ledger-helpers.js";

/**
 * Issue 27: external-account ownership verification by micro-deposits, through the public API.
 * The two credits travel as rail instructions to the sandbox simulator (over Kafka in split mode),
 * which completes them; the ledger books them from MICRO_DEPOSIT_EXPENSE (sandbox amounts: 32, 45).
 */
/** Every scalar inside a JSON value. */
function leaves(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.flatMap(leaves);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(leaves);
  return [value];
}

describe.skipIf(skipReason())(`external-account ownership verification (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform({ name: "Ownership e2e" });
  }, 120_000);
  afterAll(async () => system?.stop());

  const admin = () => createClient(LedgerAdminService, system.transportFor("ledger"));
  /** The platform's MICRO_DEPOSIT_EXPENSE in USD, and whether its USD books balance (a platform the ledger has not heard of yet has none). */
  const expense = async (of: Caller = p) => {
    const tb = await admin()
      .getTrialBalance({ platformId: of.platformId })
      .catch((err: { rawMessage?: string }) => {
        if (String(err.rawMessage ?? err).includes("not found")) return { currencies: [] };
        throw err;
      });
    const usd = tb.currencies.find((c) => c.currency === "USD");
    return {
      expense: Number(usd?.groups.find((g) => g.accountType === "MICRO_DEPOSIT_EXPENSE")?.balanceSum ?? 0n),
      balanced: usd ? usd.balanceSum === 0n && usd.postingSum === 0n && usd.mismatchedAccountCount === 0n : true,
    };
  };

  it("verifies a customer's bank account: 201 challenge, the account PENDING_OWNERSHIP_VERIFICATION, the credits booked when the rail completes them, 200 ACTIVE with the sandbox amounts", async () => {
    const before = (await expense()).expense;
    const customer = (await p.call("POST", "/customers", individual())).body;
    const ext = (await p.call("POST", "/customers/external-accounts", { customerId: customer.id, currency: "USD", accountInfo: usdAccountInfo("000") })).body;

    const started = await p.call("POST", `/customers/external-accounts/${ext.id}/challenge`, { method: "MICRO_DEPOSITS" });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body).toMatchObject({ method: "MICRO_DEPOSITS", status: "PENDING", externalAccountId: ext.id, currency: "USD", depositCount: 2, attemptsRemaining: 3 });
    // The amounts are the secret: no value of the answer is one (a regex over the JSON also matched
    // the minute or second of its timestamps).
    expect(leaves(started.body).filter((v) => v === 32 || v === 45 || v === "32" || v === "45")).toEqual([]);
    expect((await p.call("GET", `/customers/external-accounts/${ext.id}`)).body.status).toBe("PENDING_OWNERSHIP_VERIFICATION");

    // The simulator completes both credits; the ledger books them (balanced) from the expense account.
    const booked = await eventually(async () => {
      const e = await expense();
      return e.expense === before - 77 ? e : undefined;
    }, 30_000);
    expect(booked.balanced).toBe(true);

    const wrong = await p.call("POST", `/customers/external-accounts/${ext.id}/verify`, { amounts: [32, 44] });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ code: "MICRO_DEPOSIT_AMOUNTS_MISMATCH", details: { attemptsRemaining: 2 } });

    const ok = await p.call("POST", `/customers/external-accounts/${ext.id}/verify`, { amounts: [45, 32] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ id: ext.id, status: "ACTIVE", customerId: customer.id });
    // Grid's schema accepts the verify answer; the challenge's cannot be (docs/grid-parity.md).
    expect(gridViolations(GRID.ExternalAccount, ok.body)).toEqual([]);
    expect((await p.call("GET", `/customers/external-accounts/${ext.id}`)).body.status).toBe("ACTIVE");

    const again = await p.call("POST", `/customers/external-accounts/${ext.id}/challenge`, {});
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("EXTERNAL_ACCOUNT_ALREADY_VERIFIED");
  });

  it("fails the platform's challenge after three wrong confirmations (400s), the account UNVERIFIED, and a new challenge (no body) verifies it", async () => {
    const ext = (await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000") })).body;
    expect((await p.call("POST", `/platform/external-accounts/${ext.id}/challenge`)).status).toBe(201);
    for (const remaining of [2, 1]) {
      const r = await p.call("POST", `/platform/external-accounts/${ext.id}/verify`, { amounts: [1, 2] });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: "MICRO_DEPOSIT_AMOUNTS_MISMATCH", details: { attemptsRemaining: remaining } });
    }
    const last = await p.call("POST", `/platform/external-accounts/${ext.id}/verify`, { amounts: [1, 2] });
    expect(last.status).toBe(400);
    expect(last.body.code).toBe("MICRO_DEPOSIT_ATTEMPTS_EXCEEDED");
    expect((await p.call("GET", `/platform/external-accounts/${ext.id}`)).body.status).toBe("UNVERIFIED");
    const over = await p.call("POST", `/platform/external-accounts/${ext.id}/verify`, { amounts: [32, 45] });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({ code: "OWNERSHIP_CHALLENGE_NOT_FOUND", details: { challengeStatus: "FAILED" } });

    const restarted = await p.call("POST", `/platform/external-accounts/${ext.id}/challenge`);
    expect(restarted.status, JSON.stringify(restarted.body)).toBe(201);
    expect(restarted.body.attemptsRemaining).toBe(3);
    expect((await p.call("POST", `/platform/external-accounts/${ext.id}/verify`, { amounts: [32, 45] })).body.status).toBe("ACTIVE");
  });

  it("marks the account UNVERIFIED when the rail fails a micro-deposit (sandbox suffix 002), and books nothing for it", async () => {
    // A platform of its own: the other tests' credits complete in the background.
    const q = await system.createPlatform({ name: "Ownership e2e, failing rail" });
    const ext = (await q.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("002") })).body;
    expect((await q.call("POST", `/platform/external-accounts/${ext.id}/challenge`, {})).status).toBe(201);
    await eventually(async () => ((await q.call("GET", `/platform/external-accounts/${ext.id}`)).body.status === "UNVERIFIED" ? true : undefined), 30_000);
    const r = await q.call("POST", `/platform/external-accounts/${ext.id}/verify`, { amounts: [32, 45] });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("OWNERSHIP_CHALLENGE_NOT_FOUND");
    expect((await expense(q)).expense).toBe(0);
  });

  it("answers 4xx for what a client got wrong: no challenge, malformed amounts, another method, an unknown account, another owner's path", async () => {
    const ext = (await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000") })).body;
    const none = await p.call("POST", `/platform/external-accounts/${ext.id}/verify`, { amounts: [32, 45] });
    expect([none.status, none.body.code]).toEqual([409, "OWNERSHIP_CHALLENGE_NOT_FOUND"]);
    const one = await p.call("POST", `/platform/external-accounts/${ext.id}/verify`, { amounts: [32] });
    expect([one.status, one.body.code]).toEqual([400, "INVALID_INPUT"]);
    const big = await p.call("POST", `/platform/external-accounts/${ext.id}/verify`, { amounts: [32, 4500] });
    expect([big.status, big.body.code]).toEqual([400, "INVALID_INPUT"]);
    const signature = await p.call("POST", `/platform/external-accounts/${ext.id}/challenge`, { method: "WALLET_SIGNATURE" });
    expect([signature.status, signature.body.code]).toEqual([409, "OWNERSHIP_VERIFICATION_NOT_APPLICABLE"]);
    const unknown = await p.call("POST", "/platform/external-accounts/ExternalAccount:019542f5-b3e7-7d02-8000-000000000000/challenge", {});
    expect([unknown.status, unknown.body.code]).toEqual([404, "EXTERNAL_ACCOUNT_NOT_FOUND"]);
    // The platform's account is no customer's.
    const wrongTree = await p.call("POST", `/customers/external-accounts/${ext.id}/challenge`, {});
    expect([wrongTree.status, wrongTree.body.code]).toEqual([404, "EXTERNAL_ACCOUNT_NOT_FOUND"]);
    expect((await p.call("GET", `/platform/external-accounts/${ext.id}`)).body.status).toBe("ACTIVE");
  });
});
