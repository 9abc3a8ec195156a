import type { Action, ActionStatus, FailureReason } from "./model.js";
import type { StoreTx } from "./ports.js";

/**
 * Every change of an action goes through here, inside a transaction that holds the agent's row
 * lock and the action's: a REJECTED or FAILED action gives its reservation back, and a status
 * change enqueues its AgentEvent in the same transaction.
 */

const LIVE: ActionStatus[] = ["PENDING_APPROVAL", "APPROVED"];
export const isLive = (s: ActionStatus) => LIVE.includes(s);

export type ActionChange = Partial<
  Pick<Action, "status" | "transactionId" | "executionState" | "executionClaimedAt" | "rejectionReason" | "failureReason" | "failureMessage" | "quoteSnapshot" | "transactionSnapshot">
>;

export async function changeAction(tx: StoreTx, action: Action, change: ActionChange, at: Date): Promise<Action> {
  const next: Action = { ...action, ...change, updatedAt: at };
  if (isLive(action.status) && !isLive(next.status)) await tx.release(action);
  await tx.saveAction(next);
  if (next.status !== action.status) await tx.actionChanged(next, at);
  return next;
}

export function failAction(tx: StoreTx, action: Action, reason: FailureReason, message: string, at: Date, extra: ActionChange = {}): Promise<Action> {
  return changeAction(tx, action, { ...extra, status: "FAILED", failureReason: reason, failureMessage: message, executionState: action.executionState === "EXECUTING" ? "EXECUTED" : action.executionState, executionClaimedAt: null }, at);
}
