import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { service } from "../src/server.js";
import { balanceSums, publicError, quoteTransactionInput, quoteWorld, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

/**
 * Quote transactions at the service level: create, expire, execute (FX and fee legs), real-time
 * funding and every QUOTE_PAYOUT outcome with its refund, delivered as the rail connector would.
 */
describe("ledger quote transactions", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  const eurInfo = { accountType: "EUR_ACCOUNT", iban: "DE89370400440532013000" };

  /** A platform (USD, EUR), an approved customer with a USD account, and the customer's EUR external account. */
  const world = (opts: { status?: string } = {}) => quoteWorld(h, opts);

  /** 10.00 USD sent (0.50 fee) for 8.50 EUR at rate 1.1176... */
  const quote = (w: Awaited<ReturnType<typeof world>>, over: Record<string, unknown> = {}) =>
    quoteTransactionInput(h, w, { rateDetails: { serviceApiFixedFee: 50 }, description: "rent", counterpartyInformation: { FULL_NAME: "Ada Lovelace" }, ...over });

  const balanceOf = async (platformId: string, accountId: string) => (await h.ledger.getInternalAccount({ platformId, accountId })).account!.available;

  async function systemBalance(platformId: string, type: string, currency: string): Promise<bigint> {
    const row = await h.db
      .forSchema<any>(service.schema)
      .selectFrom("accounts")
      .select("balance")
      .where("platform_id", "=", platformId)
      .where("owner_kind", "=", "SYSTEM")
      .where("type", "=", type)
      .where("currency", "=", currency)
      .executeTakeFirst();
    return (row?.balance as bigint | undefined) ?? 0n;
  }

  async function expectConserved(platformId: string) {
    for (const [currency, sum] of await balanceSums(h.db, platformId)) expect(sum, `sum of ${currency}`).toBe(0n);
  }

  const eventsOf = async (transactionId: string) =>
    (await h.ledgerEvents()).filter((e) => e.payload.case === "transactionChanged" && e.payload.value.transaction?.id === transactionId).map((e) => e.eventType);

  async function executed(fund = 5000n, suffixInfo?: unknown) {
    const w = await world();
    if (suffixInfo) {
      w.eurExt = (await h.ledger.createExternalAccount({ platformId: w.platformId, owner: "CUSTOMER", customerId: w.customerId, currency: "EUR", accountInfo: suffixInfo as never })).account!;
    }
    await h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: w.usd.id, amount: fund });
    const created = (await h.ledger.createQuoteTransaction(quote(w))).transaction!;
    const res = await h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: created.id });
    return { ...w, tx: res.transaction!, res };
  }

  describe("CreateQuoteTransaction", () => {
    it("opens a PENDING OUTGOING transaction with the quote's amounts, rate and fees, once per quote", async () => {
      const w = await world();
      const req = quote(w);
      const tx = (await h.ledger.createQuoteTransaction(req)).transaction!;
      expect(tx).toMatchObject({
        status: "PENDING",
        type: "OUTGOING",
        quoteId: req.quoteId,
        customerId: w.customerId,
        amount: 850n,
        sentAmount: 1000n,
        fees: 50n,
        exchangeRate: "1.11764705",
        description: "rent",
        counterpartyInformation: { FULL_NAME: "Ada Lovelace" },
        source: { type: "ACCOUNT", accountId: w.usd.id, currency: "USD" },
        destination: { type: "ACCOUNT", accountId: w.eurExt.id, currency: "EUR", paymentRail: "SEPA" },
      });
      expect(tx.currency?.code).toBe("EUR");
      expect(tx.sentCurrency?.code).toBe("USD");
      expect(tx.rateDetails).toEqual({ serviceApiFixedFee: 50 });
      expect(tx.expiresAt).toBeDefined();
      expect(await eventsOf(tx.id)).toEqual(["OUTGOING_PAYMENT_PENDING"]);

      const again = (await h.ledger.createQuoteTransaction(req)).transaction!;
      expect(again.id).toBe(tx.id);
      const listed = await h.ledger.listTransactions({ platformId: w.platformId });
      expect(listed.transactions.map((t) => t.id)).toEqual([tx.id]);
      expect(listed.transactions[0]).toMatchObject({ quoteId: req.quoteId, sentAmount: 1000n, fees: 50n });
      // Creating moves no money.
      expect(await balanceOf(w.platformId, w.usd.id)).toBe(0n);
    });

    it("accepts a UMA destination and a real-time-funding source", async () => {
      const w = await world();
      const tx = (
        await h.ledger.createQuoteTransaction(
          quote(w, { source: { type: "REALTIME_FUNDING", accountId: "" }, destination: { type: "UMA_ADDRESS", umaAddress: "$success.eur@sandbox.uma.money" } }),
        )
      ).transaction!;
      expect(tx.source).toMatchObject({ type: "REALTIME_FUNDING", accountId: "", currency: "USD" });
      expect(tx.destination).toMatchObject({ type: "UMA_ADDRESS", umaAddress: "$success.eur@sandbox.uma.money", currency: "EUR" });
    });

    it("refuses a source in another currency, another customer's account, a bad rate and an unverified customer", async () => {
      const w = await world();
      const mismatch = await publicError(h.ledger.createQuoteTransaction(quote(w, { sendingCurrency: "EUR" })));
      expect(mismatch).toMatchObject({ outcome: "INVALID", code: "CURRENCY_MISMATCH" });
      const destMismatch = await publicError(h.ledger.createQuoteTransaction(quote(w, { receivingCurrency: "USD" })));
      expect(destMismatch.code).toBe("CURRENCY_MISMATCH");
      const other = await h.newCustomer(w.platformId);
      const foreign = await publicError(h.ledger.createQuoteTransaction(quote(w, { customerId: other })));
      expect(foreign.outcome).toBe("NOT_FOUND");
      const rate = await publicError(h.ledger.createQuoteTransaction(quote(w, { exchangeRate: "-1" })));
      expect(rate.code).toBe("INVALID_INPUT");
      expect(JSON.stringify(rate.details)).toContain("exchangeRate");
      const uma = await publicError(h.ledger.createQuoteTransaction(quote(w, { destination: { type: "UMA_ADDRESS", umaAddress: "nobody" } })));
      expect(JSON.stringify(uma.details)).toContain("destination.umaAddress");
      const pending = await world({ status: "PENDING" });
      const kyc = await publicError(h.ledger.createQuoteTransaction(quote(pending)));
      expect(kyc).toMatchObject({ outcome: "FORBIDDEN", code: "USER_NOT_READY" });
    });
  });

  describe("ExpireQuoteTransaction", () => {
    it("expires a PENDING quote once (QUOTE_EXPIRED), after which it cannot execute", async () => {
      const w = await world();
      const tx = (await h.ledger.createQuoteTransaction(quote(w))).transaction!;
      const first = await h.ledger.expireQuoteTransaction({ platformId: w.platformId, transactionId: tx.id });
      expect(first).toMatchObject({ expired: true, transaction: { status: "EXPIRED", failureReason: "QUOTE_EXPIRED" } });
      const second = await h.ledger.expireQuoteTransaction({ platformId: w.platformId, transactionId: tx.id });
      expect(second.expired).toBe(false);
      expect(await eventsOf(tx.id)).toEqual(["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_EXPIRED"]);
      await h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: w.usd.id, amount: 5000n });
      const err = await publicError(h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: tx.id }));
      expect(err).toMatchObject({ outcome: "CONFLICT", code: "QUOTE_EXPIRED" });
      expect(await balanceOf(w.platformId, w.usd.id)).toBe(5000n);
    });

    it("does not expire an executed quote", async () => {
      const { platformId, tx } = await executed();
      const r = await h.ledger.expireQuoteTransaction({ platformId, transactionId: tx.id });
      expect(r).toMatchObject({ expired: false, transaction: { status: "PROCESSING" } });
    });

    it("refuses to execute after expiresAt even before quotes-fx expired it", async () => {
      const w = await world();
      await h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: w.usd.id, amount: 5000n });
      const tx = (await h.ledger.createQuoteTransaction(quote(w))).transaction!;
      h.clock.advance(5 * 60_000 + 1);
      const err = await publicError(h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: tx.id }));
      expect(err.code).toBe("QUOTE_EXPIRED");
    });
  });

  describe("ExecuteQuoteTransaction", () => {
    it("debits the total, books the fee and converts through the FX pools so each currency sums to zero", async () => {
      const { platformId, usd, tx, res } = await executed();
      expect(res.alreadyExecuted).toBe(false);
      expect(tx.status).toBe("PROCESSING");
      expect(await balanceOf(platformId, usd.id)).toBe(4000n);
      expect(await systemBalance(platformId, "FEE_REVENUE", "USD")).toBe(50n);
      expect(await systemBalance(platformId, "FX_POOL", "USD")).toBe(950n);
      expect(await systemBalance(platformId, "FX_POOL", "EUR")).toBe(-850n);
      expect(await systemBalance(platformId, "RAIL_CLEARING", "EUR")).toBe(850n);
      await expectConserved(platformId);
      const instruction = (await h.railInstructions()).find((i) => i.transactionId === tx.id)!;
      expect(instruction).toMatchObject({ kind: "QUOTE_PAYOUT", direction: "PAYOUT", amount: 850n, currency: "EUR", paymentRail: "SEPA" });
      expect(instruction.accountInfo).toMatchObject({ iban: eurInfo.iban });
      expect(await eventsOf(tx.id)).toEqual(["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_PROCESSING"]);
    });

    it("answers the current state on a second call without moving money again", async () => {
      const { platformId, usd, tx } = await executed();
      const again = await h.ledger.executeQuoteTransaction({ platformId, transactionId: tx.id });
      expect(again).toMatchObject({ alreadyExecuted: true, transaction: { status: "PROCESSING" } });
      expect(await balanceOf(platformId, usd.id)).toBe(4000n);
      expect((await h.railInstructions()).filter((i) => i.transactionId === tx.id)).toHaveLength(1);
    });

    it("executes concurrent calls once", async () => {
      const w = await world();
      await h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: w.usd.id, amount: 5000n });
      const tx = (await h.ledger.createQuoteTransaction(quote(w))).transaction!;
      const results = await Promise.all([1, 2, 3].map(() => h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: tx.id })));
      expect(results.filter((r) => !r.alreadyExecuted)).toHaveLength(1);
      expect(await balanceOf(w.platformId, w.usd.id)).toBe(4000n);
    });

    it("refuses with 400 INSUFFICIENT_BALANCE and changes nothing when the source cannot pay the total", async () => {
      const w = await world();
      await h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: w.usd.id, amount: 999n });
      const tx = (await h.ledger.createQuoteTransaction(quote(w))).transaction!;
      const err = await publicError(h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: tx.id }));
      expect(err).toMatchObject({ outcome: "INVALID", code: "INSUFFICIENT_BALANCE" });
      expect(await balanceOf(w.platformId, w.usd.id)).toBe(999n);
      expect((await h.ledger.getTransaction({ platformId: w.platformId, transactionId: tx.id })).transaction!.status).toBe("PENDING");
      expect(await systemBalance(w.platformId, "FX_POOL", "EUR")).toBe(0n);
    });

    it("refuses to execute a real-time-funding quote before its money arrived", async () => {
      const w = await world();
      const tx = (await h.ledger.createQuoteTransaction(quote(w, { source: { type: "REALTIME_FUNDING", accountId: "" } }))).transaction!;
      const err = await publicError(h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: tx.id }));
      expect(err).toMatchObject({ outcome: "CONFLICT", code: "QUOTE_NOT_FUNDED" });
    });
  });

  describe("RecordQuoteFunding", () => {
    it("takes exactly the sending currency and total, then executes from sandbox funding", async () => {
      const w = await world();
      const tx = (await h.ledger.createQuoteTransaction(quote(w, { source: { type: "REALTIME_FUNDING", accountId: "" } }))).transaction!;
      const wrongCurrency = await publicError(h.ledger.recordQuoteFunding({ platformId: w.platformId, transactionId: tx.id, currencyCode: "EUR", amount: 1000n }));
      expect(wrongCurrency.outcome).toBe("INVALID");
      expect(JSON.stringify(wrongCurrency.details)).toContain("currencyCode");
      const wrongAmount = await publicError(h.ledger.recordQuoteFunding({ platformId: w.platformId, transactionId: tx.id, currencyCode: "USD", amount: 999n }));
      expect(JSON.stringify(wrongAmount.details)).toContain("amount");

      const funded = await h.ledger.recordQuoteFunding({ platformId: w.platformId, transactionId: tx.id, currencyCode: "USD", amount: 1000n });
      expect(funded).toMatchObject({ alreadyExecuted: false, transaction: { status: "PROCESSING" } });
      expect(await systemBalance(w.platformId, "SANDBOX_FUNDING", "USD")).toBe(-1000n);
      expect(await systemBalance(w.platformId, "RAIL_CLEARING", "EUR")).toBe(850n);
      await expectConserved(w.platformId);
      const again = await h.ledger.recordQuoteFunding({ platformId: w.platformId, transactionId: tx.id, currencyCode: "USD", amount: 1000n });
      expect(again.alreadyExecuted).toBe(true);
      expect(await systemBalance(w.platformId, "SANDBOX_FUNDING", "USD")).toBe(-1000n);

      // A refund goes back to the payer (sandbox funding).
      await h.outcome(w.platformId, tx.id, "FAILED", "USER_CANCELLED");
      await h.outcome(w.platformId, tx.id, "REFUND_COMPLETED");
      expect(await systemBalance(w.platformId, "SANDBOX_FUNDING", "USD")).toBe(0n);
      await expectConserved(w.platformId);
    });

    it("refuses funding for a quote paid from an internal account", async () => {
      const w = await world();
      const tx = (await h.ledger.createQuoteTransaction(quote(w))).transaction!;
      const err = await publicError(h.ledger.recordQuoteFunding({ platformId: w.platformId, transactionId: tx.id, currencyCode: "USD", amount: 1000n }));
      expect(err).toMatchObject({ outcome: "INVALID", code: "QUOTE_NOT_REALTIME_FUNDED" });
    });
  });

  describe("QUOTE_PAYOUT outcomes", () => {
    const get = async (platformId: string, id: string) => (await h.ledger.getTransaction({ platformId, transactionId: id })).transaction!;

    it("completes on COMPLETED and keeps the money with the rail", async () => {
      const { platformId, usd, tx } = await executed();
      await h.outcome(platformId, tx.id, "COMPLETED");
      const done = await get(platformId, tx.id);
      expect(done.status).toBe("COMPLETED");
      expect(done.settledAt).toBeDefined();
      expect(done.refund).toBeUndefined();
      expect(await balanceOf(platformId, usd.id)).toBe(4000n);
      await expectConserved(platformId);
    });

    it("reverses the debit at once on EXECUTION_FAILED (QUOTE_EXECUTION_FAILED, no refund)", async () => {
      const { platformId, usd, tx } = await executed();
      await h.outcome(platformId, tx.id, "FAILED", "EXECUTION_FAILED");
      const failed = await get(platformId, tx.id);
      expect(failed).toMatchObject({ status: "FAILED", failureReason: "QUOTE_EXECUTION_FAILED", failureDetail: "EXECUTION_FAILED" });
      expect(failed.refund).toBeUndefined();
      expect(await balanceOf(platformId, usd.id)).toBe(5000n);
      for (const [type, cur] of [["FEE_REVENUE", "USD"], ["FX_POOL", "USD"], ["FX_POOL", "EUR"], ["RAIL_CLEARING", "EUR"]] as const) {
        expect(await systemBalance(platformId, type, cur), `${type} ${cur}`).toBe(0n);
      }
      expect(await eventsOf(tx.id)).toEqual(["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_PROCESSING", "OUTGOING_PAYMENT_FAILED"]);
    });

    it.each(["COUNTERPARTY_DELIVERY_FAILED", "USER_CANCELLED"])("fails on %s, then refunds the whole total to the source", async (cause) => {
      const { platformId, usd, tx } = await executed();
      await h.outcome(platformId, tx.id, "FAILED", cause);
      const pending = await get(platformId, tx.id);
      expect(pending).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED", failureDetail: cause, refund: { status: "PENDING", reason: cause } });
      expect(pending.refund?.reference).toMatch(/^RFD-/);
      expect(await balanceOf(platformId, usd.id)).toBe(4000n);
      await h.outcome(platformId, tx.id, "REFUND_COMPLETED");
      await h.outcome(platformId, tx.id, "REFUND_COMPLETED"); // a second one changes nothing
      const refunded = await get(platformId, tx.id);
      expect(refunded.refund).toMatchObject({ status: "COMPLETED" });
      expect(refunded.refund?.settledAt).toBeDefined();
      expect(await balanceOf(platformId, usd.id)).toBe(5000n);
      await expectConserved(platformId);
      expect(await eventsOf(tx.id)).toEqual([
        "OUTGOING_PAYMENT_PENDING",
        "OUTGOING_PAYMENT_PROCESSING",
        "OUTGOING_PAYMENT_FAILED",
        "OUTGOING_PAYMENT_REFUND_PENDING",
        "OUTGOING_PAYMENT_REFUND_COMPLETED",
      ]);
    });

    it("turns a completed payment the bank returned into FAILED with a refund", async () => {
      const { platformId, usd, tx } = await executed();
      await h.outcome(platformId, tx.id, "COMPLETED");
      await h.outcome(platformId, tx.id, "RETURNED", "RETURNED_BY_RECEIVING_BANK");
      await h.outcome(platformId, tx.id, "REFUND_COMPLETED");
      const t = await get(platformId, tx.id);
      expect(t).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED", failureDetail: "RETURNED_BY_RECEIVING_BANK", refund: { status: "COMPLETED" } });
      expect(await balanceOf(platformId, usd.id)).toBe(5000n);
      await expectConserved(platformId);
    });

    it("parks the money in refund suspense when payout and refund both fail", async () => {
      const { platformId, usd, tx } = await executed();
      await h.outcome(platformId, tx.id, "FAILED", "PAYOUT_FAILED");
      await h.outcome(platformId, tx.id, "REFUND_FAILED");
      const t = await get(platformId, tx.id);
      expect(t).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED", refund: { status: "FAILED" } });
      expect(await balanceOf(platformId, usd.id)).toBe(4000n);
      expect(await systemBalance(platformId, "RAIL_CLEARING", "EUR")).toBe(0n);
      expect(await systemBalance(platformId, "REFUND_SUSPENSE", "EUR")).toBe(850n);
      await expectConserved(platformId);
      expect((await eventsOf(tx.id)).at(-1)).toBe("OUTGOING_PAYMENT_REFUND_FAILED");
      // A late refund outcome cannot pay out twice.
      await h.outcome(platformId, tx.id, "REFUND_COMPLETED");
      expect(await balanceOf(platformId, usd.id)).toBe(4000n);
    });

    it("maps a UMA compliance failure to PAY_REQUEST_FAILED", async () => {
      const w = await world();
      await h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: w.usd.id, amount: 1000n });
      const tx = (await h.ledger.createQuoteTransaction(quote(w, { destination: { type: "UMA_ADDRESS", umaAddress: "$fail.compliance.usd@sandbox.uma.money" } }))).transaction!;
      await h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: tx.id });
      const instruction = (await h.railInstructions()).find((i) => i.transactionId === tx.id)!;
      expect(instruction).toMatchObject({ kind: "QUOTE_PAYOUT", umaAddress: "$fail.compliance.usd@sandbox.uma.money", externalAccountId: "" });
      await h.outcome(w.platformId, tx.id, "FAILED", "COMPLIANCE_FAILED");
      await h.outcome(w.platformId, tx.id, "REFUND_COMPLETED");
      expect(await get(w.platformId, tx.id)).toMatchObject({ status: "FAILED", failureReason: "PAY_REQUEST_FAILED", refund: { status: "COMPLETED" } });
      expect(await balanceOf(w.platformId, w.usd.id)).toBe(1000n);
    });
  });
});
