import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId, topics } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

/**
 * Issue 28: the ledger puts each event on the topic of the services that act on it
 * (docs/events.md, "Who acts on what"): a transfer's events reach notifications only, a quote's
 * also quotes-fx, an agent's also agents; all events of one transaction share one topic (order).
 */
describe("the ledger's events, each on the topic of its audience", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  async function world() {
    const platformId = await h.newPlatform({ currencies: ["USD", "EUR"] });
    const customerId = await h.newCustomer(platformId, { currencies: ["USD", "EUR"] });
    const usd = (await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId })).accounts.find((a) => a.type === "INTERNAL_FIAT" && a.currency?.code === "USD")!;
    const eurExt = (await h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: "DE89370400440532013000" } })).account!;
    const usdExt = (await h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "USD", accountInfo: usdInfo() })).account!;
    await h.ledger.fundInternalAccount({ platformId, accountId: usd.id, amount: 10_000n });
    return { platformId, customerId, usd, eurExt, usdExt };
  }

  /** transaction id → the topics of its events, and the topics of the account events since `from`. */
  const routed = async (from: number) => {
    const rows = (await h.ledgerEventsWithTopics()).slice(from);
    const byTx = new Map<string, Set<string>>();
    const accounts = new Set<string>();
    for (const { topic, event } of rows) {
      if (event.payload.case === "transactionChanged") {
        const id = event.payload.value.transaction!.id;
        byTx.set(id, (byTx.get(id) ?? new Set()).add(topic));
      } else accounts.add(topic);
    }
    return { byTx, accounts };
  };

  const quoteTx = (w: Awaited<ReturnType<typeof world>>, agentId = "") =>
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
      agentId,
    });

  it("a transfer-out through COMPLETED: its events on corridor.ledger.transactions.v1 only, the balances on .accounts.v1", async () => {
    const w = await world();
    const from = (await h.ledgerEventsWithTopics()).length;
    const tx = (await h.ledger.transferOut({ transfer: { platformId: w.platformId, sourceAccountId: w.usd.id, destinationAccountId: w.usdExt.id, amount: 500n, customerId: w.customerId } })).result!.transaction!;
    await h.outcome(w.platformId, tx.id, "PROCESSING");
    await h.outcome(w.platformId, tx.id, "COMPLETED");
    const { byTx, accounts } = await routed(from);
    expect([...byTx.get(tx.id)!]).toEqual([topics.ledgerTransactions]);
    expect([...accounts]).toEqual([topics.ledgerAccounts]);
  });

  it("an agent's transfer on .agent-transactions.v1, a quote's on .quote-transactions.v1, an agent's quote on .agent-quote-transactions.v1", async () => {
    const w = await world();
    const from = (await h.ledgerEventsWithTopics()).length;
    const agentId = newId("Agent");
    const byAgent = (await h.ledger.transferOut({ transfer: { platformId: w.platformId, sourceAccountId: w.usd.id, destinationAccountId: w.usdExt.id, amount: 100n, agentId, customerId: w.customerId } })).result!.transaction!;
    await h.outcome(w.platformId, byAgent.id, "FAILED");
    const quote = (await quoteTx(w)).transaction!;
    await h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: quote.id });
    await h.outcome(w.platformId, quote.id, "COMPLETED");
    const agentQuote = (await quoteTx(w, agentId)).transaction!;
    await h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: agentQuote.id });
    const { byTx } = await routed(from);
    expect([...byTx.get(byAgent.id)!]).toEqual([topics.ledgerAgentTransactions]);
    expect([...byTx.get(quote.id)!]).toEqual([topics.ledgerQuoteTransactions]);
    expect([...byTx.get(agentQuote.id)!]).toEqual([topics.ledgerAgentQuoteTransactions]);
    // And nothing goes to the topic of before.
    const written = await h.outboxTopics();
    expect(written.length).toBeGreaterThan(0);
    expect(written).not.toContain(topics.ledger);
  });
});
