import type { Logger } from "@corridor/kit";
import type { Action } from "./model.js";
import type { LedgerPort, QuotesPort } from "./ports.js";

/**
 * Reads show the quote and transaction as they are now (quotes-fx GetQuote, ledger
 * GetTransaction). `what` says which to fetch; the other keeps its last snapshot. A service that
 * cannot answer leaves the snapshot in place: a read never fails because a neighbour is slow.
 */
export interface Hydrator {
  hydrate(action: Action, what: { quote: boolean; transaction: boolean }): Promise<Action>;
  /** GetAgentAction and answers to a single request: everything fresh. */
  full(action: Action): Promise<Action>;
  /** List pages: at most one call per action (the quote for quote executions, else the transaction). */
  forList(actions: Action[]): Promise<Action[]>;
}

export function createHydrator(deps: { quotes: QuotesPort; ledger: LedgerPort; log: Pick<Logger, "warn"> }): Hydrator {
  async function hydrate(a: Action, what: { quote: boolean; transaction: boolean }): Promise<Action> {
    const [quote, transaction] = await Promise.all([
      what.quote && a.quoteId
        ? deps.quotes.get(a.platformId, a.quoteId, a.agentId).catch((err) => {
            deps.log.warn({ err, actionId: a.id }, "could not read the action's quote; showing the last one seen");
            return undefined;
          })
        : undefined,
      what.transaction && a.transactionId
        ? deps.ledger.transaction(a.platformId, a.transactionId).catch((err) => {
            deps.log.warn({ err, actionId: a.id }, "could not read the action's transaction; showing the last one seen");
            return undefined;
          })
        : undefined,
    ]);
    return {
      ...a,
      quoteSnapshot: quote?.snapshot ?? a.quoteSnapshot,
      transactionSnapshot: transaction?.snapshot ?? a.transactionSnapshot,
    };
  }
  return {
    hydrate,
    full: (a) => hydrate(a, { quote: true, transaction: true }),
    forList: (actions) => Promise.all(actions.map((a) => hydrate(a, a.type === "EXECUTE_QUOTE" ? { quote: true, transaction: false } : { quote: false, transaction: true }))),
  };
}
