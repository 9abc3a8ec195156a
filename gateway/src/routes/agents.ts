import { appErrorFromConnect } from "@corridor/kit";
import { principalOf } from "../auth.js";
import { agentActionToJson, agentPolicyToJson, agentToJson, deviceCodeToJson, policyPatchToProto, policyToProto } from "../mappers/agents.js";
import { timeRange } from "../mappers/tokens.js";
import {
  AgentActionListSchema,
  AgentActionParams,
  AgentIdParams,
  AgentListSchema,
  CreateAgentBody,
  CreatedAgentSchema,
  DeviceCodeParams,
  ListAgentsQuery,
  ListApprovalsQuery,
  PolicyPatchBody,
  RedeemedDeviceCodeSchema,
  RejectActionBody,
  UpdateAgentBody,
} from "../schemas/agents.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { listEnvelope, pageOf } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Agents"];

/**
 * The platform's side of agents (HTTP Basic): create and manage agents and their policies, issue
 * device codes, and approve or reject the actions that wait for it. Static segments
 * (`/agents/approvals`, `/agents/device-codes/…`, `/agents/me…`) win over `/agents/:agentId` in
 * Fastify's router whatever the registration order.
 */
export function agentRoutes(app: Api, { clients, guesses }: RouteDeps): void {
  app.post(
    "/agents",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Create an agent",
        description:
          "Creates an agent acting for one customer of the platform under a policy, and issues its first device code (15 minutes, single use). Policy defaults: permissions [VIEW_TRANSACTIONS], defaultExecutionMode APPROVAL_REQUIRED, no limits, no restrictions, no thresholds. 400 INVALID_INPUT naming the field (unknown permission or currency, limit out of range, an account of another customer); 404 USER_NOT_FOUND. Needs MANAGE.",
        tags,
        body: CreateAgentBody,
        response: { 201: CreatedAgentSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const b = request.body;
      const res = await clients.agents.createAgent({ platformId, customerId: b.customerId, name: b.name, policy: policyToProto(b.policy) });
      return reply.code(201).send({ agent: agentToJson(res.agent), deviceCode: deviceCodeToJson(res.deviceCode) });
    },
  );

  app.get(
    "/agents",
    {
      schema: {
        summary: "List agents",
        description: "The platform's agents, newest first, with their current usage. Filters combine. Needs VIEW.",
        tags,
        querystring: ListAgentsQuery,
        response: { 200: AgentListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.agents.listAgents({
        platformId,
        customerId: q.customerId ?? "",
        isPaused: q.isPaused,
        page: pageOf(q),
      });
      return listEnvelope(res.agents.map(agentToJson), res.pageInfo);
    },
  );

  app.get(
    "/agents/approvals",
    {
      schema: {
        summary: "List agent actions awaiting approval",
        description:
          "The platform's PENDING_APPROVAL agent actions (deleted agents' actions are not listed). startDate and endDate are inclusive and filter on submission time; newest first unless sortOrder=asc. Approve or reject each with POST /agents/{agentId}/actions/{actionId}/approve or /reject. Needs VIEW.",
        tags,
        querystring: ListApprovalsQuery,
        response: { 200: AgentActionListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.agents.listApprovals({
        platformId,
        agentId: q.agentId ?? "",
        customerId: q.customerId ?? "",
        created: timeRange(q.startDate, q.endDate),
        ascending: q.sortOrder === "asc",
        page: pageOf(q),
      });
      return listEnvelope(res.actions.map(agentActionToJson), res.pageInfo);
    },
  );

  app.get(
    "/agents/device-codes/:code/status",
    {
      schema: {
        summary: "Get a device code's status",
        description:
          "Whether a device code of the platform was redeemed: status PENDING, REDEEMED, EXPIRED or VOIDED (a newer code replaced it). Case and dashes are ignored. 404 DEVICE_CODE_NOT_FOUND for a code the platform never issued. Needs VIEW.",
        tags,
        params: DeviceCodeParams,
        response: { 200: Ref("DeviceCode", "The device code."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.agents.getDeviceCodeStatus({ platformId, code: request.params.code });
      return deviceCodeToJson(res.deviceCode);
    },
  );

  app.post(
    "/agents/device-codes/:code/redeem",
    {
      config: { auth: "none" },
      schema: {
        summary: "Redeem a device code",
        description:
          "Called by the agent's software, without credentials: exchanges a device code for the agent's access token (agt_…), shown only here; send it as Authorization: Bearer on the /agents/me routes. A code redeems once. 400 INVALID_DEVICE_CODE for a used, voided, expired or unknown code (one answer for all); 409 AGENT_ALREADY_CONNECTED when the agent already redeemed a code.",
        tags,
        params: DeviceCodeParams,
        response: { 200: RedeemedDeviceCodeSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const res = await guesses.guard(
        request,
        reply,
        "device-code redemption",
        () => clients.agents.redeemDeviceCode({ code: request.params.code }),
        (err) => appErrorFromConnect(err)?.code === "INVALID_DEVICE_CODE",
      );
      const agent = res.agent;
      if (!agent) throw new Error("agents answered RedeemDeviceCode without an agent");
      // The token is in the body: no cache may keep it.
      reply.header("cache-control", "no-store");
      return { agentId: agent.id, agentName: agent.name, accessToken: res.accessToken, policy: agentPolicyToJson(agent.policy) };
    },
  );

  app.get(
    "/agents/:agentId",
    {
      schema: {
        summary: "Get an agent",
        description: "The agent with its policy and current usage. 404 AGENT_NOT_FOUND (also for another platform's agent). Needs VIEW.",
        tags,
        params: AgentIdParams,
        response: { 200: Ref("Agent", "The agent."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.agents.getAgent({ platformId, agentId: request.params.agentId });
      return agentToJson(res.agent);
    },
  );

  app.patch(
    "/agents/:agentId",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Rename, pause or resume an agent",
        description:
          "A paused agent's /agents/me routes answer 403 AGENT_PAUSED (GET /agents/me still shows it, isPaused true); its pending actions stay pending. 404 AGENT_NOT_FOUND. Needs MANAGE.",
        tags,
        params: AgentIdParams,
        body: UpdateAgentBody,
        response: { 200: Ref("Agent", "The agent after the change."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.agents.updateAgent({ platformId, agentId: request.params.agentId, name: request.body.name, isPaused: request.body.isPaused });
      return agentToJson(res.agent);
    },
  );

  app.delete(
    "/agents/:agentId",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Delete an agent",
        description:
          "Deletes the agent (204, no body): its access token answers 401 from the next request on, and its pending actions become FAILED (AGENT_INACTIVE) with their reservations released. 404 AGENT_NOT_FOUND. Needs MANAGE.",
        tags,
        params: AgentIdParams,
        response: { 204: { type: "null", description: "Deleted." }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      await clients.agents.deleteAgent({ platformId, agentId: request.params.agentId });
      return reply.code(204).send(null);
    },
  );

  app.patch(
    "/agents/:agentId/policy",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Change an agent's policy",
        description:
          "Changes only the fields the body names: spendingLimits field by field (0 removes a limit); accountRestrictions.allowedAccountIds null removes the restriction; approvalThresholds null removes the thresholds. 400 INVALID_INPUT naming the field; 404 AGENT_NOT_FOUND. Needs MANAGE.",
        tags,
        params: AgentIdParams,
        body: PolicyPatchBody,
        response: { 200: Ref("Agent", "The agent with its new policy."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.agents.updateAgentPolicy({ platformId, agentId: request.params.agentId, patch: policyPatchToProto(request.body) });
      return agentToJson(res.agent);
    },
  );

  app.post(
    "/agents/:agentId/device-codes",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Issue a new device code",
        description:
          "Issues a device code (15 minutes on the platform's clock, single use) and voids the agent's older unredeemed codes. 409 AGENT_ALREADY_CONNECTED once a code was redeemed; 404 AGENT_NOT_FOUND. Needs MANAGE.",
        tags,
        params: AgentIdParams,
        response: { 201: Ref("DeviceCode", "The new device code."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await clients.agents.issueDeviceCode({ platformId, agentId: request.params.agentId });
      return reply.code(201).send(deviceCodeToJson(res.deviceCode));
    },
  );

  app.post(
    "/agents/:agentId/actions/:actionId/approve",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Approve an agent action",
        description:
          "Approves a PENDING_APPROVAL action and executes it if the agent's policy as it is now still allows it: 200 the AgentAction, APPROVED with its transaction, or FAILED with failureReason (POLICY_DENIED when the policy no longer allows it: a permission, an allowed account, a per-transaction limit, or the daily count, daily or monthly sum of the action's windows, named in failureMessage; QUOTE_EXPIRED once the quote expired, INSUFFICIENT_BALANCE, EXECUTION_FAILED). No body. 409 INVALID_STATE_TRANSITION when the action is not pending (x-should-retry: false); 404 AGENT_NOT_FOUND or AGENT_ACTION_NOT_FOUND. Needs TRANSACT.",
        tags,
        params: AgentActionParams,
        response: { 200: Ref("AgentAction", "The action after execution."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.agents.approveAction({ platformId, agentId: request.params.agentId, actionId: request.params.actionId });
      return agentActionToJson(res.action);
    },
  );

  app.post(
    "/agents/:agentId/actions/:actionId/reject",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Reject an agent action",
        description:
          "Rejects a PENDING_APPROVAL action: 200 the AgentAction, REJECTED with rejectionReason; nothing moves and the usage it reserved is released. Optional body {reason}. 409 INVALID_STATE_TRANSITION when the action is not pending (x-should-retry: false); 404 AGENT_NOT_FOUND or AGENT_ACTION_NOT_FOUND. Needs TRANSACT.",
        tags,
        params: AgentActionParams,
        body: RejectActionBody,
        response: { 200: Ref("AgentAction", "The rejected action."), ...errorResponses },
      },
      // The body is optional: no body (or an empty one) is {}.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.agents.rejectAction({
        platformId,
        agentId: request.params.agentId,
        actionId: request.params.actionId,
        reason: request.body?.reason ?? "",
      });
      return agentActionToJson(res.action);
    },
  );
}
