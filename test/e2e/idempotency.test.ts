import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { individual, uniq } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type ApiResponse, type Caller, type TestSystem } from "./harness.js";
import { customerBalance, fund, iban, platformAccount, txStatus, usdAccountInfo } from "./ledger-helpers.js";

/**
 * Decisions §3 across services: an Idempotency-Key belongs to (platform, key) on every route, so a
 * key used with the ledger (transfers, funding) cannot be used again with quotes-fx (quotes) or on
 * another ledger route. The gateway keeps that registry; each service still replays its own routes.
 */
describe.skipIf(skipReason())(`Idempotency-Key across routes (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let customerId: string;
  let fiat: string; // the customer's USD internal account
  let bank: string; // the customer's USD external account (pull-capable, sandbox suffix 000: succeeds)
  let payee: string; // the customer's EUR external account, a quote destination

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform();
    const cfg = (await p.call("GET", "/config")).body;
    const usd = cfg.supportedCurrencies[0];
    expect((await p.call("PATCH", "/config", { supportedCurrencies: [usd, { ...usd, currencyCode: "EUR" }] })).status).toBe(200);

    const created = await p.call("POST", "/customers", individual({ currencies: ["USD"] }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    customerId = created.body.id;
    const verified = await p.call("POST", "/verifications", { customerId });
    expect(verified.body.verificationStatus, JSON.stringify(verified.body)).toBe("APPROVED");
    fiat = await eventually(async () => {
      const res = await p.call("GET", `/customers/internal-accounts?customerId=${customerId}&currency=USD&type=INTERNAL_FIAT`);
      return res.body.data?.[0]?.id as string | undefined;
    });
    await fund(p, fiat, 100_000);
    const ext = await p.call("POST", "/customers/external-accounts", { customerId, currency: "USD", accountInfo: usdAccountInfo("000") });
    expect(ext.status, JSON.stringify(ext.body)).toBe(201);
    bank = ext.body.id;
    const eur = await p.call("POST", "/customers/external-accounts", { customerId, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000") } });
    expect(eur.status, JSON.stringify(eur.body)).toBe(201);
    payee = eur.body.id;
  }, 120_000);
  afterAll(async () => system?.stop());

  const key = (name: string) => ({ "idempotency-key": uniq(name) });
  const transferIn = (amount: number, headers: Record<string, string>) =>
    p.call("POST", "/transfer-in", { source: { accountId: bank }, destination: { accountId: fiat }, amount }, headers);
  const transferOut = (amount: number, headers: Record<string, string>) =>
    p.call("POST", "/transfer-out", { source: { accountId: fiat }, destination: { accountId: bank }, amount }, headers);
  const quote = (amount: number, headers: Record<string, string>, destination = payee) =>
    p.call(
      "POST",
      "/quotes",
      { source: { sourceType: "ACCOUNT", accountId: fiat }, destination: { destinationType: "ACCOUNT", accountId: destination }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: amount },
      headers,
    );
  const fundWithKey = (amount: number, headers: Record<string, string>) => p.call("POST", `/sandbox/internal-accounts/${fiat}/fund`, { amount }, headers);
  const transactionCount = async () => (await p.call("GET", `/transactions?customerId=${customerId}&limit=1`)).body.totalCount as number;
  const balance = () => customerBalance(p, customerId, fiat);

  function expectReused(res: ApiResponse, headers: Record<string, string>) {
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body).toEqual({ status: 422, code: "IDEMPOTENCY_KEY_REUSED", message: expect.any(String), details: { idempotencyKey: headers["idempotency-key"] } });
  }

  it("refuses a key used on another route with 422 IDEMPOTENCY_KEY_REUSED, and nothing happens", async () => {
    const k = key("cross");
    const pulled = await transferIn(1_000, k);
    expect(pulled.status, JSON.stringify(pulled.body)).toBe(201);
    await txStatus(p, pulled.body.id, "COMPLETED"); // settled, so balances stay still from here
    const before = { balance: await balance(), transactions: await transactionCount() };

    expectReused(await quote(5_000, k), k); // quotes-fx: no quote, no transaction
    expectReused(await transferOut(700, k), k); // another ledger route
    expectReused(await fundWithKey(700, k), k);

    expect(await balance()).toBe(before.balance);
    expect(await transactionCount()).toBe(before.transactions);
    // The first request still replays.
    const replay = await transferIn(1_000, k);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.id).toBe(pulled.body.id);
  });

  it("refuses a key first used on a quote on the ledger's routes too", async () => {
    const k = key("quote-first");
    const q = await quote(2_000, k);
    expect(q.status, JSON.stringify(q.body)).toBe(201);
    const before = { balance: await balance(), transactions: await transactionCount() };
    expectReused(await transferOut(2_000, k), k);
    expectReused(await fundWithKey(2_000, k), k);
    expect(await balance()).toBe(before.balance);
    expect(await transactionCount()).toBe(before.transactions);
  });

  it("replays the same request on the same route with Idempotent-Replayed: true, moving money once", async () => {
    const k = key("replay");
    const before = await balance();
    const first = await transferOut(300, k);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await transferOut(300, k);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(await balance()).toBe(before - 300); // held once, at once

    const qk = key("replay-quote");
    const q1 = await quote(1_500, qk);
    const q2 = await quote(1_500, qk);
    expect(q2.status).toBe(201);
    expect(q2.headers.get("idempotent-replayed")).toBe("true");
    expect(q2.body.id).toBe(q1.body.id);
  });

  it("does not burn a key on a request the service refused: the corrected request with it succeeds", async () => {
    const k = key("refused");
    const before = await balance();
    const tooMuch = await transferOut(before + 1, k);
    expect(tooMuch.status, JSON.stringify(tooMuch.body)).toBe(400);
    expect(tooMuch.body.code).toBe("INSUFFICIENT_BALANCE");
    expect(await balance()).toBe(before);

    const corrected = await transferOut(200, k);
    expect(corrected.status, JSON.stringify(corrected.body)).toBe(201);
    expect(corrected.headers.get("idempotent-replayed")).toBeNull();
    expect(await balance()).toBe(before - 200);
    // From now on the key is the corrected request's.
    expectReused(await quote(200, k), k);

    // The same across services: a quote refused by quotes-fx (unknown destination) frees its key.
    const qk = key("refused-quote");
    const unknown = await quote(1_000, qk, "ExternalAccount:0190f0f0-0000-7000-8000-000000000000");
    expect(unknown.status, JSON.stringify(unknown.body)).toBe(404);
    const fixed = await quote(1_000, qk);
    expect(fixed.status, JSON.stringify(fixed.body)).toBe(201);
  });

  it("keeps the keys of two platforms apart", async () => {
    const other = await system.createPlatform();
    const otherUsd = await platformAccount(other);
    const k = key("shared");
    const mine = await fundWithKey(10, k);
    expect(mine.status).toBe(200);
    const theirs = await other.call("POST", `/sandbox/internal-accounts/${otherUsd.id}/fund`, { amount: 25 }, k);
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.balance.amount).toBe(otherUsd.balance.amount + 25);
    const replay = await other.call("POST", `/sandbox/internal-accounts/${otherUsd.id}/fund`, { amount: 25 }, k);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  });

  it("validates the header: 1 to 255 printable characters", async () => {
    const res = await transferOut(1, { "idempotency-key": "x".repeat(256) });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("INVALID_INPUT");
    expect(res.body.details.errors.map((e: { field: string }) => e.field)).toContain("headers.idempotency-key");
  });
});
