import { fromBinary } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AgentsService } from "@corridor/proto/corridor/agents/v1/agents_service_pb.js";
import { QuoteSchema } from "@corridor/proto/corridor/quotes_fx/v1/quote_pb.js";
import type { Actions } from "../domain/actions.js";
import type { Agents } from "../domain/agents.js";
import type { QuoteFacts } from "../domain/model.js";
import {
  actionToPb,
  agentToPb,
  deviceCodeToPb,
  orUndefined,
  pageInfo,
  pageRequest,
  policyDraftFromPb,
  policyPatchFromPb,
  quoteRequestFromPb,
  timeRange,
} from "./mappers.js";

const quoteToPb = (q: QuoteFacts) => fromBinary(QuoteSchema, q.snapshot);

/** AgentsService: each RPC maps its request onto a use case and the result back. No decisions here. */
export function createAgentsHandler({ agents, actions }: { agents: Agents; actions: Actions }): ServiceImpl<typeof AgentsService> {
  return {
    async createAgent(req) {
      const r = await agents.create({ platformId: req.platformId, customerId: req.customerId, name: req.name, policy: policyDraftFromPb(req.policy) });
      return { agent: agentToPb(r.agent), deviceCode: deviceCodeToPb(r.deviceCode) };
    },

    async listAgents(req) {
      const page = await agents.list({ platformId: req.platformId, customerId: orUndefined(req.customerId), isPaused: req.isPaused }, pageRequest(req.page));
      return { agents: page.data.map(agentToPb), pageInfo: pageInfo(page) };
    },

    async getAgent(req) {
      return { agent: agentToPb(await agents.get(req.platformId, req.agentId)) };
    },

    async updateAgent(req) {
      return { agent: agentToPb(await agents.update(req.platformId, req.agentId, { name: req.name, isPaused: req.isPaused })) };
    },

    async deleteAgent(req) {
      await agents.delete(req.platformId, req.agentId);
      return {};
    },

    async updateAgentPolicy(req) {
      return { agent: agentToPb(await agents.updatePolicy(req.platformId, req.agentId, policyPatchFromPb(req.patch))) };
    },

    async issueDeviceCode(req) {
      return { deviceCode: deviceCodeToPb(await agents.issueDeviceCode(req.platformId, req.agentId)) };
    },

    async getDeviceCodeStatus(req) {
      return { deviceCode: deviceCodeToPb(await agents.deviceCodeStatus(req.platformId, req.code)) };
    },

    async redeemDeviceCode(req) {
      const r = await agents.redeem(req.code);
      return { agent: agentToPb(r.agent), accessToken: r.accessToken };
    },

    async authenticateAgent(req) {
      return { agent: agentToPb(await agents.authenticate(req.accessToken)) };
    },

    async listApprovals(req) {
      const page = await actions.listApprovals(
        { platformId: req.platformId, agentId: orUndefined(req.agentId), customerId: orUndefined(req.customerId), ...timeRange(req.created) },
        pageRequest(req.page),
        req.ascending,
      );
      return { actions: page.data.map(actionToPb), pageInfo: pageInfo(page) };
    },

    async approveAction(req) {
      return { action: actionToPb(await actions.approve(req.platformId, req.agentId, req.actionId)) };
    },

    async rejectAction(req) {
      return { action: actionToPb(await actions.reject(req.platformId, req.agentId, req.actionId, req.reason)) };
    },

    async listAgentActions(req) {
      const page = await actions.list(req.platformId, req.agentId, req.status, pageRequest(req.page));
      return { actions: page.data.map(actionToPb), pageInfo: pageInfo(page) };
    },

    async getAgentAction(req) {
      return { action: actionToPb(await actions.get(req.platformId, req.agentId, req.actionId)) };
    },

    async createAgentQuote(req) {
      const r = await actions.createQuote(req.platformId, req.agentId, quoteRequestFromPb(req.quote), req.idempotencyKey);
      return { quote: quoteToPb(r.quote), replayed: r.replayed };
    },

    async getAgentQuote(req) {
      return { quote: quoteToPb(await actions.getQuote(req.platformId, req.agentId, req.quoteId)) };
    },

    async submitQuoteExecution(req) {
      const r = await actions.submitQuoteExecution(req.platformId, req.agentId, req.quoteId, req.idempotencyKey);
      return { action: actionToPb(r.action), replayed: r.replayed };
    },

    async submitTransfer(req) {
      const r = await actions.submitTransfer(
        req.platformId,
        req.agentId,
        { direction: req.direction, sourceAccountId: req.sourceAccountId, destinationAccountId: req.destinationAccountId, amount: req.amount, description: req.description },
        req.idempotencyKey,
      );
      return { action: actionToPb(r.action), replayed: r.replayed };
    },
  };
}
