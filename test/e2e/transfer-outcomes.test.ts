import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifiedCustomer } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { balanceOf, fund, platformAccount, platformExternal, txStatus } from "./ledger-helpers.js";

// The delivery worker polls often so webhooks arrive fast (split mode sets the same variable in test/infra/split-setup.ts).
process.env.NOTIFICATIONS_DELIVERY_POLL_MS ??= "100";

/**
 * Issue 29, items 3 and 5, through the public API: sandbox transfer suffixes 002 and 003 fail
 * immediately (the answer is the FAILED transaction, nothing held, the books exact, one FAILED
 * webhook, the same answer on replay), and every transaction carries its rateDetails.
 */
describe.skipIf(skipReason())(`transfer outcomes and rate details (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let usd: any;
  let hooks: Server;
  const delivered: { type: string; data: { id: string } }[] = [];

  beforeAll(async () => {
    hooks = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        try {
          delivered.push(JSON.parse(body));
        } catch {
          // not an event
        }
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((r) => hooks.listen(0, "127.0.0.1", () => r()));
    system = await startTestSystem();
    p = await system.createPlatform({ name: "transfer outcomes e2e" });
    usd = await platformAccount(p);
    await fund(p, usd.id, 100_000);
    expect((await p.call("PATCH", "/config", { webhookEndpoint: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks` })).status).toBe(200);
    // notifications learns the endpoint asynchronously; a delivered TEST proves it has it.
    await eventually(async () => {
      const res = await p.call("POST", "/sandbox/webhooks/test");
      return res.status === 200 && res.body.response_status === 200 ? true : undefined;
    });
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
    await new Promise<void>((r) => (hooks ? hooks.close(() => r()) : r()));
  });

  const move = (path: "/transfer-out" | "/transfer-in", source: string, destination: string, amount: number, key?: string) =>
    p.call("POST", path, { source: { accountId: source }, destination: { accountId: destination }, amount }, key ? { "Idempotency-Key": key } : {});

  async function expectBooksExact() {
    const tb = await createClient(LedgerAdminService, system.transportFor("ledger")).getTrialBalance({ platformId: p.platformId });
    for (const c of tb.currencies) {
      expect(c.balanceSum, `sum of the ${c.currency} balances`).toBe(0n);
      expect(c.postingSum, `sum of the ${c.currency} postings`).toBe(0n);
      expect(c.mismatchedAccountCount, `${c.currency} accounts whose balance is not their postings`).toBe(0n);
    }
  }

  /** The webhook of `type` for the transaction, once delivered; and that it is the only event of the transaction. */
  async function onlyEventIs(transactionId: string, type: string) {
    await eventually(async () => {
      const res = await p.call("GET", `/events?resourceId=${encodeURIComponent(transactionId)}&limit=100`);
      return res.body.data?.[0]?.deliveryStatus === "DELIVERED" ? res.body : undefined;
    });
    const all = (await p.call("GET", `/events?resourceId=${encodeURIComponent(transactionId)}&limit=100`)).body;
    expect(all.data.map((e: { type: string }) => e.type)).toEqual([type]);
    expect(delivered.filter((e) => e.data?.id === transactionId).map((e) => e.type)).toEqual([type]);
  }

  describe("suffixes 002 and 003 fail immediately", () => {
    it.each([
      ["002", "INSUFFICIENT_FUNDS"],
      ["003", "ACCOUNT_CLOSED_OR_INVALID"],
    ])("transfer-out to %s answers 201 with the transaction FAILED OFFRAMP_FAILED (%s), holds nothing and sends one OUTGOING_PAYMENT_FAILED", async (suffix, detail) => {
      const ext = await platformExternal(p, suffix);
      const before = await balanceOf(p);
      const key = `refused-out-${suffix}-${Date.now()}`;
      const res = await move("/transfer-out", usd.id, ext.id, 700, key);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ type: "OUTGOING", status: "FAILED", failureReason: "OFFRAMP_FAILED", failureDetail: detail, receivedAmount: { amount: 700 } });
      expect(res.body.settledAt).toBeUndefined();
      // Nothing held, not even for an instant the balance shows.
      expect(await balanceOf(p)).toBe(before);
      expect((await p.call("GET", `/transactions/${res.body.id}`)).body).toEqual(res.body);
      // The replay is the same FAILED transaction, and moves nothing.
      const replay = await move("/transfer-out", usd.id, ext.id, 700, key);
      expect(replay.status).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(res.body);
      await onlyEventIs(res.body.id, "OUTGOING_PAYMENT_FAILED");
      expect(await balanceOf(p)).toBe(before);
      await expectBooksExact();
    });

    it.each([
      ["002", "INSUFFICIENT_FUNDS"],
      ["003", "ACCOUNT_CLOSED_OR_INVALID"],
    ])("transfer-in from %s answers 201 with the transaction FAILED COLLECTION_FAILED (%s), credits nothing and sends one INCOMING_PAYMENT_FAILED", async (suffix, detail) => {
      const ext = await platformExternal(p, suffix);
      const before = await balanceOf(p);
      const key = `refused-in-${suffix}-${Date.now()}`;
      const res = await move("/transfer-in", ext.id, usd.id, 400, key);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ type: "INCOMING", status: "FAILED", failureReason: "COLLECTION_FAILED", failureDetail: detail });
      const replay = await move("/transfer-in", ext.id, usd.id, 400, key);
      expect(replay.body).toEqual(res.body);
      await onlyEventIs(res.body.id, "INCOMING_PAYMENT_FAILED");
      expect(await balanceOf(p)).toBe(before);
      await expectBooksExact();
    });

    it("still answers 400 INSUFFICIENT_BALANCE before the rail's refusal when the account lacks the money", async () => {
      const ext = await platformExternal(p, "002");
      const res = await move("/transfer-out", usd.id, ext.id, (await balanceOf(p)) + 1);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("INSUFFICIENT_BALANCE");
    });
  });

  describe("rateDetails on every transaction", () => {
    const sameCurrencyNoFee = { serviceApiMultiplier: 1, serviceApiFixedFee: 0, serviceApiVariableFeeRate: 0, serviceApiVariableFeeAmount: 0 };

    it("gives transfers in and out (pending, completed and failed) multiplier 1 and the fees charged: none", async () => {
      const ok = await platformExternal(p, "000");
      const refused = await platformExternal(p, "002");
      const out = await move("/transfer-out", usd.id, ok.id, 100);
      const into = await move("/transfer-in", ok.id, usd.id, 100);
      const failed = await move("/transfer-out", usd.id, refused.id, 100);
      for (const res of [out, into, failed]) {
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        expect(res.body.rateDetails).toEqual(sameCurrencyNoFee);
      }
      expect((await txStatus(p, out.body.id, "COMPLETED")).rateDetails).toEqual(sameCurrencyNoFee);
      const listed = (await p.call("GET", "/transactions?limit=100")).body.data.filter((t: { id: string }) => [out.body.id, into.body.id, failed.body.id].includes(t.id));
      expect(listed).toHaveLength(3);
      for (const t of listed) expect(t.rateDetails).toEqual(sameCurrencyNoFee);
    });

    it("gives an incoming UMA payment (sandbox receive) the same rate details", async () => {
      const customer = await verifiedCustomer(p, { currencies: ["USD"] });
      await eventually(async () => ((await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}`)).body.data?.length ? true : undefined));
      const res = await p.call("POST", "/sandbox/uma/receive", { senderUmaAddress: "$bob@sender.example", customerId: customer.id, receivingCurrencyCode: "USD", receivingCurrencyAmount: 1_234 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.rateDetails).toEqual(sameCurrencyNoFee);
      expect((await txStatus(p, res.body.id, "COMPLETED")).rateDetails).toEqual(sameCurrencyNoFee);
    });
  });
});
