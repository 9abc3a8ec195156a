import { newId } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { QuotesFxDatabase } from "../src/data/tables.js";
import { expectPublicError, fieldsOf, startHarness, usdOnly, type Harness } from "./harness.js";

const PLATFORM = "Platform:agent-scope-1";

/** docs/agents.md: quotes-fx stamps the agent on the quote and its transaction and keeps an agent to its customer. */
describe("quotes created by an agent", () => {
  let h: Harness;
  const customer = newId("Customer");
  const otherCustomer = newId("Customer");
  const agent = newId("Agent");
  const otherAgent = newId("Agent");
  const account = newId("InternalAccount");
  const wallet = newId("InternalAccount");
  const othersAccount = newId("InternalAccount");
  const payee = newId("ExternalAccount");
  const othersPayee = newId("ExternalAccount");
  const platformPayee = newId("ExternalAccount");

  beforeAll(async () => {
    h = await startHarness();
    h.platforms.set(PLATFORM, usdOnly());
    h.internal.set(account, { id: account, platformId: PLATFORM, customerId: customer, type: "INTERNAL_FIAT", currency: "USD", available: 1_000_000n });
    h.internal.set(wallet, { id: wallet, platformId: PLATFORM, customerId: customer, type: "EMBEDDED_WALLET", currency: "USD", available: 1_000_000n });
    h.internal.set(othersAccount, { id: othersAccount, platformId: PLATFORM, customerId: otherCustomer, type: "INTERNAL_FIAT", currency: "USD", available: 1_000_000n });
    h.external.set(payee, { id: payee, platformId: PLATFORM, customerId: customer, status: "ACTIVE", currency: "EUR", accountType: "IBAN" });
    h.external.set(othersPayee, { id: othersPayee, platformId: PLATFORM, customerId: otherCustomer, status: "ACTIVE", currency: "EUR", accountType: "IBAN" });
    h.external.set(platformPayee, { id: platformPayee, platformId: PLATFORM, customerId: "", status: "ACTIVE", currency: "EUR", accountType: "IBAN" });
  });
  afterAll(async () => h.close());

  const agentQuote = (over: Record<string, unknown> = {}) => ({
    platformId: PLATFORM,
    source: { sourceType: "ACCOUNT", accountId: account },
    destination: { destinationType: "ACCOUNT", accountId: payee },
    lockedCurrencySide: "SENDING",
    lockedCurrencyAmount: 10_000n,
    counterpartyInformation: { FULL_NAME: "Grace Hopper" },
    agentId: agent,
    actingCustomerId: customer,
    ...over,
  });

  it("stamps agentId on the quote, its stored row and the ledger transaction, and answers it on GET", async () => {
    const { quote } = await h.client.createQuote(agentQuote());
    expect(quote).toMatchObject({ agentId: agent, status: "PENDING", source: { accountId: account, customerId: customer } });
    expect(h.transactions.get(quote!.transactionId)!.agentId).toBe(agent);
    const row = await h.db.forSchema<QuotesFxDatabase>("quotes_fx").selectFrom("quotes").select("agent_id").where("id", "=", quote!.id).executeTakeFirstOrThrow();
    expect(row.agent_id).toBe(agent);
    expect((await h.client.getQuote({ platformId: PLATFORM, quoteId: quote!.id, agentId: agent })).quote).toEqual(quote);
    // The platform sees its agents' quotes too.
    expect((await h.client.getQuote({ platformId: PLATFORM, quoteId: quote!.id })).quote!.agentId).toBe(agent);
  });

  it("a platform quote carries no agentId, on the quote or the transaction", async () => {
    const { quote } = await h.client.createQuote(agentQuote({ agentId: "", actingCustomerId: "" }));
    expect(quote!.agentId).toBe("");
    expect(h.transactions.get(quote!.transactionId)!.agentId).toBe("");
  });

  it("GET and execute of a quote another agent (or the platform) created are 404 QUOTE_NOT_FOUND, and nothing executes", async () => {
    const mine = (await h.client.createQuote(agentQuote())).quote!;
    const platforms = (await h.client.createQuote(agentQuote({ agentId: "", actingCustomerId: "" }))).quote!;
    for (const q of [mine, platforms]) {
      await expectPublicError(h.client.getQuote({ platformId: PLATFORM, quoteId: q.id, agentId: otherAgent }), "NOT_FOUND", "QUOTE_NOT_FOUND");
      await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: q.id, agentId: otherAgent }), "NOT_FOUND", "QUOTE_NOT_FOUND");
      expect(h.transactions.get(q.transactionId)!.executions).toBe(0);
    }
    const done = await h.client.executeQuote({ platformId: PLATFORM, quoteId: mine.id, agentId: agent });
    expect(done.quote).toMatchObject({ status: "PROCESSING", agentId: agent });
    expect(h.transactions.get(mine.transactionId)!.executions).toBe(1);
  });

  it("executes at creation with immediatelyExecute, still stamped with the agent", async () => {
    const { quote } = await h.client.createQuote(agentQuote({ immediatelyExecute: true }));
    expect(quote).toMatchObject({ status: "PROCESSING", agentId: agent });
    expect(h.transactions.get(quote!.transactionId)).toMatchObject({ executions: 1, agentId: agent });
  });

  it("another customer's source account is 404 INTERNAL_ACCOUNT_NOT_FOUND, as if it did not exist", async () => {
    const err = await expectPublicError(h.client.createQuote(agentQuote({ source: { sourceType: "ACCOUNT", accountId: othersAccount } })), "NOT_FOUND", "INTERNAL_ACCOUNT_NOT_FOUND");
    const missing = newId("InternalAccount");
    const unknown = await expectPublicError(h.client.createQuote(agentQuote({ source: { sourceType: "ACCOUNT", accountId: missing } })), "NOT_FOUND", "INTERNAL_ACCOUNT_NOT_FOUND");
    expect(err.message.replace(othersAccount, "X")).toBe(unknown.message.replace(missing, "X"));
  });

  it("a source.customerId other than the customer acted for is 404 USER_NOT_FOUND", async () => {
    await expectPublicError(h.client.createQuote(agentQuote({ source: { sourceType: "ACCOUNT", accountId: account, customerId: otherCustomer } })), "NOT_FOUND", "USER_NOT_FOUND");
    const ok = await h.client.createQuote(agentQuote({ source: { sourceType: "ACCOUNT", accountId: account, customerId: customer } }));
    expect(ok.quote!.agentId).toBe(agent);
  });

  it("refuses an embedded-wallet source with 400 AGENT_WALLET_SOURCE_NOT_SUPPORTED and asks auth-sessions for no challenge", async () => {
    const before = h.challenges.size;
    const txs = h.transactions.size;
    await expectPublicError(h.client.createQuote(agentQuote({ source: { sourceType: "ACCOUNT", accountId: wallet } })), "INVALID", "AGENT_WALLET_SOURCE_NOT_SUPPORTED");
    expect(h.challenges.size).toBe(before);
    expect(h.transactions.size).toBe(txs);
  });

  it("refuses a REALTIME_FUNDING source with 400 INVALID_INPUT on source.sourceType", async () => {
    const err = await expectPublicError(h.client.createQuote(agentQuote({ source: { sourceType: "REALTIME_FUNDING", customerId: customer, currency: "USD" } })), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(err)).toEqual(["source.sourceType"]);
  });

  it("pays only to the customer's own external accounts: another customer's or the platform's is 404 EXTERNAL_ACCOUNT_NOT_FOUND", async () => {
    await expectPublicError(h.client.createQuote(agentQuote({ destination: { destinationType: "ACCOUNT", accountId: othersPayee } })), "NOT_FOUND", "EXTERNAL_ACCOUNT_NOT_FOUND");
    await expectPublicError(h.client.createQuote(agentQuote({ destination: { destinationType: "ACCOUNT", accountId: platformPayee } })), "NOT_FOUND", "EXTERNAL_ACCOUNT_NOT_FOUND");
    // The platform itself may still pay there.
    const { quote } = await h.client.createQuote(agentQuote({ agentId: "", actingCustomerId: "", destination: { destinationType: "ACCOUNT", accountId: platformPayee } }));
    expect(quote!.status).toBe("PENDING");
  });

  it("may pay a UMA address, but not with a receiver lookup made for another customer (404 LOOKUP_REQUEST_NOT_FOUND)", async () => {
    const lookupFor = async (customerId: string) =>
      (await h.client.lookupUmaReceiver({ platformId: PLATFORM, receiverUmaAddress: "$success.eur@sandbox.uma.money", customerId })).lookup!.id;
    const uma = (lookupId: string) =>
      agentQuote({ destination: { destinationType: "UMA_ADDRESS", umaAddress: "$success.eur@sandbox.uma.money", currency: "EUR" }, lookupId, senderCustomerInfo: { FULL_NAME: "Ada Lovelace", BIRTH_DATE: "1815-12-10", NATIONALITY: "GB" } });
    const { quote } = await h.client.createQuote(uma(await lookupFor(customer)));
    expect(quote).toMatchObject({ agentId: agent, destination: { destinationType: "UMA_ADDRESS" } });
    await expectPublicError(h.client.createQuote(uma(await lookupFor(otherCustomer))), "NOT_FOUND", "LOOKUP_REQUEST_NOT_FOUND");
  });

  it("an agentId without the customer it acts for is 400 INVALID_INPUT (an agent's quote is always customer-scoped)", async () => {
    const err = await expectPublicError(h.client.createQuote(agentQuote({ actingCustomerId: "" })), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(err)).toEqual(["actingCustomerId"]);
  });

  it("scopes an Idempotency-Key to the agent: two agents with one key make two quotes; the same agent replays", async () => {
    const a = await h.client.createQuote({ ...agentQuote(), idempotencyKey: "agent-key-1" });
    const b = await h.client.createQuote({ ...agentQuote({ agentId: otherAgent }), idempotencyKey: "agent-key-1" });
    expect(b.replayed).toBe(false);
    expect(b.quote!.id).not.toBe(a.quote!.id);
    expect(b.quote!.agentId).toBe(otherAgent);
    const again = await h.client.createQuote({ ...agentQuote(), idempotencyKey: "agent-key-1" });
    expect(again).toMatchObject({ replayed: true, quote: a.quote });
  });
});
