import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId } from "@corridor/kit";
import { transactionToJson } from "@corridor/kit/rest-json";
import type { Transaction } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

/**
 * docs/agents.md: a transaction an agent started carries `agentId` everywhere — GetTransaction,
 * ListTransactions and every corridor.ledger.v1 event (the OUTGOING_PAYMENT_* webhooks' data) —
 * and the public JSON shows it; a platform's own transaction shows none.
 */
describe("agentId on the transactions an agent started", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  const agentId = newId("Agent");

  async function world() {
    const platformId = await h.newPlatform({ currencies: ["USD", "EUR"] });
    const customerId = await h.newCustomer(platformId, { currencies: ["USD", "EUR"] });
    const usd = (await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId })).accounts.find((a) => a.type === "INTERNAL_FIAT" && a.currency?.code === "USD")!;
    const eurExt = (await h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: "DE89370400440532013000" } })).account!;
    const usdExt = (await h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "USD", accountInfo: usdInfo() })).account!;
    await h.ledger.fundInternalAccount({ platformId, accountId: usd.id, amount: 10_000n });
    return { platformId, customerId, usd, eurExt, usdExt };
  }

  const quoteTx = (w: Awaited<ReturnType<typeof world>>, over: Record<string, unknown> = {}) =>
    h.ledger.createQuoteTransaction({
      platformId: w.platformId,
      quoteId: newId("Quote"),
      customerId: w.customerId,
      source: { type: "INTERNAL_ACCOUNT", accountId: w.usd.id },
      destination: { type: "EXTERNAL_ACCOUNT", accountId: w.eurExt.id, paymentRail: "SEPA" },
      sendingCurrency: "USD",
      totalSendingAmount: 1000n,
      receivingCurrency: "EUR",
      totalReceivingAmount: 850n,
      feesIncluded: 50n,
      exchangeRate: "1.11764705",
      counterpartyInformation: { FULL_NAME: "Ada Lovelace" },
      expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + 5 * 60_000)),
      ...over,
    });

  const eventsOf = async (transactionId: string): Promise<{ type: string; tx: Transaction }[]> =>
    (await h.ledgerEvents()).flatMap((e) =>
      e.payload.case === "transactionChanged" && e.payload.value.transaction?.id === transactionId ? [{ type: e.eventType, tx: e.payload.value.transaction }] : [],
    );

  it("a quote's transaction: on create, GET, list, every OUTGOING_PAYMENT_* event through COMPLETED, and in the public JSON", async () => {
    const w = await world();
    const created = (await quoteTx(w, { agentId })).transaction!;
    expect(created.agentId).toBe(agentId);
    await h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: created.id });
    await h.outcome(w.platformId, created.id, "COMPLETED");

    const got = (await h.ledger.getTransaction({ platformId: w.platformId, transactionId: created.id })).transaction!;
    expect(got).toMatchObject({ status: "COMPLETED", agentId });
    const listed = (await h.ledger.listTransactions({ platformId: w.platformId })).transactions.find((t) => t.id === created.id)!;
    expect(listed.agentId).toBe(agentId);
    const byCustomer = (await h.ledger.listTransactions({ platformId: w.platformId, customerId: w.customerId })).transactions.find((t) => t.id === created.id)!;
    expect(byCustomer.agentId).toBe(agentId);

    const events = await eventsOf(created.id);
    expect(events.map((e) => e.type)).toEqual(["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_PROCESSING", "OUTGOING_PAYMENT_COMPLETED"]);
    for (const e of events) expect(e.tx.agentId, e.type).toBe(agentId);

    // What GET /transactions/{id}, the lists and the webhooks' data show (the kit's one mapper).
    expect(transactionToJson(got)).toMatchObject({ id: created.id, agentId });
    for (const e of events) expect(transactionToJson(e.tx)).toMatchObject({ agentId });
  });

  it("an expired agent quote's OUTGOING_PAYMENT_EXPIRED event still carries the agent", async () => {
    const w = await world();
    const created = (await quoteTx(w, { agentId })).transaction!;
    await h.ledger.expireQuoteTransaction({ platformId: w.platformId, transactionId: created.id });
    const expired = (await eventsOf(created.id)).find((e) => e.type === "OUTGOING_PAYMENT_EXPIRED")!;
    expect(expired.tx).toMatchObject({ status: "EXPIRED", agentId });
  });

  it("a transfer-out an agent started carries it on the answer, GET and its events", async () => {
    const w = await world();
    const tx = (await h.ledger.transferOut({ transfer: { platformId: w.platformId, sourceAccountId: w.usd.id, destinationAccountId: w.usdExt.id, amount: 500n, agentId, customerId: w.customerId } })).result!.transaction!;
    expect(tx.agentId).toBe(agentId);
    expect((await h.ledger.getTransaction({ platformId: w.platformId, transactionId: tx.id })).transaction!.agentId).toBe(agentId);
    const events = await eventsOf(tx.id);
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect(e.tx.agentId, e.type).toBe(agentId);
  });

  it("a platform's own quote transaction carries no agentId, and its JSON has no agentId key", async () => {
    const w = await world();
    const created = (await quoteTx(w)).transaction!;
    expect(created.agentId).toBe("");
    expect(transactionToJson(created)).not.toHaveProperty("agentId");
  });
});
