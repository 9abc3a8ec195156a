import { inTransaction } from "@corridor/kit";
import type { Kysely, Transaction } from "kysely";
import type { Action } from "../domain/model.js";
import type { Store, StoreTx } from "../domain/ports.js";
import * as actions from "./actions.js";
import * as agents from "./agents.js";
import { completeKey } from "./idempotency.js";
import type { AgentsDatabase } from "./tables.js";

/** Writes an action's AgentEvent into the outbox of the transaction (events/agent-events.ts). */
export type ActionEventWriter = (trx: Transaction<AgentsDatabase>, action: Action, at: Date) => Promise<void>;

/**
 * The domain's Store over Kysely: reads on the schema's database, and StoreTx statements bound to
 * one transaction. The repositories (agents.ts, actions.ts) do the SQL; this only wires them.
 */
export function createStore(db: Kysely<AgentsDatabase>, writeEvent: ActionEventWriter): Store {
  const bind = (trx: Transaction<AgentsDatabase>): StoreTx => ({
    insertAgent: (a) => agents.insertAgent(trx, a),
    lockAgent: (p, id) => agents.lockAgent(trx, p, id),
    updateAgent: (p, id, c) => agents.updateAgent(trx, p, id, c),
    insertDeviceCode: (d) => agents.insertDeviceCode(trx, d),
    voidOpenDeviceCodes: (p, id, at) => agents.voidOpenDeviceCodes(trx, p, id, at),
    lockDeviceCode: (code) => agents.findDeviceCode(trx, code, { lock: true }),
    markDeviceCodeRedeemed: (code, at) => agents.markDeviceCodeRedeemed(trx, code, at),
    insertAccessToken: (h, p, id, at) => agents.insertAccessToken(trx, h, p, id, at),
    deleteAccessTokens: (p, id) => agents.deleteAccessTokens(trx, p, id),
    usage: async (p, id, day, month) => (await actions.usageOf(trx, p, [id], day, month)).get(id) ?? { dayCount: 0n, dayAmount: 0n, monthAmount: 0n },
    reserve: (a) => actions.changeUsage(trx, a, 1n),
    release: (a) => actions.changeUsage(trx, a, -1n),
    insertAction: (a) => actions.insertAction(trx, a),
    lockAction: (p, id) => actions.findAction(trx, p, id, { lock: true }),
    saveAction: (a) => actions.saveAction(trx, a),
    saveTransactionSnapshot: (p, id, s) => actions.saveTransactionSnapshot(trx, p, id, s),
    lockPendingActions: (p, id) => actions.lockPendingActions(trx, p, id),
    liveActionForQuote: (p, q) => actions.liveActionForQuote(trx, p, q),
    actionByTransaction: (p, t) => actions.actionByTransaction(trx, p, t),
    lockTransactionKey: (p, t) => actions.lockTransactionKey(trx, p, t),
    earlyOutcome: (p, t) => actions.earlyOutcome(trx, p, t),
    recordEarlyOutcome: (p, t, at) => actions.recordEarlyOutcome(trx, p, t, at),
    actionChanged: (a, at) => writeEvent(trx, a, at),
    completeIdempotencyKey: (ref, body) => completeKey(trx, ref, body),
  });

  return {
    transaction: (fn) => inTransaction(db, (trx) => fn(bind(trx))),
    within: (trx) => bind(trx as Transaction<AgentsDatabase>),
    agent: (p, id) => agents.findAgent(db, p, id),
    agentByTokenHash: (h) => agents.agentByTokenHash(db, h),
    listAgents: (f, q) => agents.listAgents(db, f, q),
    countAgents: (f) => agents.countAgents(db, f),
    usages: (p, ids, day, month) => actions.usageOf(db, p, ids, day, month),
    deviceCode: (code) => agents.findDeviceCode(db, code),
    action: (p, id) => actions.findAction(db, p, id),
    listActions: (f, q) => actions.listActions(db, f, q),
    countActions: (f) => actions.countActions(db, f),
    staleExecutions: (before, limit) => actions.staleExecutions(db, before, limit),
    reclaimExecution: (a, at) => actions.reclaimExecution(db, a, at),
    platformsWithExpiringActions: () => actions.platformsWithExpiringActions(db),
    expiredPendingActions: (p, now, limit) => actions.expiredPendingActions(db, p, now, limit),
    pruneEarlyOutcomes: (before) => actions.pruneEarlyOutcomes(db, before),
  };
}
