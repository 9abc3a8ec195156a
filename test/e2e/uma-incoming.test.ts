import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { individual } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { advanceClock, customerBalance, iban, txStatus, usdAccountInfo } from "./ledger-helpers.js";

// Issue 5: incoming UMA payments and the platform approval exchange (decisions §8) through the gateway.

type Reply = { status: number; body?: unknown };

/** A platform's webhook endpoint on loopback: verifies every signature and answers per test. */
async function startReceiver() {
  const received: { type: string; data: any; verified: boolean }[] = [];
  let secret = "";
  let answer: (event: { type: string; data: any }) => Reply = () => ({ status: 200 });
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      let event: any;
      let verified = false;
      try {
        event = new Webhook(secret).verify(body, {
          "webhook-id": String(req.headers["webhook-id"]),
          "webhook-timestamp": String(req.headers["webhook-timestamp"]),
          "webhook-signature": String(req.headers["webhook-signature"]),
        });
        verified = true;
      } catch {
        event = JSON.parse(body);
      }
      received.push({ type: event.type, data: event.data, verified });
      const r = verified ? answer(event) : { status: 401 };
      res.writeHead(r.status, { "content-type": "application/json" }).end(r.body === undefined ? "" : JSON.stringify(r.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    setSecret: (s: string) => (secret = s),
    answer: (f: typeof answer) => (answer = f),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe.skipIf(skipReason())(`incoming UMA payments and the approval exchange (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let customer: { id: string; umaAddress: string; platformCustomerId: string };
  let usd: { id: string };

  async function newCustomer(platform: Caller) {
    const created = await platform.call("POST", "/customers", individual({ currencies: ["USD"] }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const accounts = await eventually(async () => {
      const res = await platform.call("GET", `/customers/internal-accounts?customerId=${created.body.id}`);
      return res.body.data?.length === 2 ? res.body.data : undefined;
    });
    return { customer: created.body, usd: accounts.find((a: any) => a.type === "INTERNAL_FIAT") };
  }

  const receive = (platform: Caller, umaAddress: string, amount = 12_345, headers: Record<string, string> = {}) =>
    platform.call("POST", "/sandbox/uma/receive", { senderUmaAddress: "$bob@sender.example", receiverUmaAddress: umaAddress, receivingCurrencyCode: "USD", receivingCurrencyAmount: amount }, headers);

  beforeAll(async () => {
    system = await startTestSystem();
    receiver = await startReceiver();
    p = await system.createPlatform();
    ({ customer, usd } = await newCustomer(p));
    receiver.setSecret((await p.call("GET", "/config/webhook-secret")).body.secret);
    expect((await p.call("PATCH", "/config", { webhookEndpoint: receiver.url })).status).toBe(200);
    // notifications learns the endpoint from the PlatformConfigUpdated event, asynchronously.
    await eventually(async () => {
      const res = await p.call("POST", "/sandbox/webhooks/test");
      return res.status === 200 && res.body.response_status === 200 ? res.body : undefined;
    });
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
    await receiver?.close();
  });

  it("200 approves at once: COMPLETED, the customer's USD account credited, the webhook signed and carrying the Transaction", async () => {
    receiver.answer(() => ({ status: 200, body: { receiverCustomerInfo: { FULL_NAME: "Alice Smith" } } }));
    const before = await customerBalance(p, customer.id, usd.id);
    const res = await receive(p, customer.umaAddress);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      type: "INCOMING",
      status: "COMPLETED",
      customerId: customer.id,
      platformCustomerId: customer.platformCustomerId,
      destination: { destinationType: "ACCOUNT", accountId: usd.id, currency: "USD" },
      receivedAmount: { amount: 12_345, currency: { code: "USD" } },
    });
    expect(res.body.settledAt).toBeDefined();
    expect(await customerBalance(p, customer.id, usd.id)).toBe(before + 12_345);
    const hook = receiver.received.findLast((r) => r.type === "INCOMING_PAYMENT_PENDING")!;
    expect(hook.verified).toBe(true);
    expect(hook.data).toMatchObject({ id: res.body.id, status: "PENDING", type: "INCOMING", receivedAmount: { amount: 12_345 }, requestedReceiverCustomerInfoFields: [] });
    const shown = (await p.call("GET", `/transactions/${res.body.id}`)).body;
    expect(shown).toMatchObject({ status: "COMPLETED", source: { sourceType: "UMA_ADDRESS", umaAddress: "$bob@sender.example" }, receiverCustomerInfo: { FULL_NAME: "Alice Smith" } });
    // The sender's address is on the source; the destination is the customer's account.
    expect(shown.destination.umaAddress).toBeUndefined();
    expect(hook.data.source).toEqual({ sourceType: "UMA_ADDRESS", umaAddress: "$bob@sender.example", currency: "USD" });
  });

  it("a default USD UMA deposit account: destination is it; approval credits the internal account and pays the same amount onward, which completes", async () => {
    receiver.answer(() => ({ status: 202 }));
    const { customer: c, usd: cUsd } = await newCustomer(p);
    const ext = await p.call("POST", "/customers/external-accounts", { customerId: c.id, currency: "USD", accountInfo: usdAccountInfo("000"), defaultUmaDepositAccount: true });
    expect(ext.status, JSON.stringify(ext.body)).toBe(201);
    const before = await customerBalance(p, c.id, cUsd.id);
    const res = await receive(p, c.umaAddress, 900);
    expect(res.body).toMatchObject({ status: "PENDING", destination: { destinationType: "ACCOUNT", accountId: ext.body.id } });
    const approved = await p.call("POST", `/transactions/${res.body.id}/approve`, { receiverCustomerInfo: { FULL_NAME: "Carol Jones" } });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ status: "COMPLETED", destination: { accountId: ext.body.id } });
    const list = await p.call("GET", `/transactions?customerId=${c.id}&type=OUTGOING`);
    const payout = list.body.data.find((t: any) => t.description === `Onward payout of incoming UMA payment ${res.body.id}`);
    expect(payout, JSON.stringify(list.body)).toMatchObject({ source: { accountId: cUsd.id }, destination: { accountId: ext.body.id }, receivedAmount: { amount: 900 } });
    await txStatus(p, payout.id, "COMPLETED");
    expect(await customerBalance(p, c.id, cUsd.id)).toBe(before);
  });

  it("without a default deposit account the approved money is credited to the internal account and nothing goes out", async () => {
    receiver.answer(() => ({ status: 200 }));
    const before = await customerBalance(p, customer.id, usd.id);
    const res = await receive(p, customer.umaAddress, 321);
    expect(res.body).toMatchObject({ status: "COMPLETED", destination: { accountId: usd.id } });
    expect(await customerBalance(p, customer.id, usd.id)).toBe(before + 321);
    expect((await p.call("GET", `/transactions?customerId=${customer.id}&type=OUTGOING`)).body.data).toEqual([]);
  });

  it("202 then POST /transactions/{id}/approve: PENDING, then COMPLETED and credited; approving again → 409 not retryable", async () => {
    receiver.answer(() => ({ status: 202 }));
    const before = await customerBalance(p, customer.id, usd.id);
    const res = await receive(p, customer.umaAddress, 500);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe("PENDING");
    expect(await customerBalance(p, customer.id, usd.id)).toBe(before);
    const approved = await p.call("POST", `/transactions/${res.body.id}/approve`, { receiverCustomerInfo: { FULL_NAME: "Alice Smith" } });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ id: res.body.id, status: "COMPLETED", receiverCustomerInfo: { FULL_NAME: "Alice Smith" } });
    expect((await p.call("GET", `/transactions/${res.body.id}`)).body.receiverCustomerInfo).toEqual({ FULL_NAME: "Alice Smith" });
    expect(await customerBalance(p, customer.id, usd.id)).toBe(before + 500);
    const again = await p.call("POST", `/transactions/${res.body.id}/approve`, {});
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL");
    expect(again.headers.get("x-should-retry")).toBe("false");
    expect(await customerBalance(p, customer.id, usd.id)).toBe(before + 500);
  });

  it("202 then POST /transactions/{id}/reject: REJECTED, nothing credited; rejecting again → 409", async () => {
    receiver.answer(() => ({ status: 202 }));
    const before = await customerBalance(p, customer.id, usd.id);
    const res = await receive(p, customer.umaAddress, 700);
    expect(res.body.status).toBe("PENDING");
    const rejected = await p.call("POST", `/transactions/${res.body.id}/reject`, { reason: "receiver unknown to us" });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect(rejected.body).toMatchObject({ status: "REJECTED", failureDetail: "receiver unknown to us" });
    expect(await customerBalance(p, customer.id, usd.id)).toBe(before);
    expect((await p.call("POST", `/transactions/${res.body.id}/reject`, {})).status).toBe(409);
  });

  it("202 and no decision within the approval window (sandbox clock): FAILED PAYMENT_APPROVAL_TIMED_OUT, then approve → 409", async () => {
    receiver.answer(() => ({ status: 202 }));
    const before = await customerBalance(p, customer.id, usd.id);
    const res = await receive(p, customer.umaAddress, 900);
    expect(res.body.status).toBe("PENDING");
    await advanceClock(p, 6);
    const failed = await eventually(async () => {
      const t = await p.call("GET", `/transactions/${res.body.id}`);
      return t.body.status === "FAILED" ? t.body : undefined;
    }, 10_000);
    expect(failed.failureReason).toBe("PAYMENT_APPROVAL_TIMED_OUT");
    const late = await p.call("POST", `/transactions/${res.body.id}/approve`, {});
    expect(late.status).toBe(409);
    expect(await customerBalance(p, customer.id, usd.id)).toBe(before);
  });

  it("a 500 reply fails the payment with PAYMENT_APPROVAL_WEBHOOK_ERROR and credits nothing", async () => {
    receiver.answer(() => ({ status: 500 }));
    const before = await customerBalance(p, customer.id, usd.id);
    const res = await receive(p, customer.umaAddress, 300);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: "FAILED", failureReason: "PAYMENT_APPROVAL_WEBHOOK_ERROR" });
    expect(await customerBalance(p, customer.id, usd.id)).toBe(before);
  });

  it("an unknown receiver UMA address → 404 UMA_NOT_FOUND; a repeated Idempotency-Key replays the first answer", async () => {
    const unknown = await receive(p, "$nobody@sandbox.uma.money");
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("UMA_NOT_FOUND");
    receiver.answer(() => ({ status: 200 }));
    const before = await customerBalance(p, customer.id, usd.id);
    const first = await receive(p, customer.umaAddress, 250, { "Idempotency-Key": "uma-receive-1" });
    const second = await receive(p, customer.umaAddress, 250, { "Idempotency-Key": "uma-receive-1" });
    expect(second.status).toBe(200);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(second.body.status).toBe("COMPLETED");
    expect(await customerBalance(p, customer.id, usd.id)).toBe(before + 250);
  });

  it("a replay answers the first response as it was, not the payment as it stands now (decisions §3)", async () => {
    receiver.answer(() => ({ status: 202 }));
    const first = await receive(p, customer.umaAddress, 260, { "Idempotency-Key": "uma-receive-2" });
    expect(first.body.status).toBe("PENDING");
    expect((await p.call("POST", `/transactions/${first.body.id}/approve`, { receiverCustomerInfo: { FULL_NAME: "Alice Smith" } })).status).toBe(200);
    const replay = await receive(p, customer.umaAddress, 260, { "Idempotency-Key": "uma-receive-2" });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect((await p.call("GET", `/transactions/${first.body.id}`)).body.status).toBe("COMPLETED");
    const reused = await receive(p, customer.umaAddress, 261, { "Idempotency-Key": "uma-receive-2" });
    expect(reused.status).toBe(422);
  });

  it("deposit rule: the customer's internal account in the receiving currency, also when a default UMA deposit (external) account exists", async () => {
    const ext = await p.call("POST", "/customers/external-accounts", {
      customerId: customer.id,
      currency: "EUR",
      defaultUmaDepositAccount: true,
      accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000") },
    });
    expect(ext.status, JSON.stringify(ext.body)).toBe(201);
    receiver.answer(() => ({ status: 200 }));
    const res = await receive(p, customer.umaAddress, 100);
    expect(res.body).toMatchObject({ status: "COMPLETED", destination: { destinationType: "ACCOUNT", accountId: usd.id } });
  });

  it("receiver fields the platform's config requires are asked in the webhook and required to approve", async () => {
    const asker = await system.createPlatform();
    const { customer: c, usd: account } = await newCustomer(asker);
    const cfg = (await asker.call("GET", "/config")).body;
    const currencies = cfg.supportedCurrencies.map((k: { currencyCode: string }) => (k.currencyCode === "USD" ? { ...k, providerRequiredCustomerFields: ["FULL_NAME", "BIRTH_DATE"] } : k));
    expect((await asker.call("PATCH", "/config", { webhookEndpoint: receiver.url, supportedCurrencies: currencies })).status).toBe(200);
    receiver.setSecret((await asker.call("GET", "/config/webhook-secret")).body.secret);
    try {
      // A 200 without every requested field is not an approval.
      receiver.answer(() => ({ status: 200, body: { receiverCustomerInfo: { FULL_NAME: "Alice Smith" } } }));
      const lacking = await receive(asker, c.umaAddress, 700);
      expect(lacking.body).toMatchObject({ status: "FAILED", failureReason: "PAYMENT_APPROVAL_WEBHOOK_ERROR" });
      // Event webhooks of other payments reach the same receiver asynchronously: pick this one's request.
      const asked = receiver.received.find((r) => r.type === "INCOMING_PAYMENT_PENDING" && r.data.id === lacking.body.id && r.data.status === "PENDING" && "requestedReceiverCustomerInfoFields" in r.data);
      expect(asked!.data.requestedReceiverCustomerInfoFields).toEqual(["FULL_NAME", "BIRTH_DATE"]);

      receiver.answer(() => ({ status: 202 }));
      const res = await receive(asker, c.umaAddress, 800);
      expect(res.body.status).toBe("PENDING");
      const refused = await asker.call("POST", `/transactions/${res.body.id}/approve`, { receiverCustomerInfo: { FULL_NAME: "Alice Smith" } });
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe("MISSING_MANDATORY_USER_INFO");
      expect(refused.body.details.errors.map((e: { field: string }) => e.field)).toEqual(["body.receiverCustomerInfo.BIRTH_DATE"]);
      expect((await asker.call("GET", `/transactions/${res.body.id}`)).body.status).toBe("PENDING");
      const info = { FULL_NAME: "Alice Smith", BIRTH_DATE: "1990-01-01" };
      const approved = await asker.call("POST", `/transactions/${res.body.id}/approve`, { receiverCustomerInfo: info });
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      expect(approved.body).toMatchObject({ status: "COMPLETED", receiverCustomerInfo: info });
      expect(await customerBalance(asker, c.id, account.id)).toBe(800);
    } finally {
      receiver.setSecret((await p.call("GET", "/config/webhook-secret")).body.secret);
    }
  });

  it("a platform without a webhook endpoint: approved at once", async () => {
    const quiet = await system.createPlatform();
    const { customer: c, usd: account } = await newCustomer(quiet);
    const res = await receive(quiet, c.umaAddress, 4_200);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: "COMPLETED", destination: { accountId: account.id } });
    expect(await customerBalance(quiet, c.id, account.id)).toBe(4_200);
  });
});
