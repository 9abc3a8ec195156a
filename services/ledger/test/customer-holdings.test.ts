import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId } from "@corridor/kit";
import { CustomerEventSchema } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { service } from "../src/server.js";
import { balanceSums, publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

/**
 * Issue 14, defect 4: a customer holding money cannot be closed, and once closed (customers-kyc
 * deletes it right after) no money reaches it: transfer-in, funding, incoming UMA and quotes are
 * refused, a payout returned later goes to REFUND_SUSPENSE instead of the closed account.
 */
describe("customer holdings and closing", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  async function world() {
    const platformId = await h.newPlatform({ currencies: ["USD", "EUR"] });
    const customerId = await h.newCustomer(platformId, { currencies: ["USD", "EUR"] });
    const accounts = (await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId })).accounts;
    const usd = accounts.find((a) => a.type === "INTERNAL_FIAT" && a.currency?.code === "USD")!;
    const bank = (await h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "USD", accountInfo: usdInfo("123456789000") })).account!;
    return { platformId, customerId, usd, bank };
  }

  const holdings = (w: { platformId: string; customerId: string }, close = false) => h.ledger.getCustomerHoldings({ platformId: w.platformId, customerId: w.customerId, close });
  const balance = async (platformId: string, accountId: string) => (await h.ledger.getInternalAccount({ platformId, accountId })).account!;

  it("answers each account's balance and hold and every in-flight transaction, and does not close a customer that holds money", async () => {
    const w = await world();
    await h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: w.usd.id, amount: 10_000n });
    const payout = (await h.ledger.transferOut({ transfer: { platformId: w.platformId, sourceAccountId: w.usd.id, destinationAccountId: w.bank.id, amount: 3_000n } })).result!.transaction!;

    const res = await holdings(w, true);
    expect(res.closed).toBe(false);
    expect(res.accounts).toEqual([expect.objectContaining({ accountId: w.usd.id, currency: "USD", balance: 10_000n, held: 3_000n })]);
    expect(res.inFlightTransactions).toEqual([expect.objectContaining({ transactionId: payout.id, type: "OUTGOING", status: "PENDING", amount: 3_000n, currency: "USD" })]);
    // Not closed: money still moves.
    await h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: w.usd.id, amount: 1n });
  });

  it("counts a failed payout's released hold as money held (it came back into the account)", async () => {
    const w = await world();
    await h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: w.usd.id, amount: 5_000n });
    const payout = (await h.ledger.transferOut({ transfer: { platformId: w.platformId, sourceAccountId: w.usd.id, destinationAccountId: w.bank.id, amount: 5_000n } })).result!.transaction!;
    await h.outcome(w.platformId, payout.id, "FAILED", "TIMED_OUT");
    const res = await holdings(w, true);
    expect(res.closed).toBe(false);
    expect(res.inFlightTransactions).toEqual([]);
    expect(res.accounts).toEqual([expect.objectContaining({ accountId: w.usd.id, balance: 5_000n, held: 0n })]);
  });

  it("closes a customer that holds nothing, and from then on refuses money to it with 404 USER_NOT_FOUND", async () => {
    const w = await world();
    const closed = await holdings(w, true);
    expect(closed).toMatchObject({ closed: true, accounts: [], inFlightTransactions: [] });
    // Asking again (a retried DELETE) answers closed again.
    expect((await holdings(w, true)).closed).toBe(true);

    // customers-kyc still says the customer is live (its delete commits after this call): the
    // ledger's own check refuses anyway.
    // Each refusal is taken as it is made, so none is left rejected and unobserved meanwhile.
    const refusals = [
      h.ledger.transferIn({ transfer: { platformId: w.platformId, sourceAccountId: w.bank.id, destinationAccountId: w.usd.id, amount: 100n } }),
      h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: w.usd.id, amount: 100n }),
      h.ledger.createIncomingUmaPayment({ platformId: w.platformId, customerId: w.customerId, senderUmaAddress: "$bob@other.example", receiverUmaAddress: "$alice@sandbox.uma.money", currency: "USD", amount: 100n }),
    ].map((call) => publicError(call));
    for (const r of await Promise.all(refusals)) expect(r).toMatchObject({ outcome: "NOT_FOUND", code: "USER_NOT_FOUND" });
    expect((await balance(w.platformId, w.usd.id)).balance).toBe(0n);
    expect((await holdings(w)).inFlightTransactions).toEqual([]);
  });

  it("opens no account for a closed customer, whatever event arrives later", async () => {
    const w = await world();
    await holdings(w, true);
    const c = h.customers.get(w.customerId)!;
    await h.deliver(
      "customer-accounts",
      create(CustomerEventSchema, {
        eventId: newId("Event"),
        occurredAt: timestampFromDate(h.clock.now()),
        platformId: w.platformId,
        payload: { case: "customerUpdated", value: { customer: { customerId: w.customerId, platformId: w.platformId, platformCustomerId: c.platformCustomerId, currencies: ["USD", "EUR", "MXN"] } } },
      }),
    );
    const accounts = (await h.ledger.listInternalAccounts({ platformId: w.platformId, owner: "CUSTOMER", customerId: w.customerId })).accounts;
    expect(accounts.map((a) => a.currency?.code)).not.toContain("MXN");
  });

  it("closes a customer the ledger has not heard of yet, and its accounts are never opened", async () => {
    const platformId = await h.newPlatform();
    const customerId = newId("Customer");
    expect((await h.ledger.getCustomerHoldings({ platformId, customerId, close: true })).closed).toBe(true);
    await h.deliver(
      "customer-accounts",
      create(CustomerEventSchema, {
        eventId: newId("Event"),
        occurredAt: timestampFromDate(h.clock.now()),
        platformId,
        payload: { case: "customerCreated", value: { customer: { customerId, platformId, platformCustomerId: "late", currencies: ["USD"] } } },
      }),
    );
    expect((await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId })).accounts).toEqual([]);
  });

  it("never closes a customer while a transfer racing the close leaves money in flight", async () => {
    for (let round = 0; round < 5; round++) {
      const w = await world();
      await h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: w.usd.id, amount: 1_000n });
      // Drain the account by a payout that completes, so the customer holds nothing but may start a transfer-in.
      const out = (await h.ledger.transferOut({ transfer: { platformId: w.platformId, sourceAccountId: w.usd.id, destinationAccountId: w.bank.id, amount: 1_000n } })).result!.transaction!;
      await h.outcome(w.platformId, out.id, "COMPLETED");
      const [transfer, close] = await Promise.allSettled([
        h.ledger.transferIn({ transfer: { platformId: w.platformId, sourceAccountId: w.bank.id, destinationAccountId: w.usd.id, amount: 500n } }),
        holdings(w, true),
      ]);
      expect(close.status).toBe("fulfilled");
      const closed = close.status === "fulfilled" && close.value.closed;
      // Exactly one wins: a closed customer has no transfer in flight; an open one has it.
      expect(closed).toBe(transfer.status === "rejected");
      if (closed) expect((await holdings(w)).inFlightTransactions).toEqual([]);
    }
  });

  it("sends a quote payout returned after the customer was closed to REFUND_SUSPENSE, not into the closed account", async () => {
    const w = await world();
    const eurExt = (await h.ledger.createExternalAccount({ platformId: w.platformId, owner: "CUSTOMER", customerId: w.customerId, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: "DE89370400440532013000" } })).account!;
    await h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: w.usd.id, amount: 1_000n });
    const tx = (
      await h.ledger.createQuoteTransaction({
        platformId: w.platformId,
        quoteId: newId("Quote"),
        customerId: w.customerId,
        source: { type: "INTERNAL_ACCOUNT", accountId: w.usd.id },
        destination: { type: "EXTERNAL_ACCOUNT", accountId: eurExt.id, paymentRail: "SEPA" },
        sendingCurrency: "USD",
        totalSendingAmount: 1_000n,
        receivingCurrency: "EUR",
        totalReceivingAmount: 850n,
        feesIncluded: 50n,
        exchangeRate: "1.11764705",
        description: "last payment",
        counterpartyInformation: {},
        expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + 5 * 60_000)),
      })
    ).transaction!;
    await h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: tx.id });
    await h.outcome(w.platformId, tx.id, "COMPLETED");
    expect((await holdings(w, true)).closed).toBe(true);

    await h.outcome(w.platformId, tx.id, "RETURNED", "RETURNED_BY_RECEIVING_BANK");
    await h.outcome(w.platformId, tx.id, "REFUND_COMPLETED");
    const after = (await h.ledger.getTransaction({ platformId: w.platformId, transactionId: tx.id })).transaction!;
    expect(after.refund).toMatchObject({ status: "FAILED", reason: "CUSTOMER_DELETED" });
    expect((await balance(w.platformId, w.usd.id)).balance).toBe(0n);
    const suspense = await h.db
      .forSchema<any>(service.schema)
      .selectFrom("accounts")
      .select("balance")
      .where("platform_id", "=", w.platformId)
      .where("type", "=", "REFUND_SUSPENSE")
      .where("currency", "=", "EUR")
      .executeTakeFirst();
    expect(suspense?.balance).toBe(850n);
    for (const [currency, sum] of await balanceSums(h.db, w.platformId)) expect(sum, currency).toBe(0n);
  });
});
