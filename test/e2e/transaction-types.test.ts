import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifiedCustomer } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { fund, iban, platformAccount, platformExternal } from "./ledger-helpers.js";

// supportedCurrencies[].enabledTransactionTypes is enforced where money moves: transfer-out and
// quotes need OUTGOING in their currency, transfer-in and incoming UMA payments INCOMING. A PATCH
// applies at once: the services and the gateway keep copies of the config, trusted only while the
// config board shows them current (kit clients/config-board.ts), and each step below follows a
// PATCH with reads whose copies are one version old.
describe.skipIf(skipReason())(`enabled transaction types (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let usd: { id: string };
  let bank: { id: string };
  let customer: { id: string; umaAddress: string };
  let customerUsd: { id: string };
  let payee: { id: string };

  const setTypes = async (types: string[]) => {
    const current = (await p.call("GET", "/config")).body.supportedCurrencies;
    const next = current.map((c: { currencyCode: string }) => (c.currencyCode === "USD" ? { ...c, enabledTransactionTypes: types } : c));
    expect((await p.call("PATCH", "/config", { supportedCurrencies: next })).status).toBe(200);
    // Read-your-writes through the gateway's copy of the config (the config board).
    const after = (await p.call("GET", "/config")).body.supportedCurrencies.find((c: { currencyCode: string }) => c.currencyCode === "USD");
    expect(after.enabledTransactionTypes).toEqual(types);
  };
  const transferOut = () => p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: bank.id }, amount: 100 });
  const transferIn = () => p.call("POST", "/transfer-in", { source: { accountId: bank.id }, destination: { accountId: usd.id }, amount: 100 });
  const quote = () =>
    p.call("POST", "/quotes", { source: { sourceType: "ACCOUNT", accountId: customerUsd.id }, destination: { destinationType: "ACCOUNT", accountId: payee.id }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 1_000 });
  const receive = () =>
    p.call("POST", "/sandbox/uma/receive", { senderUmaAddress: "$bob@sender.example", receiverUmaAddress: customer.umaAddress, receivingCurrencyCode: "USD", receivingCurrencyAmount: 100 });
  const refused = (res: { status: number; body: any }, type: string) => {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ code: "TRANSACTION_TYPE_NOT_ENABLED", details: { currency: "USD", transactionType: type } });
  };

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform();
    usd = await platformAccount(p);
    await fund(p, usd.id, 100_000);
    bank = await platformExternal(p, "000");
    customer = await verifiedCustomer(p);
    customerUsd = await eventually(async () => (await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}&currency=USD`)).body.data?.[0]);
    await fund(p, customerUsd.id, 100_000);
    const ext = await p.call("POST", "/customers/external-accounts", { customerId: customer.id, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000") } });
    expect(ext.status, JSON.stringify(ext.body)).toBe(201);
    payee = ext.body;
  }, 120_000);
  afterAll(async () => system?.stop());

  it("INCOMING only: transfer-out and quotes are refused with nothing held; transfer-in and incoming UMA go through", async () => {
    await setTypes(["INCOMING"]);
    const before = (await p.call("GET", `/platform/internal-accounts?currency=USD`)).body.data[0].balance.amount;
    refused(await transferOut(), "OUTGOING");
    refused(await quote(), "OUTGOING");
    expect((await p.call("GET", `/platform/internal-accounts?currency=USD`)).body.data[0].balance.amount).toBe(before);
    expect((await transferIn()).status).toBe(201);
    expect((await receive()).status).toBe(200);
  });

  it("OUTGOING only: transfer-in and incoming UMA are refused; transfer-out and quotes go through", async () => {
    await setTypes(["OUTGOING"]);
    refused(await transferIn(), "INCOMING");
    refused(await receive(), "INCOMING");
    expect((await transferOut()).status).toBe(201);
    expect((await quote()).status).toBe(201);
  });

  it("both again: everything goes through", async () => {
    await setTypes(["OUTGOING", "INCOMING"]);
    expect((await transferIn()).status).toBe(201);
    expect((await transferOut()).status).toBe(201);
  });
});
