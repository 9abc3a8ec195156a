import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { individual } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { fund, platformAccount, platformExternal, txStatus } from "./ledger-helpers.js";

interface Received {
  headers: IncomingMessage["headers"];
  body: string;
}

/** Decisions §8 end to end: platform events reach the platform's endpoint as signed webhooks. */
describe.skipIf(skipReason())(`event webhooks (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let receiver: Server;
  const received: Received[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    system = await startTestSystem();
    p = await system.createPlatform({ name: "webhooks e2e" });
  });
  afterAll(async () => {
    await system?.stop();
    await new Promise<void>((r) => receiver.close(() => r()));
  });

  /** Verified envelopes received so far (throws on one that does not verify with `secret`). */
  const verifiedEnvelopes = (secret: string) =>
    received.map(
      (r) =>
        new Webhook(secret).verify(r.body, {
          "webhook-id": String(r.headers["webhook-id"]),
          "webhook-timestamp": String(r.headers["webhook-timestamp"]),
          "webhook-signature": String(r.headers["webhook-signature"]),
        }) as { id: string; type: string; timestamp: string; data: any },
    );

  it("delivers CUSTOMER_KYC_APPROVED and OUTGOING_PAYMENT_* webhooks, signed with the platform's secret", async () => {
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    expect((await p.call("PATCH", "/config", { webhookEndpoint: endpoint })).status).toBe(200);
    // notifications learns the endpoint asynchronously; a delivered TEST proves it has it.
    await eventually(async () => {
      const res = await p.call("POST", "/sandbox/webhooks/test");
      return res.status === 200 && res.body.response_status === 200 ? true : undefined;
    });
    const secret = (await p.call("GET", "/config/webhook-secret")).body.secret as string;

    const customer = (await p.call("POST", "/customers", individual())).body;
    const verification = await p.call("POST", "/verifications", { customerId: customer.id });
    expect(verification.body.verificationStatus).toBe("APPROVED");

    const usd = await platformAccount(p);
    await fund(p, usd.id, 10_000);
    const ext = await platformExternal(p, "000");
    const out = await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.id }, amount: 2500 });
    expect(out.status, JSON.stringify(out.body)).toBe(201);
    await txStatus(p, out.body.id, "COMPLETED");

    const kyc = await eventually(async () => verifiedEnvelopes(secret).find((e) => e.type === "CUSTOMER_KYC_APPROVED" && e.data.id === customer.id));
    expect(kyc).toMatchObject({ id: expect.stringMatching(/^Webhook:/), timestamp: expect.any(String) });

    const completed = await eventually(async () =>
      verifiedEnvelopes(secret).find((e) => e.type === "OUTGOING_PAYMENT_COMPLETED" && e.data.id === out.body.id),
    );
    expect(completed.data).toMatchObject({ id: out.body.id, type: "OUTGOING", status: "COMPLETED", receivedAmount: { amount: 2500 } });
    // data is the Transaction as GET /transactions/{id} returns it.
    const got = (await p.call("GET", `/transactions/${out.body.id}`)).body;
    expect(completed.data).toEqual(got);

    const paymentTypes = verifiedEnvelopes(secret)
      .filter((e) => e.type.startsWith("OUTGOING_PAYMENT_") && e.data.id === out.body.id)
      .map((e) => e.type);
    expect(paymentTypes).toContain("OUTGOING_PAYMENT_COMPLETED");
    // At least once, but each event once here: no webhook id arrives twice.
    const ids = received.map((r) => String(r.headers["webhook-id"]));
    expect(new Set(ids).size).toBe(ids.length);
  }, 60_000);
});
