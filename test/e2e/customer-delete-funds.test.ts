import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifiedCustomer } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { advanceClock, customerBalance, fund, txStatus, usdAccountInfo } from "./ledger-helpers.js";

// Issue 14, defect 4: a customer holding money cannot be deleted (409 CUSTOMER_HAS_FUNDS with the
// amounts per account), and money for a deleted customer is refused, never parked in its account.

type Json = any;

describe.skipIf(skipReason())(`deleting a customer that holds money (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform({ name: "customer delete e2e" });
  }, 120_000);
  afterAll(async () => system?.stop());

  async function customerWithUsd() {
    const customer = await verifiedCustomer(p, { currencies: ["USD"] });
    const usd = await eventually(async () => {
      const res = await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}&currency=USD`);
      return (res.body.data ?? []).find((a: Json) => a.type === "INTERNAL_FIAT");
    });
    const bank = async (suffix: string) => {
      const res = await p.call("POST", "/customers/external-accounts", { customerId: customer.id, currency: "USD", accountInfo: usdAccountInfo(suffix) });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id as string;
    };
    return { customer, usd, bank };
  }

  const payout = async (from: string, to: string, amount: number) => {
    const res = await p.call("POST", "/transfer-out", { source: { accountId: from }, destination: { accountId: to }, amount });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };

  it("refuses to delete a customer holding 10,000 with a 3,000 payout in flight, then deletes it once the money is out, and refuses money after", async () => {
    const { customer, usd, bank } = await customerWithUsd();
    await fund(p, usd.id, 10_000);
    // Account numbers ending 005 stay PROCESSING for 30 sandbox seconds, then fail.
    const slow = await payout(usd.id, await bank("005"), 3_000);

    const refused = await p.call("DELETE", `/customers/${customer.id}`);
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.headers.get("x-should-retry")).toBe("false");
    expect(refused.body.code).toBe("CUSTOMER_HAS_FUNDS");
    expect(refused.body.message).toContain(`100.00 USD in ${usd.id} (30.00 USD held)`);
    expect(refused.body.details.accounts).toEqual([expect.objectContaining({ accountId: usd.id, currency: "USD", balance: 10_000, held: 3_000, available: 7_000 })]);
    expect(refused.body.details.inFlightTransactions).toEqual([expect.objectContaining({ id: slow.id, type: "OUTGOING", amount: 3_000, currency: "USD" })]);
    expect((await p.call("GET", `/customers/${customer.id}`)).body.isDeleted).toBe(false);

    // The payout fails: its hold comes back into the (still live) account, and deletion is still refused.
    await eventually(async () => {
      await advanceClock(p, 31);
      const t = await p.call("GET", `/transactions/${slow.id}`);
      return t.body.status === "FAILED" ? t.body : undefined;
    }, 30_000);
    expect(await customerBalance(p, customer.id, usd.id)).toBe(10_000);
    const stillRefused = await p.call("DELETE", `/customers/${customer.id}`);
    expect(stillRefused.status).toBe(409);
    expect(stillRefused.body.details.accounts).toEqual([expect.objectContaining({ balance: 10_000, held: 0 })]);
    expect(stillRefused.body.details.inFlightTransactions).toEqual([]);

    // Everything out, settled: now it can go.
    const payee = await bank("000");
    const out = await payout(usd.id, payee, 10_000);
    await txStatus(p, out.id, "COMPLETED");
    const deleted = await p.call("DELETE", `/customers/${customer.id}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body.isDeleted).toBe(true);

    // Money for the deleted customer is refused; its account stays at 0.
    const funding = await p.call("POST", `/sandbox/internal-accounts/${usd.id}/fund`, { amount: 500 });
    expect(funding.status, JSON.stringify(funding.body)).toBe(404);
    const pull = await p.call("POST", "/transfer-in", { source: { accountId: payee }, destination: { accountId: usd.id }, amount: 500 });
    expect(pull.status, JSON.stringify(pull.body)).toBe(404);
    const uma = await p.call("POST", "/sandbox/uma/receive", {
      senderUmaAddress: "$bob@sender.example",
      receiverUmaAddress: customer.umaAddress,
      receivingCurrencyCode: "USD",
      receivingCurrencyAmount: 500,
    });
    expect(uma.status, JSON.stringify(uma.body)).toBe(404);
    expect(await customerBalance(p, customer.id, usd.id)).toBe(0);
  });

  it("deletes a customer that never held money at once", async () => {
    const { customer } = await customerWithUsd();
    const res = await p.call("DELETE", `/customers/${customer.id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await p.call("DELETE", `/customers/${customer.id}`)).status).toBe(410);
  });
});
