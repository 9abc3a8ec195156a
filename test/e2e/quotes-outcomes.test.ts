import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { advanceClock, clabe, customerBalance, fund, fxPlatform, iban } from "./ledger-helpers.js";

// Issue 5 end to end through the public API: every sandbox quote suffix and UMA send scenario, driven
// with the platform's sandbox clock (never sleeping), down to the transaction's refund and the
// customer's balance. The sandbox rate table is frozen (drift 0) so the non-USD pair's amounts are
// computed by hand (services/quotes-fx/README.md, "Fee and rate model").
process.env.CORRIDOR_FX_SANDBOX_DRIFT_BPS = "0";

type Json = any;

describe.skipIf(skipReason())(`quote and UMA payout outcomes through the gateway (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let customerId: string;
  let usd: { id: string };
  let eur: { id: string };

  beforeAll(async () => {
    system = await startTestSystem();
    ({ p, customerId, usd, eur } = await fxPlatform(system));
    await fund(p, usd.id, 10_000_000); // 100,000.00 USD
    await fund(p, eur.id, 1_000_000); // 10,000.00 EUR
  }, 120_000);
  afterAll(async () => system?.stop());

  /** A customer payee whose identifier ends with `suffix`: an EUR IBAN or an MXN CLABE. */
  async function payee(currency: "EUR" | "MXN", suffix: string): Promise<string> {
    const accountInfo =
      currency === "EUR" ? { accountType: "EUR_ACCOUNT", iban: iban("DE", `370400440532013${suffix}`) } : { accountType: "MXN_ACCOUNT", clabe: clabe(suffix) };
    const res = await p.call("POST", "/customers/external-accounts", { customerId, currency, accountInfo });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id;
  }

  async function quote(body: Record<string, unknown>): Promise<Json> {
    const res = await p.call("POST", "/quotes", { source: { sourceType: "ACCOUNT", accountId: usd.id }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 10_000, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.status).toBe("PENDING");
    return res.body;
  }

  async function execute(q: Json): Promise<Json> {
    const res = await p.call("POST", `/quotes/${q.id}/execute`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  }

  const getTx = async (id: string): Promise<Json> => {
    const res = await p.call("GET", `/transactions/${id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const txWhere = (id: string, ok: (t: Json) => boolean) =>
    eventually(async () => {
      const t = await getTx(id);
      return ok(t) ? t : undefined;
    });
  const quoteWhere = (id: string, status: string) =>
    eventually(async () => {
      const res = await p.call("GET", `/quotes/${id}`);
      return res.body.status === status ? res.body : undefined;
    });

  /** The transaction carries the quote's own amounts, whatever became of it. */
  function expectQuoteAmounts(t: Json, q: Json) {
    expect(t).toMatchObject({
      type: "OUTGOING",
      quoteId: q.id,
      sentAmount: { amount: q.totalSendingAmount, currency: { code: q.sendingCurrency.code } },
      receivedAmount: { amount: q.totalReceivingAmount, currency: { code: q.receivingCurrency.code } },
      fees: q.feesIncluded,
    });
  }

  /**
   * Waits until the sandbox has most likely taken the instructions sent so far: a `$success.usd`
   * payment executed now completes only once the sandbox has handled its instruction. Used before
   * asserting that a slow payout is still PROCESSING after a small advance (it makes that assertion
   * meaningful; the final outcome is driven by advancing until it arrives either way). Answers what
   * that payment cost the customer.
   */
  async function sandboxCaughtUp(): Promise<number> {
    const lookup = await p.call("GET", `/receiver/uma/${encodeURIComponent("$success.usd@sandbox.uma.money")}?customerId=${customerId}`);
    expect(lookup.status, JSON.stringify(lookup.body)).toBe(200);
    const q = await quote({ destination: { destinationType: "UMA_ADDRESS", currency: "USD" }, lookupId: lookup.body.lookupId, senderCustomerInfo: { FULL_NAME: "Alice Smith" } });
    await execute(q);
    await txWhere(q.transactionId, (t) => t.status === "COMPLETED");
    return q.totalSendingAmount;
  }

  /** Advances the sandbox clock `step` seconds at a time until the transaction satisfies `ok`. */
  const advanceUntil = (id: string, step: number, ok: (t: Json) => boolean) =>
    eventually(async () => {
      await advanceClock(p, step);
      const t = await getTx(id);
      return ok(t) ? t : undefined;
    }, 30_000);

  describe("quotes to external accounts, by the destination identifier's suffix", () => {
    it("000 (any other) USD → EUR IBAN: COMPLETED, no refund, the customer paid the total", async () => {
      const before = await customerBalance(p, customerId, usd.id);
      const q = await quote({ destination: { destinationType: "ACCOUNT", accountId: await payee("EUR", "000") } });
      await execute(q);
      const t = await txWhere(q.transactionId, (x) => x.status === "COMPLETED");
      expectQuoteAmounts(t, q);
      expect(t.failureReason).toBeUndefined();
      expect(t.refund).toBeUndefined();
      expect(t.settledAt).toBeDefined();
      await quoteWhere(q.id, "COMPLETED");
      expect(await customerBalance(p, customerId, usd.id)).toBe(before - q.totalSendingAmount);
    });

    it("002 USD → EUR IBAN: FAILED QUOTE_EXECUTION_FAILED, no refund, the debit reversed", async () => {
      const before = await customerBalance(p, customerId, usd.id);
      const q = await quote({ destination: { destinationType: "ACCOUNT", accountId: await payee("EUR", "002") } });
      await execute(q);
      const t = await txWhere(q.transactionId, (x) => x.status === "FAILED");
      expectQuoteAmounts(t, q);
      expect(t).toMatchObject({ failureReason: "QUOTE_EXECUTION_FAILED", failureDetail: "EXECUTION_FAILED" });
      expect(t.refund).toBeUndefined();
      const fq = await quoteWhere(q.id, "FAILED");
      expect(fq.failureReason).toBe("QUOTE_EXECUTION_FAILED");
      expect(await customerBalance(p, customerId, usd.id)).toBe(before);
    });

    it("003 USD → MXN CLABE: PROCESSING for 6 sandbox minutes, then COMPLETED", async () => {
      const before = await customerBalance(p, customerId, usd.id);
      const q = await quote({ destination: { destinationType: "ACCOUNT", accountId: await payee("MXN", "003") } });
      expect(q.receivingCurrency.code).toBe("MXN");
      await execute(q);
      const marker = await sandboxCaughtUp();
      await advanceClock(p, 60);
      await advanceClock(p, 240); // 5 of the 6 minutes
      const pending = await getTx(q.transactionId);
      expect(pending.status).toBe("PROCESSING");
      expect(pending.refund).toBeUndefined();
      expect((await p.call("GET", `/quotes/${q.id}`)).body.status).toBe("PROCESSING");
      expect(await customerBalance(p, customerId, usd.id)).toBe(before - q.totalSendingAmount - marker);

      const t = await advanceUntil(q.transactionId, 60, (x) => x.status === "COMPLETED");
      expectQuoteAmounts(t, q);
      expect(t.failureReason).toBeUndefined();
      expect(t.refund).toBeUndefined();
      await quoteWhere(q.id, "COMPLETED");
      expect(await customerBalance(p, customerId, usd.id)).toBe(before - q.totalSendingAmount - marker);
    });

    // Failed after the money left: FAILED with OFFRAMP_FAILED and a refund that completes with the whole total.
    for (const [suffix, currency, cause] of [
      ["004", "EUR", "COUNTERPARTY_DELIVERY_FAILED"],
      ["006", "MXN", "USER_CANCELLED"],
    ] as const) {
      it(`${suffix} USD → ${currency}: FAILED OFFRAMP_FAILED (${cause}), refund COMPLETED, the full total back`, async () => {
        const before = await customerBalance(p, customerId, usd.id);
        const q = await quote({ destination: { destinationType: "ACCOUNT", accountId: await payee(currency, suffix) } });
        await execute(q);
        const t = await txWhere(q.transactionId, (x) => x.refund?.status === "COMPLETED");
        expectQuoteAmounts(t, q);
        expect(t).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED", failureDetail: cause });
        expect(t.refund).toMatchObject({ status: "COMPLETED", reason: cause });
        expect(t.refund.reference).toMatch(/^RFD-/);
        expect(t.refund.initiatedAt).toBeDefined();
        expect(t.refund.settledAt).toBeDefined();
        const fq = await quoteWhere(q.id, "FAILED");
        expect(fq.failureReason).toBe("OFFRAMP_FAILED");
        expect(await customerBalance(p, customerId, usd.id)).toBe(before);
      });
    }

    it("005 USD → MXN CLABE: COMPLETED, returned 60 sandbox seconds later → FAILED with the refund COMPLETED", async () => {
      const before = await customerBalance(p, customerId, usd.id);
      const q = await quote({ destination: { destinationType: "ACCOUNT", accountId: await payee("MXN", "005") } });
      await execute(q);
      const completed = await txWhere(q.transactionId, (x) => x.status === "COMPLETED");
      expect(completed.refund).toBeUndefined();
      await quoteWhere(q.id, "COMPLETED");
      expect(await customerBalance(p, customerId, usd.id)).toBe(before - q.totalSendingAmount);

      // The return was scheduled in the same sandbox transaction as COMPLETED: one advance fires it.
      const clock = await advanceClock(p, 60);
      expect(clock.fired).toBeGreaterThanOrEqual(1);
      const t = await txWhere(q.transactionId, (x) => x.refund?.status === "COMPLETED");
      expectQuoteAmounts(t, q);
      expect(t).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED", failureDetail: "RETURNED_BY_RECEIVING_BANK" });
      expect(t.refund).toMatchObject({ status: "COMPLETED", reason: "RETURNED_BY_RECEIVING_BANK" });
      expect(t.refund.reference).toMatch(/^RFD-/);
      const fq = await quoteWhere(q.id, "FAILED");
      expect(fq.failureReason).toBe("OFFRAMP_FAILED");
      expect(await customerBalance(p, customerId, usd.id)).toBe(before);
    });

    it("007 USD → MXN CLABE: FAILED OFFRAMP_FAILED (PAYOUT_FAILED), refund FAILED, the money NOT back", async () => {
      const before = await customerBalance(p, customerId, usd.id);
      const q = await quote({ destination: { destinationType: "ACCOUNT", accountId: await payee("MXN", "007") } });
      await execute(q);
      const t = await txWhere(q.transactionId, (x) => x.refund?.status === "FAILED");
      expectQuoteAmounts(t, q);
      expect(t).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED", failureDetail: "PAYOUT_FAILED" });
      expect(t.refund).toMatchObject({ status: "FAILED", reason: "PAYOUT_FAILED" });
      expect(t.refund.reference).toMatch(/^RFD-/);
      expect(t.refund.settledAt).toBeUndefined();
      const fq = await quoteWhere(q.id, "FAILED");
      expect(fq.failureReason).toBe("OFFRAMP_FAILED");
      expect(await customerBalance(p, customerId, usd.id)).toBe(before - q.totalSendingAmount);
    });
  });

  describe("UMA sends: lookup, quote to UMA_ADDRESS with the lookupId, execute", () => {
    const payer = { FULL_NAME: "Alice Smith", BIRTH_DATE: "1990-04-01", NATIONALITY: "US" };

    async function umaQuote(address: string, currency: string): Promise<Json> {
      const lookup = await p.call("GET", `/receiver/uma/${encodeURIComponent(address)}?customerId=${customerId}`);
      expect(lookup.status, JSON.stringify(lookup.body)).toBe(200);
      const q = await quote({ destination: { destinationType: "UMA_ADDRESS", currency }, lookupId: lookup.body.lookupId, senderCustomerInfo: payer });
      expect(q.destination).toMatchObject({ destinationType: "UMA_ADDRESS", umaAddress: address });
      expect(q.receivingCurrency.code).toBe(currency);
      return q;
    }

    for (const currency of ["USD", "EUR", "MXN"]) {
      const address = `$success.${currency.toLowerCase()}@sandbox.uma.money`;
      it(`${address}: COMPLETED in ${currency}, the customer paid the total`, async () => {
        const before = await customerBalance(p, customerId, usd.id);
        const q = await umaQuote(address, currency);
        await execute(q);
        const t = await txWhere(q.transactionId, (x) => x.status === "COMPLETED");
        expectQuoteAmounts(t, q);
        expect(t.destination).toMatchObject({ destinationType: "UMA_ADDRESS", umaAddress: address });
        expect(t.refund).toBeUndefined();
        await quoteWhere(q.id, "COMPLETED");
        expect(await customerBalance(p, customerId, usd.id)).toBe(before - q.totalSendingAmount);
      });
    }

    it("$pending.long.usd: still PROCESSING after 23 sandbox hours, COMPLETED once 24 hours have passed", async () => {
      const before = await customerBalance(p, customerId, usd.id);
      const q = await umaQuote("$pending.long.usd@sandbox.uma.money", "USD");
      await execute(q);
      const marker = await sandboxCaughtUp();
      await advanceClock(p, 60);
      expect((await getTx(q.transactionId)).status).toBe("PROCESSING");
      await advanceClock(p, 23 * 3600);
      const pending = await getTx(q.transactionId);
      expect(pending.status).toBe("PROCESSING");
      expect((await p.call("GET", `/quotes/${q.id}`)).body.status).toBe("PROCESSING");
      expect(await customerBalance(p, customerId, usd.id)).toBe(before - q.totalSendingAmount - marker);

      const t = await advanceUntil(q.transactionId, 3600, (x) => x.status === "COMPLETED");
      expectQuoteAmounts(t, q);
      expect(t.refund).toBeUndefined();
      await quoteWhere(q.id, "COMPLETED");
      expect(await customerBalance(p, customerId, usd.id)).toBe(before - q.totalSendingAmount - marker);
    });

    it("$fail.compliance.usd: FAILED PAY_REQUEST_FAILED (COMPLIANCE_FAILED), refund COMPLETED, the full total back", async () => {
      const before = await customerBalance(p, customerId, usd.id);
      const q = await umaQuote("$fail.compliance.usd@sandbox.uma.money", "USD");
      await execute(q);
      const t = await txWhere(q.transactionId, (x) => x.refund?.status === "COMPLETED");
      expectQuoteAmounts(t, q);
      expect(t).toMatchObject({ status: "FAILED", failureReason: "PAY_REQUEST_FAILED", failureDetail: "COMPLIANCE_FAILED" });
      expect(t.refund).toMatchObject({ status: "COMPLETED", reason: "COMPLIANCE_FAILED" });
      const fq = await quoteWhere(q.id, "FAILED");
      expect(fq.failureReason).toBe("PAY_REQUEST_FAILED");
      expect(await customerBalance(p, customerId, usd.id)).toBe(before);
    });
  });

  // EUR → MXN, market usd(MXN)/usd(EUR) = 0.055 / 1.08 = 0.0509259…; × 1.002 = 0.0510277…, rounded to
  // 10 significant digits 0.05102777778 EUR per MXN (both 2 decimals, so k is the same). Fees: EUR:* fixed
  // 10, *:MXN counterparty 500 MXN cents → ceil(500 × 0.05102777778) = ceil(25.51…) = 26, variable 0.1 %.
  describe("a non-USD pair, both locked sides (EUR → MXN)", () => {
    const rateDetails = { counterpartyMultiplier: 1, counterpartyFixedFee: 500, serviceApiMultiplier: 1.002, serviceApiFixedFee: 10, serviceApiVariableFeeRate: 0.001 };

    // SENDING 10000: variable round(10) = 10; fees 10 + 10 + 26 = 46; receive floor(9954 / 0.05102777778) = floor(195070.3…) = 195070.
    it("locks SENDING: 100.00 EUR buys 1950.70 MXN for 0.46 of fees, and executing moves exactly that", async () => {
      const before = await customerBalance(p, customerId, eur.id);
      const q = await quote({ source: { sourceType: "ACCOUNT", accountId: eur.id }, destination: { destinationType: "ACCOUNT", accountId: await payee("MXN", "000") } });
      expect(q).toMatchObject({
        sendingCurrency: { code: "EUR" },
        receivingCurrency: { code: "MXN" },
        totalSendingAmount: 10_000,
        totalReceivingAmount: 195_070,
        feesIncluded: 46,
        exchangeRate: 0.05102777778,
        rateDetails: { ...rateDetails, serviceApiVariableFeeAmount: 10 },
      });
      await execute(q);
      const t = await txWhere(q.transactionId, (x) => x.status === "COMPLETED");
      expectQuoteAmounts(t, q);
      expect(t.exchangeRate).toBe(0.05102777778);
      expect(await customerBalance(p, customerId, eur.id)).toBe(before - 10_000);
    });

    // RECEIVING 100000: T = ceil(100000 × 0.05102777778) + 10 + 26 = 5103 + 36 = 5139; s − round(s × 0.001) ≥ 5139
    // first at s = 5144 (5144 − 5 = 5139): send 51.44 EUR, fees 10 + 5 + 26 = 41.
    it("locks RECEIVING: 1000.00 MXN costs exactly 51.44 EUR", async () => {
      const q = await quote({
        source: { sourceType: "ACCOUNT", accountId: eur.id },
        destination: { destinationType: "ACCOUNT", accountId: await payee("MXN", "000") },
        lockedCurrencySide: "RECEIVING",
        lockedCurrencyAmount: 100_000,
      });
      expect(q).toMatchObject({
        lockedCurrencySide: "RECEIVING",
        totalSendingAmount: 5_144,
        totalReceivingAmount: 100_000,
        feesIncluded: 41,
        exchangeRate: 0.05102777778,
        rateDetails: { ...rateDetails, serviceApiVariableFeeAmount: 5 },
      });
    });
  });
});
