import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifiedCustomer } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type ApiResponse, type Caller, type TestSystem } from "./harness.js";
import { advanceClock, customerBalance, fund, fxPlatform, iban, txStatus, usdAccountInfo } from "./ledger-helpers.js";

// Issue "Agents", Done when: through the public API, in both modes, a device code redeemed once
// gives a Bearer token that works on every /agents/me route its permissions allow and on no other;
// AUTO quotes execute; an APPROVAL_REQUIRED quote waits, shows in GET /agents/approvals, sends the
// webhook, and approve / reject move it as the spec's state table says; 50 concurrent submissions
// against a daily limit of 10 transfers accept exactly 10.

type Json = any;

const ALL_PERMISSIONS = ["VIEW_TRANSACTIONS", "CREATE_QUOTES", "EXECUTE_QUOTES", "CREATE_TRANSFERS", "MANAGE_EXTERNAL_ACCOUNTS"];

describe.skipIf(skipReason())(`agents through the gateway (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let customerId: string;
  let usd: { id: string };
  let usdExternal: Json;
  let eurExternal: Json;
  let receiver: Server;
  const received: string[] = [];
  let webhookSecret: string;

  /** A request with an agent's Bearer token (or any Authorization header). */
  function bearer(token: string) {
    return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> =>
      system.raw(method, `/2025-10-13${path}`, {
        body: body === undefined ? undefined : JSON.stringify(body),
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      });
  }

  /** Creates an agent for the customer, redeems its device code and answers its Bearer caller. */
  async function connectedAgent(policy: Json, name = "e2e agent") {
    const created = await p.call("POST", "/agents", { name, customerId, policy });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { agent, deviceCode } = created.body;
    const redeemed = await system.raw("POST", `/2025-10-13/agents/device-codes/${deviceCode.code}/redeem`);
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    return { agent, deviceCode, token: redeemed.body.accessToken as string, call: bearer(redeemed.body.accessToken) };
  }

  const quoteBody = (amount = 10_000) => ({
    source: { sourceType: "ACCOUNT", accountId: usd.id },
    destination: { destinationType: "ACCOUNT", accountId: eurExternal.id, paymentRail: "SEPA" },
    lockedCurrencySide: "SENDING",
    lockedCurrencyAmount: amount,
  });

  const verified = () =>
    received.map((body) => {
      const parsed = JSON.parse(body);
      return parsed as { id: string; type: string; data: Json };
    });

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        // Only signed deliveries count.
        try {
          new Webhook(webhookSecret).verify(body, {
            "webhook-id": String(req.headers["webhook-id"]),
            "webhook-timestamp": String(req.headers["webhook-timestamp"]),
            "webhook-signature": String(req.headers["webhook-signature"]),
          });
          received.push(body);
        } catch {
          // unsigned or wrongly signed: not ours
        }
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    system = await startTestSystem();
    ({ p, customerId, usd } = await fxPlatform(system));
    await fund(p, usd.id, 10_000_000);

    const usdExt = await p.call("POST", "/customers/external-accounts", { customerId, currency: "USD", accountInfo: usdAccountInfo("000") });
    expect(usdExt.status, JSON.stringify(usdExt.body)).toBe(201);
    usdExternal = usdExt.body;
    const eurExt = await p.call("POST", "/customers/external-accounts", {
      customerId,
      currency: "EUR",
      accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000"), swiftCode: "COBADEFFXXX" },
    });
    expect(eurExt.status, JSON.stringify(eurExt.body)).toBe(201);
    eurExternal = eurExt.body;

    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    expect((await p.call("PATCH", "/config", { webhookEndpoint: endpoint })).status).toBe(200);
    webhookSecret = (await p.call("GET", "/config/webhook-secret")).body.secret;
    await eventually(async () => {
      const res = await p.call("POST", "/sandbox/webhooks/test");
      return res.status === 200 && res.body.response_status === 200 ? true : undefined;
    });
  }, 180_000);

  afterAll(async () => {
    await system?.stop();
    await new Promise<void>((r) => receiver?.close(() => r()));
  });

  it("creates an agent with a typeable device code; the code redeems once into an agt_ token, and the agent is then connected", async () => {
    const created = await p.call("POST", "/agents", { name: "Bookkeeper", customerId, policy: { permissions: ["VIEW_TRANSACTIONS"] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { agent, deviceCode } = created.body;
    expect(agent).toMatchObject({ id: expect.stringMatching(/^Agent:/), name: "Bookkeeper", customerId, isPaused: false, isConnected: false });
    expect(deviceCode.code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);

    const status = await p.call("GET", `/agents/device-codes/${deviceCode.code}/status`);
    expect(status.status).toBe(200);
    expect(status.body.redeemed).toBe(false);

    const redeemed = await system.raw("POST", `/2025-10-13/agents/device-codes/${deviceCode.code}/redeem`);
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    expect(redeemed.body).toMatchObject({ agentId: agent.id, agentName: "Bookkeeper", accessToken: expect.stringMatching(/^agt_/) });
    expect(redeemed.body.policy.permissions).toEqual(["VIEW_TRANSACTIONS"]);

    const again = await system.raw("POST", `/2025-10-13/agents/device-codes/${deviceCode.code}/redeem`);
    expect([400, 409]).toContain(again.status);
    expect(again.body).toMatchObject({ status: again.status, code: expect.any(String), message: expect.any(String) });

    expect((await p.call("GET", `/agents/${agent.id}`)).body.isConnected).toBe(true);
    expect((await p.call("GET", `/agents/device-codes/${deviceCode.code}/status`)).body.redeemed).toBe(true);
    // A connected agent gets no new code.
    expect((await p.call("POST", `/agents/${agent.id}/device-codes`)).status).toBe(409);
  });

  it("a device code expires 15 minutes after issue on the platform's sandbox clock, and a new code voids the old one", async () => {
    const created = await p.call("POST", "/agents", { name: "Late", customerId, policy: {} });
    const first = created.body.deviceCode.code as string;
    const second = (await p.call("POST", `/agents/${created.body.agent.id}/device-codes`)).body.code as string;
    expect(second).not.toBe(first);
    expect((await system.raw("POST", `/2025-10-13/agents/device-codes/${first}/redeem`)).status).toBe(400);

    await advanceClock(p, 15 * 60 + 1);
    expect((await system.raw("POST", `/2025-10-13/agents/device-codes/${second}/redeem`)).status).toBe(400);
    const third = (await p.call("POST", `/agents/${created.body.agent.id}/device-codes`)).body.code as string;
    expect((await system.raw("POST", `/2025-10-13/agents/device-codes/${third}/redeem`)).status).toBe(200);
  });

  it("the Bearer token works on every /agents/me route its permissions allow, on no other, and Basic never works there", async () => {
    const viewer = await connectedAgent({ permissions: ["VIEW_TRANSACTIONS"] }, "viewer");

    const me = await viewer.call("GET", "/agents/me");
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body).toMatchObject({ id: viewer.agent.id, customerId });
    expect((await viewer.call("GET", "/agents/me/transactions")).status).toBe(200);
    expect((await viewer.call("GET", "/agents/me/internal-accounts")).status).toBe(200);
    expect((await viewer.call("GET", "/agents/me/external-accounts")).status).toBe(200);
    expect((await viewer.call("GET", "/agents/me/actions")).status).toBe(200);

    // Permissions it lacks.
    const quote = await viewer.call("POST", "/agents/me/quotes", quoteBody());
    expect(quote.status).toBe(403);
    expect(quote.body.code).toBe("FORBIDDEN");
    expect((await viewer.call("POST", "/agents/me/transfer-out", { source: { accountId: usd.id }, destination: { accountId: usdExternal.id }, amount: 100 })).status).toBe(403);
    expect((await viewer.call("POST", "/agents/me/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000") })).status).toBe(403);

    // Platform routes refuse the Bearer token; agent routes refuse Basic credentials.
    for (const path of ["/config", "/customers", "/transactions", "/agents"]) {
      const res = await viewer.call("GET", path);
      expect(res.status, path).toBe(401);
      expect(res.body.code).toBe("UNAUTHORIZED");
    }
    expect((await p.call("GET", "/agents/me")).status).toBe(401);
    expect((await bearer("agt_not-a-token")("GET", "/agents/me")).status).toBe(401);
  });

  it("AUTO within limits: an agent's quote executes at once, the action is APPROVED with its transaction, and the transaction carries agentId", async () => {
    const auto = await connectedAgent({ permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO" }, "auto");
    const before = await customerBalance(p, customerId, usd.id);

    const created = await auto.call("POST", "/agents/me/quotes", quoteBody(), { "idempotency-key": `q-${auto.agent.id}` });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.status).toBe("PENDING");
    expect((await auto.call("GET", `/agents/me/quotes/${created.body.id}`)).status).toBe(200);

    const executed = await auto.call("POST", `/agents/me/quotes/${created.body.id}/execute`, undefined, { "idempotency-key": `x-${auto.agent.id}` });
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
    expect(executed.body).toMatchObject({ id: expect.stringMatching(/^AgentAction:/), agentId: auto.agent.id, customerId, type: "EXECUTE_QUOTE", status: "APPROVED" });
    expect(executed.body.quote.id).toBe(created.body.id);
    const txId = executed.body.transaction.id as string;
    expect(executed.body.transaction.agentId).toBe(auto.agent.id);

    // Replaying the same key answers the first action; no money moves twice.
    const replay = await auto.call("POST", `/agents/me/quotes/${created.body.id}/execute`, undefined, { "idempotency-key": `x-${auto.agent.id}` });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.id).toBe(executed.body.id);

    expect(await customerBalance(p, customerId, usd.id)).toBe(before - created.body.totalSendingAmount);
    expect((await p.call("GET", `/transactions/${txId}`)).body.agentId).toBe(auto.agent.id);
    const listed = await p.call("GET", `/transactions?customerId=${customerId}&limit=100`);
    expect(listed.body.data.find((t: Json) => t.id === txId)?.agentId).toBe(auto.agent.id);
    expect((await auto.call("GET", `/agents/me/transactions/${txId}`)).body.agentId).toBe(auto.agent.id);
    await eventually(async () => verified().find((w) => w.type.startsWith("OUTGOING_PAYMENT_") && w.data.id === txId && w.data.agentId === auto.agent.id));

    const usage = (await p.call("GET", `/agents/${auto.agent.id}`)).body.usage;
    expect(usage.dailyTransactionCount).toBe(1);
  });

  it("APPROVAL_REQUIRED: the execution waits, is listed in GET /agents/approvals, sends AGENT_ACTION_PENDING_APPROVAL, and approve executes it", async () => {
    const careful = await connectedAgent({ permissions: ALL_PERMISSIONS, defaultExecutionMode: "APPROVAL_REQUIRED" }, "careful");
    const quote = (await careful.call("POST", "/agents/me/quotes", quoteBody(5_000))).body;
    const action = await careful.call("POST", `/agents/me/quotes/${quote.id}/execute`);
    expect(action.status, JSON.stringify(action.body)).toBe(200);
    expect(action.body.status).toBe("PENDING_APPROVAL");
    expect(action.body.transaction).toBeUndefined();

    const pending = await p.call("GET", `/agents/approvals?agentId=${careful.agent.id}`);
    expect(pending.status).toBe(200);
    expect(pending.body.data.map((a: Json) => a.id)).toEqual([action.body.id]);
    expect(pending.body.totalCount).toBe(1);

    const hook = await eventually(async () => verified().find((w) => w.type === "AGENT_ACTION_PENDING_APPROVAL" && w.data.id === action.body.id));
    expect(hook.data).toMatchObject({ agentId: careful.agent.id, status: "PENDING_APPROVAL", quote: { id: quote.id } });

    // The agent polls its own actions.
    const mine = await careful.call("GET", "/agents/me/actions?status=PENDING_APPROVAL");
    expect(mine.body.data.map((a: Json) => a.id)).toContain(action.body.id);

    const approved = await p.call("POST", `/agents/${careful.agent.id}/actions/${action.body.id}/approve`);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.status).toBe("APPROVED");
    expect(approved.body.transaction.agentId).toBe(careful.agent.id);
    await txStatus(p, approved.body.transaction.id, "COMPLETED");

    const twice = await p.call("POST", `/agents/${careful.agent.id}/actions/${action.body.id}/approve`);
    expect(twice.status).toBe(409);
    expect(twice.headers.get("x-should-retry")).toBe("false");
    expect((await p.call("GET", `/agents/approvals?agentId=${careful.agent.id}`)).body.data).toEqual([]);
  });

  it("reject moves a pending action to REJECTED with its reason and moves no money; the usage it reserved comes back", async () => {
    const careful = await connectedAgent({ permissions: ALL_PERMISSIONS, defaultExecutionMode: "APPROVAL_REQUIRED" }, "rejected");
    const before = await customerBalance(p, customerId, usd.id);
    const submitted = await careful.call("POST", "/agents/me/transfer-out", { source: { accountId: usd.id }, destination: { accountId: usdExternal.id }, amount: 777 });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    expect(submitted.body).toMatchObject({ type: "TRANSFER_OUT", status: "PENDING_APPROVAL", transferDetails: { amount: 777, currency: "USD" } });
    expect((await p.call("GET", `/agents/${careful.agent.id}`)).body.usage.dailyTransactionCount).toBe(1);

    const rejected = await p.call("POST", `/agents/${careful.agent.id}/actions/${submitted.body.id}/reject`, { reason: "not today" });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect(rejected.body).toMatchObject({ status: "REJECTED", rejectionReason: "not today" });
    expect(rejected.body.transaction).toBeUndefined();
    expect(await customerBalance(p, customerId, usd.id)).toBe(before);
    expect((await p.call("GET", `/agents/${careful.agent.id}`)).body.usage.dailyTransactionCount).toBe(0);
    expect((await p.call("POST", `/agents/${careful.agent.id}/actions/${submitted.body.id}/approve`)).status).toBe(409);
  });

  it("50 concurrent transfer submissions against a daily limit of 10 accept exactly 10; the day rolls over on the sandbox clock", async () => {
    const busy = await connectedAgent(
      { permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO", spendingLimits: { currency: "USD", dailyTransactionLimit: 10 } },
      "busy",
    );
    const results = await Promise.all(
      Array.from({ length: 50 }, () => busy.call("POST", "/agents/me/transfer-out", { source: { accountId: usd.id }, destination: { accountId: usdExternal.id }, amount: 100 })),
    );
    const accepted = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    expect(accepted.length, JSON.stringify(refused.find((r) => r.status !== 403)?.body)).toBe(10);
    for (const r of refused) {
      expect(r.status).toBe(403);
      expect(r.body.code).toBe("SPENDING_LIMIT_EXCEEDED");
      expect(r.body.details).toMatchObject({ limit: "dailyTransactionLimit" });
    }
    expect(accepted.every((r) => r.body.status === "APPROVED" && r.body.transaction.agentId === busy.agent.id)).toBe(true);
    expect((await p.call("GET", `/agents/${busy.agent.id}`)).body.usage.dailyTransactionCount).toBe(10);

    await advanceClock(p, 24 * 60 * 60);
    const nextDay = await busy.call("POST", "/agents/me/transfer-out", { source: { accountId: usd.id }, destination: { accountId: usdExternal.id }, amount: 100 });
    expect(nextDay.status, JSON.stringify(nextDay.body)).toBe(201);
    expect((await p.call("GET", `/agents/${busy.agent.id}`)).body.usage.dailyTransactionCount).toBe(1);
  });

  it("a transfer over the per-transaction limit is refused naming the limit, what is used and what was asked, and nothing is reserved", async () => {
    const capped = await connectedAgent(
      { permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO", spendingLimits: { currency: "USD", perTransactionLimit: 1_000, dailyLimit: 1_500 } },
      "capped",
    );
    const tooBig = await capped.call("POST", "/agents/me/transfer-out", { source: { accountId: usd.id }, destination: { accountId: usdExternal.id }, amount: 1_001 });
    expect(tooBig.status).toBe(403);
    expect(tooBig.body).toMatchObject({ code: "SPENDING_LIMIT_EXCEEDED", details: { limit: "perTransactionLimit", requested: 1_001 } });
    expect((await capped.call("POST", "/agents/me/transfer-out", { source: { accountId: usd.id }, destination: { accountId: usdExternal.id }, amount: 1_000 })).status).toBe(201);
    const daily = await capped.call("POST", "/agents/me/transfer-out", { source: { accountId: usd.id }, destination: { accountId: usdExternal.id }, amount: 600 });
    expect(daily.status).toBe(403);
    expect(daily.body.details).toMatchObject({ limit: "dailyLimit", used: 1_000, requested: 600 });
    expect((await p.call("GET", `/agents/${capped.agent.id}`)).body.usage).toMatchObject({ dailyTransactionCount: 1, dailySpend: 1_000 });
  });

  // Issue 29: an account rule's perTransactionLimit binds on its own, whatever else the policy sets.
  describe("an account rule's perTransactionLimit of 5000 on the sending account refuses a quote of 6000", () => {
    const rule = (executionMode: string) => ({ accountRestrictions: { accountRules: [{ accountId: usd.id, executionMode, perTransactionLimit: 5_000 }] } });

    /** Executes a fresh 6000 quote from the ruled account: 403 SPENDING_LIMIT_EXCEEDED naming the rule, and nothing recorded, reserved or moved. */
    async function expectRefused(agent: Awaited<ReturnType<typeof connectedAgent>>) {
      const before = await customerBalance(p, customerId, usd.id);
      const quote = (await agent.call("POST", "/agents/me/quotes", quoteBody(6_000))).body;
      expect(quote.totalSendingAmount).toBeGreaterThan(5_000);
      const executed = await agent.call("POST", `/agents/me/quotes/${quote.id}/execute`, undefined, { "idempotency-key": `x-${quote.id}` });
      expect(executed.status, JSON.stringify(executed.body)).toBe(403);
      expect(executed.body).toMatchObject({
        code: "SPENDING_LIMIT_EXCEEDED",
        details: { limit: "perTransactionLimit", limitAmount: 5_000, used: 0, requested: quote.totalSendingAmount, currency: "USD", accountId: usd.id },
      });
      // The same through immediatelyExecute, and for a transfer out of the account.
      const immediate = await agent.call("POST", "/agents/me/quotes", { ...quoteBody(6_000), immediatelyExecute: true });
      expect(immediate.status, JSON.stringify(immediate.body)).toBe(403);
      expect(immediate.body.code).toBe("SPENDING_LIMIT_EXCEEDED");
      const transfer = await agent.call("POST", "/agents/me/transfer-out", { source: { accountId: usd.id }, destination: { accountId: usdExternal.id }, amount: 6_000 });
      expect(transfer.status, JSON.stringify(transfer.body)).toBe(403);
      expect(transfer.body.details).toMatchObject({ limit: "perTransactionLimit", limitAmount: 5_000, accountId: usd.id });

      expect((await agent.call("GET", "/agents/me/actions")).body.data).toEqual([]);
      expect((await p.call("GET", `/agents/approvals?agentId=${agent.agent.id}`)).body.data).toEqual([]);
      expect((await p.call("GET", `/agents/${agent.agent.id}`)).body.usage).toMatchObject({ dailyTransactionCount: 0, dailySpend: 0 });
      expect(await customerBalance(p, customerId, usd.id)).toBe(before);
    }

    it("rule AUTO, no spendingLimits: 403 SPENDING_LIMIT_EXCEEDED (it used to execute APPROVED)", async () => {
      await expectRefused(await connectedAgent({ permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO", ...rule("AUTO") }, "rule-only"));
    });

    it("rule AUTO with spendingLimits: 403 SPENDING_LIMIT_EXCEEDED", async () => {
      await expectRefused(
        await connectedAgent({ permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO", spendingLimits: { currency: "USD", dailyLimit: 1_000_000 }, ...rule("AUTO") }, "rule-and-limits"),
      );
    });

    it("rule APPROVAL_REQUIRED: 403 SPENDING_LIMIT_EXCEEDED, not PENDING_APPROVAL", async () => {
      await expectRefused(await connectedAgent({ permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO", ...rule("APPROVAL_REQUIRED") }, "rule-approval"));
    });

    it("a pending action over a rule limit added since it was submitted: approve answers FAILED POLICY_DENIED and moves no money", async () => {
      const agent = await connectedAgent({ permissions: ALL_PERMISSIONS, defaultExecutionMode: "APPROVAL_REQUIRED" }, "tightened");
      const quote = (await agent.call("POST", "/agents/me/quotes", quoteBody(6_000))).body;
      const pending = await agent.call("POST", `/agents/me/quotes/${quote.id}/execute`);
      expect(pending.body.status, JSON.stringify(pending.body)).toBe("PENDING_APPROVAL");
      const patched = await p.call("PATCH", `/agents/${agent.agent.id}/policy`, rule("APPROVAL_REQUIRED"));
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      const before = await customerBalance(p, customerId, usd.id);

      const approved = await p.call("POST", `/agents/${agent.agent.id}/actions/${pending.body.id}/approve`);
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      expect(approved.body).toMatchObject({ status: "FAILED", failureReason: "POLICY_DENIED" });
      expect(approved.body.failureMessage).toContain("perTransactionLimit");
      expect(approved.body.transaction).toBeUndefined();
      expect(await customerBalance(p, customerId, usd.id)).toBe(before);
      expect((await p.call("GET", `/agents/${agent.agent.id}`)).body.usage.dailyTransactionCount).toBe(0);
    });
  });

  it("a paused agent gets 403 AGENT_PAUSED; a deleted agent's token is 401 at once", async () => {
    const agent = await connectedAgent({ permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO" }, "pausable");
    expect((await p.call("PATCH", `/agents/${agent.agent.id}`, { isPaused: true })).body.isPaused).toBe(true);
    const paused = await agent.call("POST", "/agents/me/transfer-out", { source: { accountId: usd.id }, destination: { accountId: usdExternal.id }, amount: 100 });
    expect(paused.status).toBe(403);
    expect(paused.body.code).toBe("AGENT_PAUSED");
    expect((await agent.call("GET", "/agents/me")).body.isPaused).toBe(true);

    expect((await p.call("PATCH", `/agents/${agent.agent.id}`, { isPaused: false })).body.isPaused).toBe(false);
    expect((await agent.call("GET", "/agents/me/transactions")).status).toBe(200);
    expect((await p.call("DELETE", `/agents/${agent.agent.id}`)).status).toBe(204);
    expect((await agent.call("GET", "/agents/me")).status).toBe(401);
    expect((await p.call("GET", `/agents/${agent.agent.id}`)).status).toBe(404);
  });

  it("isolation: another customer's accounts are 404 to the agent; another platform's agent and action ids are 404", async () => {
    const agent = await connectedAgent({ permissions: ALL_PERMISSIONS, defaultExecutionMode: "APPROVAL_REQUIRED" }, "isolated");
    const other = await verifiedCustomer(p);
    const otherAccounts = await eventually(async () => {
      const res = await p.call("GET", `/customers/internal-accounts?customerId=${other.id}&currency=USD`);
      return res.body.data?.length ? res.body.data : undefined;
    });
    const stolen = await agent.call("POST", "/agents/me/transfer-out", { source: { accountId: otherAccounts[0].id }, destination: { accountId: usdExternal.id }, amount: 100 });
    expect(stolen.status, JSON.stringify(stolen.body)).toBe(404);
    const otherExt = await p.call("POST", "/customers/external-accounts", { customerId: other.id, currency: "USD", accountInfo: usdAccountInfo("000") });
    expect((await agent.call("GET", `/agents/me/external-accounts/${otherExt.body.id}`)).status).toBe(404);
    expect((await agent.call("DELETE", `/agents/me/external-accounts/${otherExt.body.id}`)).status).toBe(404);

    const pending = await agent.call("POST", "/agents/me/transfer-out", { source: { accountId: usd.id }, destination: { accountId: usdExternal.id }, amount: 100 });
    expect(pending.body.status).toBe("PENDING_APPROVAL");
    const stranger = await system.createPlatform({ name: "stranger" });
    expect((await stranger.call("GET", `/agents/${agent.agent.id}`)).status).toBe(404);
    expect((await stranger.call("POST", `/agents/${agent.agent.id}/actions/${pending.body.id}/approve`)).status).toBe(404);
    expect((await stranger.call("PATCH", `/agents/${agent.agent.id}`, { isPaused: true })).status).toBe(404);
    expect((await stranger.call("GET", `/agents/approvals?agentId=${agent.agent.id}`)).body.data).toEqual([]);
    expect((await p.call("GET", `/agents/${agent.agent.id}`)).body.isPaused).toBe(false);
  });

  it("an AUTO agent's transfer-out to an account ending 002 fails immediately: the action is FAILED with its FAILED transaction, no money moved (issue 29)", async () => {
    const auto = await connectedAgent({ permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO" }, "refused");
    const refusing = await p.call("POST", "/customers/external-accounts", { customerId, currency: "USD", accountInfo: usdAccountInfo("002") });
    expect(refusing.status, JSON.stringify(refusing.body)).toBe(201);
    const before = await customerBalance(p, customerId, usd.id);
    const res = await auto.call("POST", "/agents/me/transfer-out", { source: { accountId: usd.id }, destination: { accountId: refusing.body.id }, amount: 250 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ type: "TRANSFER_OUT", status: "FAILED", transaction: { status: "FAILED", failureReason: "OFFRAMP_FAILED", failureDetail: "INSUFFICIENT_FUNDS", agentId: auto.agent.id } });
    expect(await customerBalance(p, customerId, usd.id)).toBe(before);
  });

  it("an agent manages its customer's external accounts with MANAGE_EXTERNAL_ACCOUNTS (customerId inferred)", async () => {
    const agent = await connectedAgent({ permissions: ["MANAGE_EXTERNAL_ACCOUNTS"] }, "banker");
    const created = await agent.call("POST", "/agents/me/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000") });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.customerId).toBe(customerId);
    expect((await agent.call("GET", `/agents/me/external-accounts/${created.body.id}`)).status).toBe(200);
    expect((await agent.call("DELETE", `/agents/me/external-accounts/${created.body.id}`)).status).toBe(204);
  });
});
