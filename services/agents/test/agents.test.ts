import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_PERMISSIONS, expectPublicError, fieldsOf, startHarness, transferOut, world, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const MINUTE = 60_000;

describe("creating and reading agents", () => {
  it("creates an agent with the safe default policy, zero usage and a first device code", async () => {
    const platformId = h.newPlatform();
    const customerId = h.newCustomer(platformId);
    const res = await h.client.createAgent({ platformId, customerId, name: "Bookkeeper" });
    const agent = res.agent!;
    expect(agent).toMatchObject({ platformId, customerId, name: "Bookkeeper", isPaused: false, isConnected: false });
    expect(agent.id).toMatch(/^Agent:/);
    expect(agent.policy).toMatchObject({ permissions: ["VIEW_TRANSACTIONS"], defaultExecutionMode: "APPROVAL_REQUIRED" });
    expect(agent.policy?.spendingLimits).toBeUndefined();
    expect(agent.policy?.accountRestrictions?.hasAllowedAccountIds).toBe(false);
    expect(agent.usage).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n, monthlySpend: 0n, dailyResetDate: "2026-11-24", monthlyResetMonth: "2026-12" });
    expect(res.deviceCode).toMatchObject({ agentId: agent.id, redeemed: false, status: "PENDING" });
  });

  it("answers 404 USER_NOT_FOUND for another platform's, a deleted, an unknown or a malformed customer", async () => {
    const platformId = h.newPlatform();
    const foreign = h.newCustomer(h.newPlatform());
    const deleted = h.newCustomer(platformId);
    h.customers.get(deleted)!.isDeleted = true;
    for (const customerId of [foreign, deleted, "Customer:0190a3b4-0000-7000-8000-000000000000", "not-an-id"]) {
      await expectPublicError(h.client.createAgent({ platformId, customerId, name: "x" }), "NOT_FOUND", "USER_NOT_FOUND");
    }
  });

  it("refuses a blank, oversize or NUL-carrying name with 400 naming the field", async () => {
    const platformId = h.newPlatform();
    const customerId = h.newCustomer(platformId);
    for (const name of ["", "   ", "x".repeat(256), "a\u0000b"]) {
      const err = await expectPublicError(h.client.createAgent({ platformId, customerId, name }), "INVALID", "INVALID_INPUT");
      expect(fieldsOf(err)).toEqual(["name"]);
    }
  });

  it("lists a platform's agents newest first with keyset pages, totalCount and the customer and paused filters", async () => {
    const platformId = h.newPlatform();
    const c1 = h.newCustomer(platformId);
    const c2 = h.newCustomer(platformId);
    const ids: string[] = [];
    for (const customerId of [c1, c1, c2]) {
      ids.push((await h.client.createAgent({ platformId, customerId, name: "a" })).agent!.id);
      h.clock.advance(1000);
    }
    await h.client.updateAgent({ platformId, agentId: ids[0]!, isPaused: true });
    const first = await h.client.listAgents({ platformId, page: { limit: 2 } });
    expect(first.agents.map((a) => a.id)).toEqual([ids[2], ids[1]]);
    expect(first.pageInfo).toMatchObject({ hasMore: true, totalCount: 3n });
    const second = await h.client.listAgents({ platformId, page: { limit: 2, cursor: first.pageInfo!.nextCursor } });
    expect(second.agents.map((a) => a.id)).toEqual([ids[0]]);
    expect(second.pageInfo?.hasMore).toBe(false);
    expect((await h.client.listAgents({ platformId, customerId: c1 })).agents.map((a) => a.id)).toEqual([ids[1], ids[0]]);
    expect((await h.client.listAgents({ platformId, isPaused: true })).agents.map((a) => a.id)).toEqual([ids[0]]);
    expect((await h.client.listAgents({ platformId: h.newPlatform() })).agents).toEqual([]);
    await expectPublicError(h.client.listAgents({ platformId, page: { cursor: "bm9wZQ" } }), "INVALID", "INVALID_INPUT");
    await expectPublicError(h.client.listAgents({ platformId, page: { limit: 101 } }), "INVALID", "INVALID_INPUT");
  });

  it("renames, pauses and resumes; another platform's or a malformed agent id is 404 and changes nothing", async () => {
    const w = await world(h);
    const renamed = await h.client.updateAgent({ platformId: w.platformId, agentId: w.agentId, name: "Renamed", isPaused: true });
    expect(renamed.agent).toMatchObject({ name: "Renamed", isPaused: true });
    expect((await h.client.updateAgent({ platformId: w.platformId, agentId: w.agentId, isPaused: false })).agent).toMatchObject({ name: "Renamed", isPaused: false });
    const stranger = h.newPlatform();
    await expectPublicError(h.client.getAgent({ platformId: stranger, agentId: w.agentId }), "NOT_FOUND", "AGENT_NOT_FOUND");
    await expectPublicError(h.client.updateAgent({ platformId: stranger, agentId: w.agentId, isPaused: true }), "NOT_FOUND", "AGENT_NOT_FOUND");
    await expectPublicError(h.client.deleteAgent({ platformId: stranger, agentId: w.agentId }), "NOT_FOUND", "AGENT_NOT_FOUND");
    await expectPublicError(h.client.getAgent({ platformId: w.platformId, agentId: "Agent:'; drop table agents; --" }), "NOT_FOUND", "AGENT_NOT_FOUND");
    expect((await h.client.getAgent({ platformId: w.platformId, agentId: w.agentId })).agent?.isPaused).toBe(false);
  });
});

describe("device codes", () => {
  it("issues 8 unambiguous characters shown as ABCD-EFGH that expire 15 minutes later on the platform's clock", async () => {
    const platformId = h.newPlatform();
    h.sandboxOffsetMs.set(platformId, 3 * 24 * 60 * MINUTE); // the platform's sandbox clock was advanced 3 days
    const customerId = h.newCustomer(platformId);
    const { deviceCode } = await h.client.createAgent({ platformId, customerId, name: "a" });
    expect(deviceCode!.code).toMatch(/^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{4}-[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{4}$/);
    const expiresAt = Number(deviceCode!.expiresAt!.seconds) * 1000;
    expect(expiresAt).toBe(h.platformNow(platformId).getTime() + 15 * MINUTE);

    h.clock.advance(15 * MINUTE - 1000);
    expect((await h.client.getDeviceCodeStatus({ platformId, code: deviceCode!.code })).deviceCode?.status).toBe("PENDING");
    h.clock.advance(1000);
    expect((await h.client.getDeviceCodeStatus({ platformId, code: deviceCode!.code })).deviceCode?.status).toBe("EXPIRED");
    await expectPublicError(h.client.redeemDeviceCode({ code: deviceCode!.code }), "INVALID", "INVALID_DEVICE_CODE");
  });

  it("redeems once, case and dash insensitive, into an agt_ token stored only as its SHA-256; the agent is then connected", async () => {
    const w = await world(h, { permissions: ["VIEW_TRANSACTIONS"] });
    const code = (await h.client.issueDeviceCode({ platformId: w.platformId, agentId: w.agentId })).deviceCode!.code;
    const redeemed = await h.client.redeemDeviceCode({ code: code.replace("-", "").toLowerCase() });
    expect(redeemed.accessToken).toMatch(/^agt_[A-Za-z0-9_-]{43}$/);
    expect(redeemed.agent).toMatchObject({ id: w.agentId, isConnected: true });

    const stored = await h.db.forSchema<any>("agents").selectFrom("access_tokens").selectAll().where("agent_id", "=", w.agentId).execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.token_hash).toBe(createHash("sha256").update(redeemed.accessToken).digest("hex"));
    expect(JSON.stringify(stored)).not.toContain(redeemed.accessToken.slice(4));

    await expectPublicError(h.client.redeemDeviceCode({ code }), "INVALID", "INVALID_DEVICE_CODE");
    expect((await h.client.getDeviceCodeStatus({ platformId: w.platformId, code })).deviceCode).toMatchObject({ status: "REDEEMED", redeemed: true });
    expect((await h.client.getAgent({ platformId: w.platformId, agentId: w.agentId })).agent?.isConnected).toBe(true);
    await expectPublicError(h.client.issueDeviceCode({ platformId: w.platformId, agentId: w.agentId }), "CONFLICT", "AGENT_ALREADY_CONNECTED");
  });

  it("a new code voids the older unredeemed one; unknown and malformed codes are 400 to redeem and 404 to another platform's status", async () => {
    const w = await world(h);
    const first = (await h.client.issueDeviceCode({ platformId: w.platformId, agentId: w.agentId })).deviceCode!.code;
    const second = (await h.client.issueDeviceCode({ platformId: w.platformId, agentId: w.agentId })).deviceCode!.code;
    expect(second).not.toBe(first);
    expect((await h.client.getDeviceCodeStatus({ platformId: w.platformId, code: first })).deviceCode?.status).toBe("VOIDED");
    await expectPublicError(h.client.redeemDeviceCode({ code: first }), "INVALID", "INVALID_DEVICE_CODE");
    for (const code of ["AAAA-AAAA", "0000-0000", "", "x".repeat(5000), "AB\u0000D-EFGH"]) {
      await expectPublicError(h.client.redeemDeviceCode({ code }), "INVALID", "INVALID_DEVICE_CODE");
    }
    await expectPublicError(h.client.getDeviceCodeStatus({ platformId: h.newPlatform(), code: second }), "NOT_FOUND", "DEVICE_CODE_NOT_FOUND");
    expect((await h.client.redeemDeviceCode({ code: second })).agent?.id).toBe(w.agentId);
  });

  it("two concurrent redeems of one code have exactly one winner", async () => {
    const w = await world(h);
    const code = (await h.client.issueDeviceCode({ platformId: w.platformId, agentId: w.agentId })).deviceCode!.code;
    const results = await Promise.allSettled([h.client.redeemDeviceCode({ code }), h.client.redeemDeviceCode({ code })]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
  });
});

describe("access tokens", () => {
  it("authenticates a token to its agent, and answers 401 for a bad token and at once after the agent is deleted", async () => {
    const w = await world(h);
    const code = (await h.client.issueDeviceCode({ platformId: w.platformId, agentId: w.agentId })).deviceCode!.code;
    const { accessToken } = await h.client.redeemDeviceCode({ code });
    expect((await h.client.authenticateAgent({ accessToken })).agent).toMatchObject({ id: w.agentId, platformId: w.platformId, customerId: w.customerId });
    for (const bad of ["agt_nope", "", accessToken.slice(0, -1), `Bearer ${accessToken}`]) {
      await expectPublicError(h.client.authenticateAgent({ accessToken: bad }), "UNAUTHENTICATED", "UNAUTHORIZED");
    }
    await h.client.deleteAgent({ platformId: w.platformId, agentId: w.agentId });
    await expectPublicError(h.client.authenticateAgent({ accessToken }), "UNAUTHENTICATED", "UNAUTHORIZED");
    await expectPublicError(h.client.getAgent({ platformId: w.platformId, agentId: w.agentId }), "NOT_FOUND", "AGENT_NOT_FOUND");
  });

  it("deleting fails the agent's pending actions AGENT_INACTIVE, gives their reservation back, and keeps them readable", async () => {
    const w = await world(h, { permissions: ALL_PERMISSIONS, defaultExecutionMode: "APPROVAL_REQUIRED", spendingLimits: { currency: "USD", dailyLimit: 10_000n } });
    const pending = (await transferOut(h, w, 700n)).action!;
    expect(pending.status).toBe("PENDING_APPROVAL");
    await h.client.deleteAgent({ platformId: w.platformId, agentId: w.agentId });
    const after = (await h.client.getAgentAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id })).action!;
    expect(after).toMatchObject({ status: "FAILED", failureReason: "AGENT_INACTIVE" });
    expect((await h.client.listApprovals({ platformId: w.platformId, agentId: w.agentId })).actions).toEqual([]);
    const usage = (await h.db.forSchema<any>("agents").selectFrom("usage").selectAll().where("agent_id", "=", w.agentId).execute()) as { count: bigint; amount: bigint }[];
    expect(usage.every((u) => u.count === 0n && u.amount === 0n)).toBe(true);
    const types = (await h.events()).filter((e) => e.payload.value?.action?.id === pending.id).map((e) => e.eventType);
    expect(types).toEqual(["AGENT_ACTION_PENDING_APPROVAL", "AGENT_ACTION_FAILED"]);
  });
});

describe("policies", () => {
  it("validates permissions, modes, currencies and limits, naming every bad field at once", async () => {
    const platformId = h.newPlatform();
    const customerId = h.newCustomer(platformId);
    const err = await expectPublicError(
      h.client.createAgent({
        platformId,
        customerId,
        name: "bad",
        policy: {
          permissions: ["VIEW_TRANSACTIONS", "LAUNCH_ROCKETS"],
          defaultExecutionMode: "SOMETIMES",
          spendingLimits: { currency: "XXX", perTransactionLimit: -1n, dailyLimit: 9_000_000_000_000_001n },
          approvalThresholds: { currency: "USD", amount: -5n },
        },
      }),
      "INVALID",
      "INVALID_INPUT",
    );
    expect(fieldsOf(err).sort()).toEqual(
      [
        "policy.permissions[1]",
        "policy.defaultExecutionMode",
        "policy.spendingLimits.currency",
        "policy.spendingLimits.perTransactionLimit",
        "policy.spendingLimits.dailyLimit",
        "policy.approvalThresholds.amount",
      ].sort(),
    );
  });

  it("accepts only account ids of the agent's customer, by asking the ledger", async () => {
    const w = await world(h);
    const other = h.newCustomer(w.platformId);
    const foreign = h.newAccount(w.platformId, other, "INTERNAL");
    const foreignExternal = h.newAccount(w.platformId, other, "EXTERNAL");
    const err = await expectPublicError(
      h.client.updateAgentPolicy({
        platformId: w.platformId,
        agentId: w.agentId,
        patch: {
          allowedAccountIds: { values: [w.internal, foreign, "InternalAccount:nope"] },
          accountRules: { values: [{ accountId: foreignExternal, executionMode: "AUTO" }, { accountId: w.external, executionMode: "APPROVAL_REQUIRED" }] },
        },
      }),
      "INVALID",
      "INVALID_INPUT",
    );
    expect(fieldsOf(err).sort()).toEqual(["accountRestrictions.accountRules[0].accountId", "accountRestrictions.allowedAccountIds[1]", "accountRestrictions.allowedAccountIds[2]"].sort());
    const ok = await h.client.updateAgentPolicy({
      platformId: w.platformId,
      agentId: w.agentId,
      patch: { allowedAccountIds: { values: [w.internal] }, accountRules: { values: [{ accountId: w.external, executionMode: "AUTO", perTransactionLimit: 500n }] } },
    });
    expect(ok.agent?.policy?.accountRestrictions).toMatchObject({ allowedAccountIds: [w.internal], hasAllowedAccountIds: true, accountRules: [{ accountId: w.external, executionMode: "AUTO", perTransactionLimit: 500n }] });
  });

  it("a patch changes only the fields it names: limits field by field, clears remove restrictions and thresholds", async () => {
    const w = await world(h, {
      permissions: ["CREATE_TRANSFERS"],
      defaultExecutionMode: "AUTO",
      spendingLimits: { currency: "USD", dailyLimit: 1_000n, monthlyLimit: 5_000n },
      approvalThresholds: { currency: "USD", amount: 300n },
    });
    const patch = (p: object) => h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: p }).then((r) => r.agent!.policy!);

    let p = await patch({ spendingLimits: { dailyLimit: 2_000n } });
    expect(p.spendingLimits).toMatchObject({ currency: "USD", dailyLimit: 2_000n, monthlyLimit: 5_000n, perTransactionLimit: 0n });
    expect(p).toMatchObject({ permissions: ["CREATE_TRANSFERS"], defaultExecutionMode: "AUTO", approvalThresholds: { currency: "USD", amount: 300n } });

    p = await patch({ allowedAccountIds: { values: [w.internal] } });
    expect(p.accountRestrictions).toMatchObject({ hasAllowedAccountIds: true, allowedAccountIds: [w.internal] });
    p = await patch({ allowedAccountIds: { values: [] } });
    expect(p.accountRestrictions).toMatchObject({ hasAllowedAccountIds: true, allowedAccountIds: [] });
    p = await patch({ clearAllowedAccountIds: true, clearApprovalThresholds: true });
    expect(p.accountRestrictions?.hasAllowedAccountIds).toBe(false);
    expect(p.approvalThresholds).toBeUndefined();

    p = await patch({ permissions: { values: [] }, defaultExecutionMode: "APPROVAL_REQUIRED" });
    expect(p).toMatchObject({ permissions: [], defaultExecutionMode: "APPROVAL_REQUIRED" });
    expect(p.spendingLimits).toMatchObject({ dailyLimit: 2_000n, monthlyLimit: 5_000n });

    const err = await expectPublicError(patch({ approvalThresholds: { currency: "USD", amount: 1n }, clearApprovalThresholds: true }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(err)).toEqual(["approvalThresholds"]);
    const bad = await expectPublicError(patch({ spendingLimits: { currency: "DOGE" } }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(bad)).toEqual(["spendingLimits.currency"]);
  });
});
