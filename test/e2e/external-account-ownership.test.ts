import { createClient } from "@connectrpc/connect";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { individual } from "./customers-fixtures.js";
import { GRID, gridViolations } from "./grid-schema.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { usdAccountInfo } from "./ledger-helpers.js";
import { sparkTestWallet } from "../support/spark-wallet.js";

/**
 * Issue 27: external-account ownership verification through the public API. Spark wallets: Grid's
 * WALLET_SIGNATURE, signed here with real keys (no sandbox shortcut exists), the challenge checked
 * against Grid's OwnershipChallenge. Bank accounts: Corridor's micro-deposits; the two credits
 * travel as rail instructions to the sandbox simulator (over Kafka in split mode), which completes
 * them; the ledger books them from MICRO_DEPOSIT_EXPENSE (sandbox amounts: 32, 45).
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
    // Grid's schema accepts the verify answer. The micro-deposit challenge is Corridor's extension,
    // outside Grid's OneOf (Grid answers a bank account's challenge with a 409; docs/grid-parity.md).
    expect(gridViolations(GRID.ExternalAccount, ok.body)).toEqual([]);
    expect(gridViolations(GRID.OwnershipChallenge, started.body)).not.toEqual([]);
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
  const wallet = async (of: Caller, tree: "customers" | "platform") => {
    const w = sparkTestWallet();
    const accountInfo = { accountType: "SPARK_WALLET", address: w.address };
    const body = tree === "customers" ? { customerId: (await of.call("POST", "/customers", individual())).body.id, currency: "BTC", accountInfo } : { currency: "BTC", accountInfo };
    const created = await of.call("POST", `/${tree}/external-accounts`, body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { w, ext: created.body, path: `/${tree}/external-accounts/${created.body.id}` };
  };

  it("verifies a customer's Spark wallet Grid's way: the 201 is Grid's WalletSignatureChallenge, a real bip137 signature makes the account ACTIVE, a replay is a 409", async () => {
    const { w, ext, path } = await wallet(p, "customers");
    const started = await p.call("POST", `${path}/challenge`, { method: "WALLET_SIGNATURE" });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(gridViolations(GRID.OwnershipChallenge, started.body)).toEqual([]);
    expect(started.body).toMatchObject({ method: "WALLET_SIGNATURE", status: "PENDING", externalAccountId: ext.id, attemptsRemaining: 1 });
    expect(started.body.messageToSign).toContain(`Address: ${w.address}`);
    expect(started.body.messageToSign).toContain(`External account: ${ext.id}`);
    expect((await p.call("GET", path)).body.status).toBe("PENDING_OWNERSHIP_VERIFICATION");

    const signature = w.bip137(started.body.messageToSign);
    const ok = await p.call("POST", `${path}/verify`, { signature, signatureScheme: "bip137" });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ id: ext.id, status: "ACTIVE" });
    expect(gridViolations(GRID.ExternalAccount, ok.body)).toEqual([]);
    const replay = await p.call("POST", `${path}/verify`, { signature });
    expect([replay.status, replay.body.code]).toEqual([409, "EXTERNAL_ACCOUNT_ALREADY_VERIFIED"]);
    expect(gridViolations(GRID.Error, replay.body)).toEqual([]);
  });

  it("verifies the platform's Spark wallet with no body (WALLET_SIGNATURE is a wallet's default) and the Spark SDK's signature; a wrong signature fails the challenge (UNVERIFIED) until a new one", async () => {
    const { w, path } = await wallet(p, "platform");
    const first = await p.call("POST", `${path}/challenge`);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(gridViolations(GRID.OwnershipChallenge, first.body)).toEqual([]);

    const stranger = sparkTestWallet();
    const wrong = await p.call("POST", `${path}/verify`, { signature: stranger.bip137(first.body.messageToSign) });
    expect([wrong.status, wrong.body.code, wrong.body.details?.attemptsRemaining]).toEqual([400, "OWNERSHIP_SIGNATURE_INVALID", 0]);
    expect(gridViolations(GRID.Error, wrong.body)).toEqual([]);
    expect((await p.call("GET", path)).body.status).toBe("UNVERIFIED");
    const late = await p.call("POST", `${path}/verify`, { signature: w.bip137(first.body.messageToSign) });
    expect([late.status, late.body.code]).toEqual([409, "OWNERSHIP_CHALLENGE_NOT_FOUND"]);

    const second = await p.call("POST", `${path}/challenge`, {});
    expect(second.status).toBe(201);
    expect(second.body.messageToSign).not.toBe(first.body.messageToSign);
    const ok = await p.call("POST", `${path}/verify`, { signature: w.spark(second.body.messageToSign), signatureScheme: "spark" });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.status).toBe("ACTIVE");
  });

  it("answers 4xx for a wallet's wrong requests: an unknown scheme (400 naming the schemes), amounts, another method, LIGHTNING (409 naming why), another platform's account (404)", async () => {
    const { w, path, ext } = await wallet(p, "platform");
    const c = await p.call("POST", `${path}/challenge`, {});
    const scheme = await p.call("POST", `${path}/verify`, { signature: w.bip137(c.body.messageToSign), signatureScheme: "eip191" });
    expect([scheme.status, scheme.body.code]).toEqual([400, "INVALID_INPUT"]);
    expect(JSON.stringify(scheme.body.details)).toContain("bip137, electrum, spark");
    const amounts = await p.call("POST", `${path}/verify`, { amounts: [32, 45] });
    expect([amounts.status, amounts.body.code]).toEqual([400, "INVALID_INPUT"]);
    const both = await p.call("POST", `${path}/verify`, { amounts: [32, 45], signature: w.bip137(c.body.messageToSign) });
    expect([both.status, both.body.code]).toEqual([400, "INVALID_INPUT"]);
    const micro = await p.call("POST", `${path}/challenge`, { method: "MICRO_DEPOSITS" });
    expect([micro.status, micro.body.code]).toEqual([409, "OWNERSHIP_VERIFICATION_NOT_APPLICABLE"]);
    const liveness = await p.call("POST", `${path}/challenge`, { method: "LIVENESS" });
    expect([liveness.status, liveness.body.code]).toEqual([409, "OWNERSHIP_VERIFICATION_NOT_APPLICABLE"]);
    const ln = (await p.call("POST", "/platform/external-accounts", { currency: "BTC", accountInfo: { accountType: "LIGHTNING", lightningAddress: "alice@example.com" } })).body;
    const lnChallenge = await p.call("POST", `/platform/external-accounts/${ln.id}/challenge`, {});
    expect([lnChallenge.status, lnChallenge.body.code]).toEqual([409, "OWNERSHIP_VERIFICATION_NOT_APPLICABLE"]);
    expect(lnChallenge.body.message).toContain("no key");

    const other = await system.createPlatform({ name: "Ownership e2e, other platform" });
    const foreign = await other.call("POST", `/platform/external-accounts/${ext.id}/verify`, { signature: w.bip137(c.body.messageToSign) });
    expect([foreign.status, foreign.body.code]).toEqual([404, "EXTERNAL_ACCOUNT_NOT_FOUND"]);
    expect((await other.call("POST", `/platform/external-accounts/${ext.id}/challenge`, {})).status).toBe(404);
    for (const r of [scheme, amounts, both, micro, liveness, lnChallenge, foreign]) expect(gridViolations(GRID.Error, r.body)).toEqual([]);
    // Nothing above spent the challenge: the owner's signature still verifies it.
    const ok = await p.call("POST", `${path}/verify`, { signature: w.electrum(c.body.messageToSign), signatureScheme: "electrum" });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });
});
