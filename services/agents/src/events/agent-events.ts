import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { agentEventTopic, enqueueEvent, newId } from "@corridor/kit";
import { AgentEventSchema } from "@corridor/proto/corridor/agents/v1/events_pb.js";
import type { Transaction } from "kysely";
import type { Action } from "../domain/model.js";
import { actionToPb } from "../handlers/mappers.js";

/** AGENT_ACTION_PENDING_APPROVAL, AGENT_ACTION_APPROVED, AGENT_ACTION_REJECTED, AGENT_ACTION_FAILED. */
export const actionEventType = (a: Action) => `AGENT_ACTION_${a.status}`;

/**
 * Enqueues the AgentEvent of an action's new status on its topic (the kit's agentEventTopic: the
 * approval request for notifications, the others for no reader; key: the agent id, so
 * one agent's events arrive in order), inside the transaction that made the change. The action
 * carries the quote and transaction as last seen, so a webhook's `data` is the action as GET shows it.
 */
export async function writeActionEvent(trx: Transaction<any>, action: Action, at: Date): Promise<void> {
  const eventId = newId("Event");
  const eventType = actionEventType(action);
  await enqueueEvent(trx, {
    topic: agentEventTopic({ eventType }),
    key: action.agentId,
    eventId,
    eventType,
    schema: AgentEventSchema,
    message: create(AgentEventSchema, {
      eventId,
      occurredAt: timestampFromDate(at),
      platformId: action.platformId,
      eventType,
      payload: { case: "actionChanged", value: { action: actionToPb(action) } },
    }),
  });
}
