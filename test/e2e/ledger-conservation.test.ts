import { createClient } from "@connectrpc/connect";
import { LedgerAdminService, type CurrencyTrialBalance } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { clabe, customerBalance, fund, fxPlatform, iban } from "./ledger-helpers.js";

// Issue 5, "Done when": money conservation across currencies. FX driven through the public API
// (USD → EUR, EUR → MXN and USD → MXN quotes, one refunded after a failed payout, one reversed at
// execution, one whose refund failed and sits in suspense), then the ledger's trial balance — every
// account, the system ones no public route shows included — read over LedgerAdminService, which
// the gateway does not route. Each currency must sum to zero, and the customer's balances must
// have moved by exactly the amounts computed by hand from the sandbox rate table (drift frozen)
// and the built-in fee rules (services/quotes-fx/README.md, "Fee and rate model").
process.env.CORRIDOR_FX_SANDBOX_DRIFT_BPS = "0";

type Json = any;

const USD_FUNDED = 1_000_000; // 10,000.00 USD
const EUR_FUNDED = 100_000; // 1,000.00 EUR

// All quotes lock SENDING 10000 (100.00 of the sending currency); k = exchangeRate (2 decimals both sides).
// USD → EUR: rate 1.08 × 1.002 = 1.08216; counterparty ceil(25 × 1.08216) = 28; fees 10 + 10 + 28 = 48;
//   receive floor(9952 / 1.08216) = 9196.
const USD_EUR = { send: 10_000, fees: 48, receive: 9_196 };
// EUR → MXN: rate 0.055 / 1.08 × 1.002 = 0.05102777778; counterparty ceil(500 × k) = 26; fees 10 + 10 + 26 = 46;
//   receive floor(9954 / 0.05102777778) = 195070.
const EUR_MXN = { send: 10_000, fees: 46, receive: 195_070 };
// USD → MXN: rate 0.055 × 1.002 = 0.05511; counterparty ceil(500 × 0.05511) = ceil(27.555) = 28; fees 10 + 10 + 28 = 48;
//   receive floor(9952 / 0.05511) = floor(180584.28…) = 180584.
const USD_MXN = { send: 10_000, fees: 48, receive: 180_584 };

describe.skipIf(skipReason())(`money conservation across currencies (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let customerId: string;
  let usd: { id: string };
  let eur: { id: string };

  beforeAll(async () => {
    system = await startTestSystem();
    ({ p, customerId, usd, eur } = await fxPlatform(system));
    await fund(p, usd.id, USD_FUNDED);
    await fund(p, eur.id, EUR_FUNDED);
  }, 120_000);
  afterAll(async () => system?.stop());

  const admin = () => createClient(LedgerAdminService, system.transportFor("ledger"));

  /** The trial balance by currency: this platform's, or the whole ledger's for "". */
  async function trialBalance(platformId: string): Promise<Map<string, CurrencyTrialBalance>> {
    const res = await admin().getTrialBalance({ platformId });
    return new Map(res.currencies.map((c) => [c.currency, c]));
  }

  /** A currency's balances by "OWNER_KIND/TYPE", as numbers (these amounts are far below 2^53). */
  const groups = (c: CurrencyTrialBalance | undefined) => Object.fromEntries((c?.groups ?? []).map((g) => [`${g.ownerKind}/${g.accountType}`, Number(g.balanceSum)]));

  function expectBalanced(tb: Map<string, CurrencyTrialBalance>) {
    expect(tb.size).toBeGreaterThan(0);
    for (const c of tb.values()) {
      expect(c.balanceSum, `sum of the ${c.currency} balances`).toBe(0n);
      expect(c.postingSum, `sum of the ${c.currency} postings`).toBe(0n);
      expect(c.mismatchedAccountCount, `${c.currency} accounts whose balance is not their postings`).toBe(0n);
    }
  }

  async function payee(currency: "EUR" | "MXN", suffix: string): Promise<string> {
    const accountInfo =
      currency === "EUR" ? { accountType: "EUR_ACCOUNT", iban: iban("DE", `370400440532013${suffix}`) } : { accountType: "MXN_ACCOUNT", clabe: clabe(suffix) };
    const res = await p.call("POST", "/customers/external-accounts", { customerId, currency, accountInfo });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id;
  }

  /** Quotes 100.00 of the source's currency to a payee, checks the hand-computed amounts, executes it. */
  async function executeQuote(source: { id: string }, currency: "EUR" | "MXN", suffix: string, expected: { send: number; fees: number; receive: number }): Promise<Json> {
    const res = await p.call("POST", "/quotes", {
      source: { sourceType: "ACCOUNT", accountId: source.id },
      destination: { destinationType: "ACCOUNT", accountId: await payee(currency, suffix) },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: expected.send,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body, "the quote's amounts, as computed by hand").toMatchObject({
      totalSendingAmount: expected.send,
      feesIncluded: expected.fees,
      totalReceivingAmount: expected.receive,
      receivingCurrency: { code: currency },
    });
    const executed = await p.call("POST", `/quotes/${res.body.id}/execute`);
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
    return res.body;
  }

  const txWhere = (id: string, ok: (t: Json) => boolean) =>
    eventually(async () => {
      const res = await p.call("GET", `/transactions/${id}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return ok(res.body) ? res.body : undefined;
    }, 30_000);

  const balances = async () => ({ usd: await customerBalance(p, customerId, usd.id), eur: await customerBalance(p, customerId, eur.id) });

  it("books sandbox funding against the sandbox funding accounts: each currency already sums to zero", async () => {
    const tb = await trialBalance(p.platformId);
    expectBalanced(tb);
    expect(groups(tb.get("USD"))).toMatchObject({ "CUSTOMER/INTERNAL_FIAT": USD_FUNDED, "PLATFORM/INTERNAL_FIAT": 0, "SYSTEM/SANDBOX_FUNDING": -USD_FUNDED });
    expect(groups(tb.get("EUR"))).toMatchObject({ "CUSTOMER/INTERNAL_FIAT": EUR_FUNDED, "PLATFORM/INTERNAL_FIAT": 0, "SYSTEM/SANDBOX_FUNDING": -EUR_FUNDED });
    expect(groups(tb.get("MXN"))).toEqual({ "PLATFORM/INTERNAL_FIAT": 0 });
    expect(await balances()).toEqual({ usd: USD_FUNDED, eur: EUR_FUNDED });
  });

  it("000 USD → EUR completes: the customer paid exactly 100.00 USD", async () => {
    const before = await balances();
    const q = await executeQuote(usd, "EUR", "000", USD_EUR);
    await txWhere(q.transactionId, (t) => t.status === "COMPLETED");
    expect(await balances()).toEqual({ usd: before.usd - USD_EUR.send, eur: before.eur });
  });

  it("000 EUR → MXN completes: the customer paid exactly 100.00 EUR", async () => {
    const before = await balances();
    const q = await executeQuote(eur, "MXN", "000", EUR_MXN);
    await txWhere(q.transactionId, (t) => t.status === "COMPLETED");
    expect(await balances()).toEqual({ usd: before.usd, eur: before.eur - EUR_MXN.send });
  });

  it("004 USD → EUR fails after the money left and is refunded: the customer's USD is back to the cent", async () => {
    const before = await balances();
    const q = await executeQuote(usd, "EUR", "004", USD_EUR);
    const t = await txWhere(q.transactionId, (x) => x.refund?.status === "COMPLETED");
    expect(t).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED" });
    expect(await balances()).toEqual(before);
  });

  it("002 USD → EUR fails at execution and is reversed: nothing moved", async () => {
    const before = await balances();
    const q = await executeQuote(usd, "EUR", "002", USD_EUR);
    const t = await txWhere(q.transactionId, (x) => x.status === "FAILED");
    expect(t).toMatchObject({ failureReason: "QUOTE_EXECUTION_FAILED" });
    expect(t.refund).toBeUndefined();
    expect(await balances()).toEqual(before);
  });

  it("007 USD → MXN: payout and refund fail, the customer's 100.00 USD stays gone (the MXN sit in suspense)", async () => {
    const before = await balances();
    const q = await executeQuote(usd, "MXN", "007", USD_MXN);
    const t = await txWhere(q.transactionId, (x) => x.refund?.status === "FAILED");
    expect(t).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED" });
    expect(await balances()).toEqual({ usd: before.usd - USD_MXN.send, eur: before.eur });
  });

  it("after all of it, every currency's accounts sum to zero and each account holds the hand-computed amount", async () => {
    const tb = await trialBalance(p.platformId);
    expectBalanced(tb);
    // USD: the customer paid two quotes (000 to EUR, 007 to MXN); fees and the converted rest are the platform's.
    expect(groups(tb.get("USD"))).toEqual({
      "CUSTOMER/INTERNAL_FIAT": USD_FUNDED - USD_EUR.send - USD_MXN.send,
      "PLATFORM/INTERNAL_FIAT": 0,
      "SYSTEM/SANDBOX_FUNDING": -USD_FUNDED,
      "SYSTEM/FEE_REVENUE": USD_EUR.fees + USD_MXN.fees,
      "SYSTEM/FX_POOL": USD_EUR.send - USD_EUR.fees + (USD_MXN.send - USD_MXN.fees),
    });
    // EUR: the pool bought 99.54 EUR (EUR → MXN) and sold 91.96 EUR to the one completed USD → EUR payout,
    // which the rail holds; the refunded and the reversed quotes left nothing behind.
    expect(groups(tb.get("EUR"))).toEqual({
      "CUSTOMER/INTERNAL_FIAT": EUR_FUNDED - EUR_MXN.send,
      "PLATFORM/INTERNAL_FIAT": 0,
      "SYSTEM/SANDBOX_FUNDING": -EUR_FUNDED,
      "SYSTEM/FEE_REVENUE": EUR_MXN.fees,
      "SYSTEM/FX_POOL": EUR_MXN.send - EUR_MXN.fees - USD_EUR.receive,
      "SYSTEM/RAIL_CLEARING": USD_EUR.receive,
    });
    // MXN: the pool sold both payouts; the completed one is with the rail, the 007 one in suspense.
    expect(groups(tb.get("MXN"))).toEqual({
      "PLATFORM/INTERNAL_FIAT": 0,
      "SYSTEM/FX_POOL": -EUR_MXN.receive - USD_MXN.receive,
      "SYSTEM/RAIL_CLEARING": EUR_MXN.receive,
      "SYSTEM/REFUND_SUSPENSE": USD_MXN.receive,
    });
    expect(await balances()).toEqual({ usd: USD_FUNDED - USD_EUR.send - USD_MXN.send, eur: EUR_FUNDED - EUR_MXN.send });
  });

  it("holds for the whole ledger too (every platform, one consistent read)", async () => {
    expectBalanced(await trialBalance(""));
  });

  it("is not on the public API", async () => {
    for (const path of ["/trial-balance", "/ledger/trial-balance", "/corridor.ledger.v1.LedgerAdminService/GetTrialBalance"]) {
      expect((await p.call("GET", path)).status, path).toBe(404);
      expect((await p.call("POST", path, { platformId: p.platformId })).status, path).toBe(404);
    }
    // Nor as a Connect route beside the API.
    const raw = await system.raw("POST", "/corridor.ledger.v1.LedgerAdminService/GetTrialBalance", { body: "{}", headers: { "content-type": "application/json" } });
    expect(raw.status).toBe(404);
  });
});
