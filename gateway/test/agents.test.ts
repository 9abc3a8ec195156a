import { createRequire } from "node:module";
import { Writable } from "node:stream";
import { createLogger, type Logger } from "@corridor/kit";
import { Permission } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildGateway } from "../src/app.js";
import { assertRoutePermission } from "../src/auth.js";
import { FakeServices } from "./fakes.js";

const V = "/2025-10-13";
const log = createLogger("gateway-agents-test", "silent");
const basic = (c: { clientId: string; clientSecret: string }) => `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString("base64")}`;
const ALL = ["VIEW_TRANSACTIONS", "CREATE_QUOTES", "EXECUTE_QUOTES", "CREATE_TRANSFERS", "MANAGE_EXTERNAL_ACCOUNTS"];

function expectError(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toMatchObject({ status, code, message: expect.any(String), details: expect.any(Object) });
}

const quoteBody = {
  source: { sourceType: "ACCOUNT", accountId: "InternalAccount:a" },
  destination: { destinationType: "ACCOUNT", accountId: "ExternalAccount:b", paymentRail: "SEPA" },
  lockedCurrencySide: "SENDING",
  lockedCurrencyAmount: 10_000,
};
const transferBody = { source: { accountId: "InternalAccount:0197a000-0000-7000-8000-000000000001" }, destination: { accountId: "ExternalAccount:0197a000-0000-7000-8000-000000000002" }, amount: 2500 };

describe("agents through the gateway", () => {
  let fakes: FakeServices;
  let app: FastifyInstance;
  let admin: ReturnType<FakeServices["addToken"]>;

  type Auth = ReturnType<FakeServices["addToken"]> | { bearer: string } | undefined;
  const headersOf = (as: Auth, extra: Record<string, string> = {}) => ({
    ...(as === undefined ? {} : "bearer" in as ? { authorization: `Bearer ${as.bearer}` } : { authorization: basic(as) }),
    ...extra,
  });
  const call = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, opts: { as?: Auth; body?: unknown; headers?: Record<string, string> } = {}) =>
    app.inject({ method, url: `${V}${url}`, headers: headersOf(opts.as, opts.headers), ...(opts.body === undefined ? {} : { payload: opts.body as object }) });
  const lastCall = (method: string) => [...fakes.rpcCalls].reverse().find((c) => c.method === method)?.req;
  const agentWith = (permissions: string[], opts: { isPaused?: boolean; platformId?: string } = {}) => {
    const { agent, token } = fakes.addAgent({ platformId: opts.platformId ?? admin.platformId, permissions, isPaused: opts.isPaused });
    return { agent, as: { bearer: token } };
  };

  beforeEach(async () => {
    fakes = new FakeServices();
    admin = fakes.addToken({ permissions: [Permission.VIEW, Permission.TRANSACT, Permission.MANAGE] });
    app = await buildGateway({ transportFor: fakes.transportFor, log });
  });
  afterEach(async () => {
    await app.close();
  });

  describe("Bearer and Basic", () => {
    it("answers 401 UNAUTHORIZED to a Bearer token on a platform (Basic) route, without calling auth-sessions", async () => {
      const { as } = agentWith(ALL);
      for (const url of ["/agents", "/config", "/transactions", "/agents/approvals"]) {
        const res = await call("GET", url, { as });
        expectError(res, 401, "UNAUTHORIZED");
      }
      expect(fakes.authenticateCalls).toBe(0);
    });

    it("answers 401 UNAUTHORIZED without a Basic challenge to Basic credentials, no credentials or an unknown token on /agents/me routes", async () => {
      for (const as of [admin, undefined, { bearer: "agt_not-a-token" }]) {
        const res = await call("GET", "/agents/me", { as });
        expectError(res, 401, "UNAUTHORIZED");
        expect(res.headers["www-authenticate"]).toBeUndefined();
      }
      expectError(await call("POST", "/agents/me/transfer-out", { as: admin, body: transferBody }), 401, "UNAUTHORIZED");
      expect(fakes.rpcCalls.filter((c) => c.method === "agents.submitTransfer")).toEqual([]);
    });

    it("authenticates every request with AuthenticateAgent (no cache): a deleted agent's token is 401 at once", async () => {
      const { agent, as } = agentWith(ALL);
      expect((await call("GET", "/agents/me", { as })).statusCode).toBe(200);
      expect((await call("GET", "/agents/me", { as })).statusCode).toBe(200);
      expect(fakes.authenticateAgentCalls).toBe(2);
      expect((await call("DELETE", `/agents/${agent.id}`, { as: admin })).statusCode).toBe(204);
      expectError(await call("GET", "/agents/me", { as }), 401, "UNAUTHORIZED");
    });

    it("answers 403 AGENT_PAUSED for a paused agent on every /agents/me route but GET /agents/me, which shows isPaused", async () => {
      const { as } = agentWith(ALL, { isPaused: true });
      const me = await call("GET", "/agents/me", { as });
      expect(me.statusCode).toBe(200);
      expect(me.json().isPaused).toBe(true);
      const attempts: [("GET" | "POST" | "DELETE"), string, unknown?][] = [
        ["GET", "/agents/me/actions"],
        ["GET", "/agents/me/transactions"],
        ["GET", "/agents/me/internal-accounts"],
        ["GET", "/agents/me/external-accounts"],
        ["POST", "/agents/me/quotes", quoteBody],
        ["POST", "/agents/me/transfer-out", transferBody],
        ["DELETE", "/agents/me/external-accounts/ExternalAccount:0197a000-0000-7000-8000-000000000002"],
      ];
      for (const [method, url, body] of attempts) expectError(await call(method, url, { as, body }), 403, "AGENT_PAUSED");
      expect(fakes.rpcCalls.filter((c) => c.method !== "agents.getAgent")).toEqual([]);
    });

    it("answers 403 FORBIDDEN naming the missing policy permission, and calls nothing", async () => {
      const { as } = agentWith(["VIEW_TRANSACTIONS"]);
      const cases: [("GET" | "POST" | "DELETE"), string, string, unknown?][] = [
        ["POST", "/agents/me/quotes", "CREATE_QUOTES", quoteBody],
        ["POST", "/agents/me/quotes/Quote:q1/execute", "EXECUTE_QUOTES"],
        ["POST", "/agents/me/transfer-in", "CREATE_TRANSFERS", transferBody],
        ["POST", "/agents/me/external-accounts", "MANAGE_EXTERNAL_ACCOUNTS", { currency: "USD", accountInfo: { accountType: "USD_ACCOUNT" } }],
      ];
      for (const [method, url, permission, body] of cases) {
        const res = await call(method, url, { as, body });
        expectError(res, 403, "FORBIDDEN");
        expect(res.json().details.requiredPermission).toBe(permission);
      }
      const noView = agentWith(["CREATE_QUOTES"]);
      expect((await call("GET", "/agents/me/transactions", { as: noView.as })).json().details.requiredPermission).toBe("VIEW_TRANSACTIONS");
      expect(fakes.rpcCalls).toEqual([]);
    });

    it("refuses immediatelyExecute without EXECUTE_QUOTES", async () => {
      const { as } = agentWith(["CREATE_QUOTES"]);
      const res = await call("POST", "/agents/me/quotes", { as, body: { ...quoteBody, immediatelyExecute: true } });
      expectError(res, 403, "FORBIDDEN");
      expect(res.json().details.requiredPermission).toBe("EXECUTE_QUOTES");
    });

    it("never writes the Bearer token to a log line", async () => {
      // The production logger (kit's pino), at trace level, into memory.
      const lines: string[] = [];
      const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
      const { pino } = createRequire(new URL("../../packages/kit/package.json", import.meta.url))("pino") as { pino: (opts: object, dest: Writable) => Logger };
      const noisy = await buildGateway({ transportFor: fakes.transportFor, log: pino({ level: "trace" }, sink) });
      try {
        const { as } = agentWith(ALL);
        const headers = { authorization: `Bearer ${as.bearer}` };
        await noisy.inject({ method: "GET", url: `${V}/agents/me`, headers });
        await noisy.inject({ method: "GET", url: `${V}/agents`, headers });
        fakes.serving.set("agents", false);
        fakes.agents.clear(); // AuthenticateAgent now refuses the token
        await noisy.inject({ method: "GET", url: `${V}/agents/me`, headers });
        expect(lines.length).toBeGreaterThan(0);
        expect(lines.join("\n")).not.toContain(as.bearer);
      } finally {
        await noisy.close();
      }
    });

    it("refuses at startup a non-GET bearer route without agentPermission, and platform permissions on bearer routes", () => {
      expect(() => assertRoutePermission({ method: "POST", url: "/x", config: { auth: "bearer" }, handler: () => {} } as never)).toThrow(/agentPermission/);
      expect(() => assertRoutePermission({ method: "GET", url: "/x", config: { auth: "bearer", permission: "VIEW" }, handler: () => {} } as never)).toThrow(/bearer route/);
      expect(() => assertRoutePermission({ method: "POST", url: "/x", config: { permission: "MANAGE", agentPermission: "CREATE_QUOTES" }, handler: () => {} } as never)).toThrow(/not a bearer route/);
      expect(() => assertRoutePermission({ method: "POST", url: "/x", config: { auth: "bearer", agentPermission: "CREATE_QUOTES" }, handler: () => {} } as never)).not.toThrow();
    });
  });

  describe("platform routes", () => {
    it("creates an agent (201 {agent, deviceCode}) mapping the JSON policy to proto, null allowedAccountIds as no restriction", async () => {
      const res = await call("POST", "/agents", {
        as: admin,
        body: {
          name: "Bookkeeper",
          customerId: "Customer:c1",
          policy: {
            permissions: ["CREATE_QUOTES", "EXECUTE_QUOTES"],
            defaultExecutionMode: "AUTO",
            spendingLimits: { currency: "USD", dailyLimit: 100_000 },
            accountRestrictions: { allowedAccountIds: null, accountRules: [{ accountId: "InternalAccount:a", executionMode: "APPROVAL_REQUIRED" }] },
            approvalThresholds: { currency: "USD", amount: 50_000 },
          },
        },
      });
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json();
      expect(body.agent).toMatchObject({ id: expect.stringMatching(/^Agent:/), name: "Bookkeeper", customerId: "Customer:c1", isPaused: false, isConnected: false });
      expect(body.agent.policy).toEqual({
        permissions: ["CREATE_QUOTES", "EXECUTE_QUOTES"],
        defaultExecutionMode: "AUTO",
        spendingLimits: { currency: "USD", perTransactionLimit: 0, dailyLimit: 100_000, dailyTransactionLimit: 0, monthlyLimit: 0 },
        accountRestrictions: { allowedAccountIds: null, accountRules: [{ accountId: "InternalAccount:a", executionMode: "APPROVAL_REQUIRED", perTransactionLimit: 0 }] },
        approvalThresholds: { currency: "USD", amount: 50_000 },
      });
      expect(body.agent.usage).toEqual({ dailyTransactionCount: 0, dailySpend: 0, monthlySpend: 0 });
      expect(body.deviceCode).toEqual({ code: expect.any(String), agentId: body.agent.id, status: "PENDING", redeemed: false, expiresAt: "2026-11-23T10:15:00.000Z" });
      const req = lastCall("agents.createAgent") as { platformId: string; policy: { spendingLimits: { dailyLimit: bigint }; accountRestrictions: { hasAllowedAccountIds: boolean } } };
      expect(req.platformId).toBe(admin.platformId);
      expect(req.policy.spendingLimits.dailyLimit).toBe(100_000n);
      expect(req.policy.accountRestrictions.hasAllowedAccountIds).toBe(false);
    });

    it("rejects an unknown permission and a negative limit as body fields, and needs MANAGE", async () => {
      const res = await call("POST", "/agents", {
        as: admin,
        body: { name: "x", customerId: "Customer:c1", policy: { permissions: ["ROOT"], spendingLimits: { dailyLimit: -1 } } },
      });
      expectError(res, 400, "INVALID_INPUT");
      const fields = (res.json().details.errors as { field: string }[]).map((e) => e.field);
      expect(fields).toEqual(expect.arrayContaining(["body.policy.permissions[0]", "body.policy.spendingLimits.dailyLimit"]));
      const viewer = fakes.addToken({ platformId: admin.platformId, permissions: [Permission.VIEW] });
      expectError(await call("POST", "/agents", { as: viewer, body: { name: "x", customerId: "Customer:c1" } }), 403, "FORBIDDEN");
    });

    it("maps a policy patch: named fields only, null allowedAccountIds and null approvalThresholds clear", async () => {
      const { agent } = agentWith(ALL);
      const res = await call("PATCH", `/agents/${agent.id}/policy`, {
        as: admin,
        body: { spendingLimits: { monthlyLimit: 0 }, accountRestrictions: { allowedAccountIds: null }, approvalThresholds: null },
      });
      expect(res.statusCode, res.body).toBe(200);
      const patch = (lastCall("agents.updateAgentPolicy") as { patch: Record<string, unknown> }).patch;
      expect(patch.clearAllowedAccountIds).toBe(true);
      expect(patch.clearApprovalThresholds).toBe(true);
      expect(patch.allowedAccountIds).toBeUndefined();
      expect(patch.approvalThresholds).toBeUndefined();
      expect(patch.permissions).toBeUndefined();
      expect(patch.defaultExecutionMode).toBeUndefined();
      expect(patch.accountRules).toBeUndefined();
      expect(patch.spendingLimits).toMatchObject({ monthlyLimit: 0n });
      expect((patch.spendingLimits as Record<string, unknown>).dailyLimit).toBeUndefined();
      expect((patch.spendingLimits as Record<string, unknown>).currency).toBeUndefined();

      await call("PATCH", `/agents/${agent.id}/policy`, {
        as: admin,
        body: { permissions: [], accountRestrictions: { allowedAccountIds: ["InternalAccount:a"], accountRules: [] }, approvalThresholds: { currency: "USD", amount: 1 } },
      });
      const second = (lastCall("agents.updateAgentPolicy") as { patch: Record<string, unknown> }).patch;
      expect(second).toMatchObject({
        permissions: { values: [] },
        allowedAccountIds: { values: ["InternalAccount:a"] },
        clearAllowedAccountIds: false,
        accountRules: { values: [] },
        approvalThresholds: { currency: "USD", amount: 1n },
        clearApprovalThresholds: false,
      });
    });

    it("lists agents in the envelope, passing customerId, isPaused and paging through", async () => {
      agentWith(ALL, { isPaused: true });
      const res = await call("GET", "/agents?customerId=Customer:c9&isPaused=true&limit=5&cursor=abc", { as: admin });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ data: [], hasMore: false, totalCount: 0 });
      expect(lastCall("agents.listAgents")).toMatchObject({ platformId: admin.platformId, customerId: "Customer:c9", isPaused: true, page: { limit: 5, cursor: "abc" } });
      const all = await call("GET", "/agents", { as: admin });
      expect(all.json().data).toHaveLength(1);
      expect(lastCall("agents.listAgents")).toMatchObject({ customerId: "", page: { limit: 20, cursor: "" } });
      expect(lastCall("agents.listAgents")!.isPaused).toBeUndefined();
    });

    it("lists approvals with every filter passed through (dates inclusive, sortOrder desc by default)", async () => {
      const { agent } = agentWith(ALL);
      const pending = fakes.addAction(agent);
      const res = await call("GET", `/agents/approvals?agentId=${agent.id}&customerId=Customer:c1&startDate=2026-11-01T00:00:00Z&endDate=2026-11-30T23:59:59Z&limit=3`, { as: admin });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ hasMore: false, totalCount: 1, data: [{ id: pending.id, status: "PENDING_APPROVAL", transferDetails: { amount: 2500, currency: "USD" } }] });
      const req = lastCall("agents.listApprovals") as { created: { after: { seconds: bigint }; before: { seconds: bigint } }; ascending: boolean };
      expect(req).toMatchObject({ agentId: agent.id, customerId: "Customer:c1", ascending: false, page: { limit: 3, cursor: "" } });
      expect(new Date(Number(req.created.after.seconds) * 1000).toISOString()).toBe("2026-11-01T00:00:00.000Z");
      expect(new Date(Number(req.created.before.seconds) * 1000).toISOString()).toBe("2026-11-30T23:59:59.000Z");
      await call("GET", "/agents/approvals?sortOrder=asc", { as: admin });
      expect(lastCall("agents.listApprovals")).toMatchObject({ ascending: true, agentId: "" });
      expectError(await call("GET", "/agents/approvals?sortOrder=up", { as: admin }), 400, "INVALID_INPUT");
    });

    it("routes /agents/approvals and /agents/device-codes/… to their own handlers, not to /agents/{agentId}", async () => {
      expect((await call("GET", "/agents/approvals", { as: admin })).statusCode).toBe(200);
      expect(lastCall("agents.getAgent")).toBeUndefined();
      const created = (await call("POST", "/agents", { as: admin, body: { name: "a", customerId: "Customer:c1" } })).json();
      const status = await call("GET", `/agents/device-codes/${created.deviceCode.code}/status`, { as: admin });
      expect(status.statusCode, status.body).toBe(200);
      expect(status.json()).toMatchObject({ code: created.deviceCode.code, agentId: created.agent.id, status: "PENDING", redeemed: false });
      expect(lastCall("agents.getAgent")).toBeUndefined();
    });

    it("routes GET /agents/me to the agent (Bearer) route, not to /agents/{agentId}", async () => {
      const { agent, as } = agentWith(ALL);
      const me = await call("GET", "/agents/me", { as });
      expect(me.statusCode).toBe(200);
      expect(me.json()).toMatchObject({ id: agent.id, customerId: agent.customerId, policy: { permissions: ALL } });
      expect(lastCall("agents.getAgent")).toMatchObject({ platformId: admin.platformId, agentId: agent.id });
      const byId = await call("GET", `/agents/${agent.id}`, { as: admin });
      expect(byId.json().id).toBe(agent.id);
    });

    it("renames and pauses, deletes with 204 and no body, and answers 404 AGENT_NOT_FOUND for another platform's agent", async () => {
      const { agent } = agentWith(ALL);
      const res = await call("PATCH", `/agents/${agent.id}`, { as: admin, body: { isPaused: true } });
      expect(res.json()).toMatchObject({ isPaused: true });
      expect(lastCall("agents.updateAgent")).toMatchObject({ isPaused: true });
      expect(lastCall("agents.updateAgent")!.name).toBeUndefined();
      expectError(await call("PATCH", `/agents/${agent.id}`, { as: admin, body: {} }), 400, "INVALID_INPUT");

      const stranger = fakes.addToken({ permissions: [Permission.VIEW, Permission.MANAGE] });
      expectError(await call("GET", `/agents/${agent.id}`, { as: stranger }), 404, "AGENT_NOT_FOUND");
      const del = await call("DELETE", `/agents/${agent.id}`, { as: admin });
      expect(del.statusCode).toBe(204);
      expect(del.body).toBe("");
      expectError(await call("GET", `/agents/${agent.id}`, { as: admin }), 404, "AGENT_NOT_FOUND");
    });

    it("issues a device code (201) and redeems one without credentials: 200 {agentId, agentName, accessToken, policy}, no-store, once", async () => {
      const created = (await call("POST", "/agents", { as: admin, body: { name: "Late", customerId: "Customer:c1" } })).json();
      const issued = await call("POST", `/agents/${created.agent.id}/device-codes`, { as: admin });
      expect(issued.statusCode, issued.body).toBe(201);
      const code = issued.json().code as string;

      const redeemed = await call("POST", `/agents/device-codes/${code}/redeem`);
      expect(redeemed.statusCode, redeemed.body).toBe(200);
      expect(redeemed.headers["cache-control"]).toBe("no-store");
      expect(redeemed.json()).toEqual({
        agentId: created.agent.id,
        agentName: "Late",
        accessToken: expect.stringMatching(/^agt_/),
        policy: { permissions: ["VIEW_TRANSACTIONS"], defaultExecutionMode: "APPROVAL_REQUIRED", accountRestrictions: { allowedAccountIds: null, accountRules: [] } },
      });
      // The token works on /agents/me at once.
      const me = await call("GET", "/agents/me", { as: { bearer: redeemed.json().accessToken } });
      expect(me.json()).toMatchObject({ id: created.agent.id, isConnected: true });
      expectError(await call("POST", `/agents/device-codes/${code}/redeem`), 400, "INVALID_DEVICE_CODE");
      expectError(await call("POST", "/agents/device-codes/not a code!/redeem"), 400, "INVALID_INPUT");
    });

    it("throttles device-code guessing per address: past the failure limit even a valid code waits (429, Retry-After), and nothing more is asked of the agents service", async () => {
      const guarded = await buildGateway({ transportFor: fakes.transportFor, log, authFailureLimit: { max: 3, timeWindowMs: 60_000 } });
      try {
        const created = (await guarded.inject({ method: "POST", url: `${V}/agents`, headers: headersOf(admin), payload: { name: "Guessed", customerId: "Customer:c1" } })).json();
        const redeem = (code: string) => guarded.inject({ method: "POST", url: `${V}/agents/device-codes/${code}/redeem` });
        for (let i = 0; i < 3; i++) expectError(await redeem(`WRNG-000${i + 2}`), 400, "INVALID_DEVICE_CODE");
        const asked = fakes.rpcCalls.filter((c) => c.method === "agents.redeemDeviceCode").length;
        const refused = await redeem(created.deviceCode.code);
        expectError(refused, 429, "RATE_LIMITED");
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
        expect(fakes.rpcCalls.filter((c) => c.method === "agents.redeemDeviceCode").length).toBe(asked);
        // Another address is not affected.
        const elsewhere = await guarded.inject({ method: "POST", url: `${V}/agents/device-codes/${created.deviceCode.code}/redeem`, remoteAddress: "127.0.0.9" });
        expect(elsewhere.statusCode, elsewhere.body).toBe(200);
      } finally {
        await guarded.close();
      }
    });

    it("approves (no body) and rejects (optional reason) with 200 AgentAction; 409 INVALID_STATE_TRANSITION when not pending; needs TRANSACT", async () => {
      const { agent } = agentWith(ALL);
      const a1 = fakes.addAction(agent);
      const a2 = fakes.addAction(agent);
      const a3 = fakes.addAction(agent);
      const approved = await call("POST", `/agents/${agent.id}/actions/${a1.id}/approve`, { as: admin });
      expect(approved.statusCode, approved.body).toBe(200);
      expect(approved.json()).toMatchObject({ id: a1.id, status: "APPROVED", transaction: { agentId: agent.id, status: "PENDING" } });
      const twice = await call("POST", `/agents/${agent.id}/actions/${a1.id}/approve`, { as: admin });
      expectError(twice, 409, "INVALID_STATE_TRANSITION");
      expect(twice.headers["x-should-retry"]).toBe("false");

      const rejected = await call("POST", `/agents/${agent.id}/actions/${a2.id}/reject`, { as: admin, body: { reason: "not today" } });
      expect(rejected.json()).toMatchObject({ status: "REJECTED", rejectionReason: "not today" });
      expect(rejected.json().transaction).toBeUndefined();
      const bare = await call("POST", `/agents/${agent.id}/actions/${a3.id}/reject`, { as: admin });
      expect(bare.statusCode, bare.body).toBe(200);
      expect(bare.json().rejectionReason).toBeUndefined();

      const viewer = fakes.addToken({ platformId: admin.platformId, permissions: [Permission.VIEW] });
      const a4 = fakes.addAction(agent);
      const forbidden = await call("POST", `/agents/${agent.id}/actions/${a4.id}/approve`, { as: viewer });
      expectError(forbidden, 403, "FORBIDDEN");
      expect(forbidden.json().details.requiredPermission).toBe("TRANSACT");
    });
  });

  describe("agent routes", () => {
    it("creates a quote for the agent's customer (201 Quote), passing the body as POST /quotes does and the key to the service", async () => {
      const { agent, as } = agentWith(ALL);
      const res = await call("POST", "/agents/me/quotes", { as, body: { ...quoteBody, description: "rent" }, headers: { "idempotency-key": "q-1" } });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ id: expect.stringMatching(/^Quote:/), status: "PENDING", totalSendingAmount: 10_000, exchangeRate: 1.1, sendingCurrency: { code: "USD" } });
      const req = lastCall("agents.createAgentQuote") as { platformId: string; agentId: string; idempotencyKey: string; quote: Record<string, unknown> };
      expect(req).toMatchObject({ platformId: admin.platformId, agentId: agent.id, idempotencyKey: "q-1" });
      expect(req.quote).toMatchObject({
        source: { sourceType: "ACCOUNT", accountId: "InternalAccount:a", customerId: agent.customerId },
        destination: { destinationType: "ACCOUNT", accountId: "ExternalAccount:b", paymentRail: "SEPA" },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: 10_000n,
        description: "rent",
      });
    });

    it("answers 404 USER_NOT_FOUND for a quote or external account naming another customer, and calls nothing", async () => {
      const { as } = agentWith(ALL);
      expectError(await call("POST", "/agents/me/quotes", { as, body: { ...quoteBody, source: { ...quoteBody.source, customerId: "Customer:someone-else" } } }), 404, "USER_NOT_FOUND");
      expectError(await call("POST", "/agents/me/external-accounts", { as, body: { customerId: "Customer:someone-else", currency: "USD", accountInfo: { accountType: "USD_ACCOUNT" } } }), 404, "USER_NOT_FOUND");
      expectError(await call("GET", "/agents/me/internal-accounts?customerId=Customer:someone-else", { as }), 404, "USER_NOT_FOUND");
      expect(fakes.rpcCalls.filter((c) => c.method !== "agents.getAgent")).toEqual([]);
    });

    it("submits a quote execution (200 AgentAction) and transfers (201 AgentAction) with the Idempotency-Key, replaying with Idempotent-Replayed", async () => {
      const { agent, as } = agentWith(ALL);
      const exec = await call("POST", "/agents/me/quotes/Quote:q1/execute", { as, headers: { "idempotency-key": "x-1" } });
      expect(exec.statusCode, exec.body).toBe(200);
      expect(exec.json()).toMatchObject({
        id: expect.stringMatching(/^AgentAction:/),
        agentId: agent.id,
        customerId: agent.customerId,
        platformCustomerId: "pc-1",
        type: "EXECUTE_QUOTE",
        status: "PENDING_APPROVAL",
        quote: { id: "Quote:q1", totalSendingAmount: 10_000 },
        transferDetails: { amount: 10_000, currency: "USD", sourceAccountId: "InternalAccount:a", destinationAccountId: "ExternalAccount:b" },
        expiresAt: "2026-11-23T10:05:00.000Z",
      });
      expect(lastCall("agents.submitQuoteExecution")).toMatchObject({ agentId: agent.id, quoteId: "Quote:q1", idempotencyKey: "x-1" });
      const replay = await call("POST", "/agents/me/quotes/Quote:q1/execute", { as, headers: { "idempotency-key": "x-1" } });
      expect(replay.headers["idempotent-replayed"]).toBe("true");
      expect(replay.json().id).toBe(exec.json().id);

      for (const direction of ["in", "out"] as const) {
        const res = await call("POST", `/agents/me/transfer-${direction}`, { as, body: { ...transferBody, description: "memo" }, headers: { "idempotency-key": `t-${direction}` } });
        expect(res.statusCode, res.body).toBe(201);
        expect(res.json()).toMatchObject({ type: `TRANSFER_${direction.toUpperCase()}`, transferDetails: { amount: 2500, sourceAccountId: transferBody.source.accountId } });
        expect(lastCall("agents.submitTransfer")).toMatchObject({
          direction: direction.toUpperCase(),
          sourceAccountId: transferBody.source.accountId,
          destinationAccountId: transferBody.destination.accountId,
          amount: 2500n,
          description: "memo",
          idempotencyKey: `t-${direction}`,
        });
      }
    });

    it("scopes Idempotency-Key per agent: the same key from two agents (and the platform) is no conflict; another body from one agent is 422", async () => {
      const one = agentWith(ALL);
      const two = agentWith(ALL);
      const headers = { "idempotency-key": "same-key" };
      const a = await call("POST", "/agents/me/transfer-out", { as: one.as, body: transferBody, headers });
      const b = await call("POST", "/agents/me/transfer-out", { as: two.as, body: { ...transferBody, amount: 99 }, headers });
      const p = await call("POST", "/transfer-out", { as: admin, body: { ...transferBody, amount: 98 }, headers });
      expect([a.statusCode, b.statusCode, p.statusCode]).toEqual([201, 201, 201]);
      expect(a.json().agentId).toBe(one.agent.id);
      expect(b.json().agentId).toBe(two.agent.id);
      const reused = await call("POST", "/agents/me/transfer-in", { as: one.as, body: transferBody, headers });
      expectError(reused, 422, "IDEMPOTENCY_KEY_REUSED");
      expect(reused.json().details.idempotencyKey).toBe("same-key");
    });

    it("lists the agent's actions with the status filter, and reads one", async () => {
      const { agent, as } = agentWith(ALL);
      const action = fakes.addAction(agent);
      const list = await call("GET", "/agents/me/actions?status=PENDING_APPROVAL&limit=2", { as });
      expect(list.json()).toMatchObject({ data: [{ id: action.id }], hasMore: false, totalCount: 1 });
      expect(lastCall("agents.listAgentActions")).toMatchObject({ agentId: agent.id, status: "PENDING_APPROVAL", page: { limit: 2, cursor: "" } });
      expectError(await call("GET", "/agents/me/actions?status=DONE", { as }), 400, "INVALID_INPUT");
      expect((await call("GET", `/agents/me/actions/${action.id}`, { as })).json().id).toBe(action.id);
      const other = agentWith(ALL);
      expectError(await call("GET", `/agents/me/actions/${action.id}`, { as: other.as }), 404, "AGENT_ACTION_NOT_FOUND");
    });

    it("restricts transactions to the agent's customer: the list forces customerId, the read passes it (another customer's is 404)", async () => {
      const { agent, as } = agentWith(["VIEW_TRANSACTIONS"]);
      const list = await call("GET", "/agents/me/transactions?status=COMPLETED&type=OUTGOING&sortOrder=asc&customerId=Customer:other&platformCustomerId=x&limit=7", { as });
      expect(list.statusCode, list.body).toBe(200);
      expect(list.json()).toEqual({ data: [], hasMore: false, totalCount: 0 });
      expect(lastCall("ledger.listTransactions")).toMatchObject({ platformId: admin.platformId, customerId: agent.customerId, platformCustomerId: "", status: "COMPLETED", type: "OUTGOING", ascending: true, page: { limit: 7 } });
      const one = await call("GET", "/agents/me/transactions/Transaction:0197a000-0000-7000-8000-00000000000a", { as });
      expect(one.json()).toMatchObject({ id: "Transaction:0197a000-0000-7000-8000-00000000000a", agentId: expect.stringMatching(/^Agent:/) });
      expect(lastCall("ledger.getTransaction")).toMatchObject({ customerId: agent.customerId });
    });

    it("reads the customer's internal accounts and manages its external accounts (customerId inferred; DELETE 204 without a body)", async () => {
      const { agent, as } = agentWith(["MANAGE_EXTERNAL_ACCOUNTS"]);
      const internal = await call("GET", "/agents/me/internal-accounts?currency=USD&type=INTERNAL_FIAT", { as });
      expect(internal.json()).toMatchObject({ data: [{ customerId: agent.customerId, balance: { amount: 7 } }], totalCount: 1 });
      expect(lastCall("ledger.listInternalAccounts")).toMatchObject({ owner: "CUSTOMER", customerId: agent.customerId, currency: "USD", type: "INTERNAL_FIAT" });

      const created = await call("POST", "/agents/me/external-accounts", { as, body: { currency: "USD", accountInfo: { accountType: "USD_ACCOUNT" } } });
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json().customerId).toBe(agent.customerId);
      expect(lastCall("ledger.createExternalAccount")).toMatchObject({ owner: "CUSTOMER", customerId: agent.customerId, currency: "USD" });
      const same = await call("POST", "/agents/me/external-accounts", { as, body: { customerId: agent.customerId, currency: "USD", accountInfo: { accountType: "USD_ACCOUNT" } } });
      expect(same.statusCode).toBe(201);

      expect((await call("GET", "/agents/me/external-accounts?currency=USD", { as })).json()).toMatchObject({ data: [], hasMore: false });
      expect(lastCall("ledger.listExternalAccounts")).toMatchObject({ customerId: agent.customerId, currency: "USD" });

      const id = "ExternalAccount:0197a000-0000-7000-8000-000000000002";
      expect((await call("GET", `/agents/me/external-accounts/${id}`, { as })).json().id).toBe(id);
      expect(lastCall("ledger.getExternalAccount")).toMatchObject({ customerId: agent.customerId, accountId: id });
      const del = await call("DELETE", `/agents/me/external-accounts/${id}`, { as });
      expect(del.statusCode).toBe(204);
      expect(del.body).toBe("");
      expect(lastCall("ledger.deleteExternalAccount")).toMatchObject({ customerId: agent.customerId, accountId: id });
    });
  });

  describe("contract", () => {
    it("documents every agent route: bearerAuth on /agents/me/*, basicAuth on /agents/*, no security on redeem; the document stays valid", async () => {
      const res = await app.inject({ method: "GET", url: `${V}/openapi.json` });
      const doc = res.json();
      expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
      expect(doc.tags.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(["Agents", "Agent operations"]));
      const paths = doc.paths as Record<string, Record<string, { security: unknown; tags: string[]; summary: string; description: string }>>;
      const expected: [string, string][] = [
        ["/agents", "post"], ["/agents", "get"], ["/agents/approvals", "get"], ["/agents/{agentId}", "get"], ["/agents/{agentId}", "patch"],
        ["/agents/{agentId}", "delete"], ["/agents/{agentId}/policy", "patch"], ["/agents/{agentId}/device-codes", "post"],
        ["/agents/device-codes/{code}/status", "get"], ["/agents/device-codes/{code}/redeem", "post"],
        ["/agents/{agentId}/actions/{actionId}/approve", "post"], ["/agents/{agentId}/actions/{actionId}/reject", "post"],
        ["/agents/me", "get"], ["/agents/me/actions", "get"], ["/agents/me/actions/{actionId}", "get"], ["/agents/me/quotes", "post"],
        ["/agents/me/quotes/{quoteId}", "get"], ["/agents/me/quotes/{quoteId}/execute", "post"], ["/agents/me/transfer-in", "post"],
        ["/agents/me/transfer-out", "post"], ["/agents/me/transactions", "get"], ["/agents/me/transactions/{transactionId}", "get"],
        ["/agents/me/internal-accounts", "get"], ["/agents/me/external-accounts", "post"], ["/agents/me/external-accounts", "get"],
        ["/agents/me/external-accounts/{externalAccountId}", "get"], ["/agents/me/external-accounts/{externalAccountId}", "delete"],
      ];
      for (const [path, method] of expected) {
        const op = paths[path]?.[method];
        expect(op, `${method} ${path}`).toBeDefined();
        expect(op!.summary).toBeTruthy();
        if (path.startsWith("/agents/me")) {
          expect(op!.security).toEqual([{ bearerAuth: [] }]);
          expect(op!.tags).toEqual(["Agent operations"]);
          expect(op!.description).toContain("401");
        } else if (path.endsWith("/redeem")) {
          expect(op!.security).toEqual([]);
        } else {
          expect(op!.security).toEqual([{ basicAuth: [] }]);
          expect(op!.tags).toEqual(["Agents"]);
        }
      }
      const result = await new Validator().validate(doc);
      expect(result.valid, JSON.stringify(result.errors)).toBe(true);
      expect((await app.inject({ method: "GET", url: `${V}/docs/` })).statusCode).toBe(200);
    });
  });
});
