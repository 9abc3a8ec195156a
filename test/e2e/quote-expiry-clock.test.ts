import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { advanceClock, fund, fxPlatform, iban } from "./ledger-helpers.js";

// Issue 14, defect 6: advancing a platform's sandbox clock past a quote's expiresAt expires it at
// once (transaction, lists, OUTGOING_PAYMENT_EXPIRED webhook), as it fires due rail delays, without
// anything reading the quote. The sandbox announces the advance (corridor.sandbox.v1 ClockAdvanced);
// the ledger expires the platform's due quote transactions; quotes-fx and notifications follow.
process.env.NOTIFICATIONS_DELIVERY_POLL_MS ??= "100";

type Json = any;

describe.skipIf(skipReason())(`quote expiry on the sandbox clock (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let customerId: string;
  let usd: { id: string };
  let receiver: Server;
  const webhooks: { type: string; data: Json }[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        try {
          webhooks.push(JSON.parse(body));
        } catch {
          // not an envelope
        }
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    system = await startTestSystem();
    ({ p, customerId, usd } = await fxPlatform(system));
    await fund(p, usd.id, 1_000_000);
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    expect((await p.call("PATCH", "/config", { webhookEndpoint: endpoint })).status).toBe(200);
    // notifications learns the endpoint asynchronously; a delivered TEST proves it has it.
    await eventually(async () => {
      const res = await p.call("POST", "/sandbox/webhooks/test");
      return res.status === 200 && res.body.response_status === 200 ? true : undefined;
    });
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
    await new Promise<void>((r) => receiver?.close(() => r()));
  });

  it("advancing the clock 301 s expires a PENDING quote's transaction and sends OUTGOING_PAYMENT_EXPIRED, with no read of the quote", async () => {
    const payee = await p.call("POST", "/customers/external-accounts", {
      customerId,
      currency: "EUR",
      accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000") },
    });
    expect(payee.status, JSON.stringify(payee.body)).toBe(201);
    const created = await p.call("POST", "/quotes", {
      source: { sourceType: "ACCOUNT", accountId: usd.id },
      destination: { destinationType: "ACCOUNT", accountId: payee.body.id },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 10_000,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const q = created.body;
    expect(q.status).toBe("PENDING");

    await advanceClock(p, 301);

    // The transactions list (not the quote) shows it EXPIRED.
    const tx = await eventually(async () => {
      const res = await p.call("GET", `/transactions?customerId=${customerId}&type=OUTGOING`);
      const t = (res.body.data ?? []).find((x: Json) => x.id === q.transactionId);
      return t?.status === "EXPIRED" ? t : undefined;
    });
    expect(tx).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED", quoteId: q.id });

    // The webhook went out.
    const hook = await eventually(async () => webhooks.find((w) => w.type === "OUTGOING_PAYMENT_EXPIRED" && w.data?.id === q.transactionId));
    expect(hook.data.status).toBe("EXPIRED");

    // The quote agrees (quotes-fx follows the ledger's event) and can no longer be executed.
    expect((await p.call("GET", `/quotes/${q.id}`)).body).toMatchObject({ status: "EXPIRED" });
    const exec = await p.call("POST", `/quotes/${q.id}/execute`);
    expect(exec.status).toBe(409);
    expect(exec.body.code).toBe("QUOTE_EXPIRED");
  });
});
