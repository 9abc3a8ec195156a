import { MAX_AMOUNT, errors, newId, pageSize, toPage, type Clock, type FieldError } from "@corridor/kit";
import { PULL_CAPABLE } from "./account-info.js";
import { newReference } from "./funding.js";
import { finalCustomerFacts } from "./facts.js";
import { after, approvedCustomer, checkAmount, requireTransactionType, type PageInput } from "./gates.js";
import type { Idempotent } from "./idempotency.js";
import type { TransactionFilter, TransactionRow } from "./model.js";
import type { AnswerCodec, Directory, LedgerStore } from "./ports.js";
import type { Quotes } from "./quote-transactions.js";
import { createdEventType, failedEventType } from "./transactions.js";
import { candidateRails, type RailRouter } from "./rails.js";
import { checkHold } from "./journal.js";
import { immediateRailFailure } from "./sandbox-admission.js";
import { applyOutcomeBatch, type RailOutcomeInput, type RailOutcomeResult } from "./rail-outcomes.js";

/** The rails that can debit an account on our request (decisions §9: USD accounts, by ACH pull). */
const PULL_RAILS: readonly string[] = ["ACH"];

/** The value of a settled promise, or its error thrown. */
function settled<T>(r: PromiseSettledResult<T>): T {
  if (r.status === "rejected") throw r.reason;
  return r.value;
}

export interface TransferInput {
  platformId: string;
  sourceAccountId: string;
  destinationAccountId: string;
  amount: bigint;
  idempotencyKey: string;
  description: string;
  agentId: string;
  /** When set, both accounts must be this customer's (agent calls). */
  customerId: string;
  /** OUT only: the rail chosen among the external account's (empty: the account's rails in order). */
  paymentRail?: string;
}

/**
 * Transfers between an internal and an external account of one owner (IN pulls from the external
 * account, OUT pays out to it: a hold now, a rail instruction, and the connector's outcome captures
 * or releases the hold), the rail outcomes that settle them, and the transactions list.
 */
export function createTransfers(deps: {
  store: LedgerStore;
  clock: Clock;
  directory: Directory;
  idempotent: Idempotent;
  answers: AnswerCodec<TransactionRow>;
  quotes: Pick<Quotes, "applyQuoteOutcome" | "outcomeAccounts">;
  rails: Pick<RailRouter, "route">;
}) {
  const { store, clock, directory, idempotent } = deps;

  /** Shared checks of both transfer directions, all before any transaction is opened. */
  async function prepareTransfer(input: TransferInput, direction: "IN" | "OUT") {
    checkAmount(input.amount, MAX_AMOUNT);
    const missing: FieldError[] = [];
    if (!input.sourceAccountId) missing.push({ field: "source.accountId", reason: "is required" });
    if (!input.destinationAccountId) missing.push({ field: "destination.accountId", reason: "is required" });
    if (missing.length) throw errors.invalidInput(missing);
    const internalId = direction === "OUT" ? input.sourceAccountId : input.destinationAccountId;
    const externalId = direction === "OUT" ? input.destinationAccountId : input.sourceAccountId;
    // Independent reads run together (the answer waits for the slowest, not their sum); their
    // failures are reported in the order the checks are written.
    // The accounts and the customer's copy are one statement (store.transferParties).
    const [partiesRead, environmentRead] = await Promise.allSettled([store.transferParties(input.platformId, internalId, externalId), directory.environment(input.platformId)]);
    const parties = settled(partiesRead);
    const internal = parties.internal;
    if (!internal || internal.owner_kind === "SYSTEM") throw errors.notFound("InternalAccount", internalId);
    const external = parties.external;
    if (!external) throw errors.notFound("ExternalAccount", externalId);
    if (input.customerId && (internal.customer_id !== input.customerId || external.customer_id !== input.customerId)) {
      throw errors.notFound(internal.customer_id !== input.customerId ? "InternalAccount" : "ExternalAccount", internal.customer_id !== input.customerId ? internalId : externalId);
    }
    if ((internal.customer_id ?? "") !== (external.customer_id ?? "")) {
      throw errors.badRequest("ACCOUNT_OWNER_MISMATCH", "Both accounts must belong to the same owner (the same customer, or both to the platform)", {
        internalAccountId: internal.id,
        externalAccountId: external.id,
      });
    }
    if (internal.currency !== external.currency) {
      throw errors.badRequest("CURRENCY_MISMATCH", `The internal account holds ${internal.currency} but the external account ${external.currency}`, {
        internalCurrency: internal.currency,
        externalCurrency: external.currency,
      });
    }
    if (direction === "IN" && !PULL_CAPABLE.has(external.account_type)) {
      throw errors.badRequest(
        "TRANSFER_IN_NOT_SUPPORTED",
        `A ${external.account_type} cannot be pulled from; deposit by paying the destination account's fundingPaymentInstructions instead`,
        { accountType: external.account_type, destinationAccountId: internal.id },
      );
    }
    if (direction === "OUT" && internal.type === "EMBEDDED_WALLET") {
      throw errors.badRequest("EMBEDDED_WALLET_TRANSFER_NOT_SUPPORTED", "Transfers out of an embedded wallet need a wallet signature and are made through quotes");
    }
    const [typeCheck, customerRead] = await Promise.allSettled([
      requireTransactionType(directory, input.platformId, internal.currency, direction === "OUT" ? "OUTGOING" : "INCOMING"),
      internal.customer_id ? approvedCustomer(directory, input.platformId, internal.customer_id, finalCustomerFacts(parties.customerCopy)) : undefined,
    ]);
    settled(typeCheck);
    settled(environmentRead);
    // Where the instruction will go: the simulator for a sandbox platform, the operator's binding
    // for a production one (400 PAYMENT_RAIL_NOT_AVAILABLE without one), before anything is held.
    let rails = direction === "IN" ? PULL_RAILS : candidateRails(external.account_info);
    if (input.paymentRail) {
      // A chosen rail must be one the external account can be paid over (Grid's destination.paymentRail).
      if (direction === "IN") throw errors.invalidInput([{ field: "destination.paymentRail", reason: "applies to transfers out only" }]);
      if (!rails.includes(input.paymentRail)) {
        throw errors.invalidInput([{ field: "destination.paymentRail", reason: `must be one of the external account's payment rails: ${rails.join(", ")}` }]);
      }
      rails = [input.paymentRail];
    }
    const route = await deps.rails.route(input.platformId, internal.currency, rails);
    const customer = settled(customerRead);
    return { internal, external, route, platformCustomerId: customer?.platformCustomerId ?? null };
  }

  /**
   * The batch of outcomes (applyRailOutcomes): see there.
   */
  async function applyRailOutcomes(inbox: unknown, outcomes: readonly RailOutcomeInput[]): Promise<RailOutcomeResult[]> {
    return applyOutcomeBatch({ store, clock, quotes: deps.quotes }, inbox, outcomes);
  }

  async function transfer(input: TransferInput, direction: "IN" | "OUT") {
    return idempotent(
      {
        platformId: input.platformId,
        key: input.idempotencyKey,
        request: {
          op: `transfer-${direction.toLowerCase()}`,
          s: input.sourceAccountId,
          d: input.destinationAccountId,
          a: input.amount,
          desc: input.description,
          agent: input.agentId,
          c: input.customerId,
          // Only when chosen, so a request without it hashes as before.
          ...(input.paymentRail ? { r: input.paymentRail } : {}),
        },
        codec: deps.answers,
      },
      async (complete) => {
        const { internal, external, route, platformCustomerId } = await prepareTransfer(input, direction);
        const type = direction === "OUT" ? "OUTGOING" : "INCOMING";
        // Sandbox suffixes 002/003: the rail refuses at once, so this answer is the FAILED transaction.
        const refused = immediateRailFailure(await directory.environment(input.platformId), type, external);
        return store.transaction(async (trx) => {
          const now = clock.now();
          // A customer closed (being deleted) since the checks: no money to or from it any more;
          // an external account deleted while we were checking: nothing may go to (or come from)
          // it any more. For a customer, its gate (the share lock on its copy, taken before any
          // account lock) and the recheck are one statement; for a transfer-out without a gate (a
          // platform's own, or a customer the ledger has no copy of), the recheck and the source
          // account's lock.
          const gate = internal.customer_id ? await trx.customerGate(input.platformId, internal.customer_id, external.id) : undefined;
          if (gate && !gate.open) throw errors.notFound("Customer", internal.customer_id!);
          const ungatedOut = !gate && direction === "OUT" ? await trx.lockSourceCheckingExternal(input.platformId, internal.id, external.id) : undefined;
          const externalLive = gate ? gate.externalLive : ungatedOut ? ungatedOut.externalLive : !!(await trx.findExternalAccount(input.platformId, external.id));
          if (!externalLive) throw errors.notFound("ExternalAccount", external.id);
          const id = newId("Transaction");
          const row = {
            id,
            platform_id: input.platformId,
            type,
            status: refused ? "FAILED" : "PENDING",
            source_account_id: input.sourceAccountId,
            destination_account_id: input.destinationAccountId,
            internal_account_id: internal.id,
            external_account_id: external.id,
            customer_id: internal.customer_id,
            platform_customer_id: platformCustomerId,
            amount: input.amount,
            currency: internal.currency,
            reference: newReference("TXN"),
            description: input.description,
            agent_id: input.agentId || null,
            failure_reason: refused?.reason ?? null,
            failure_detail: refused?.detail ?? null,
            settled_at: null,
            created_at: now,
            updated_at: now,
            connector: route.connector,
            payment_rail: route.paymentRail || null,
          } as const;
          let tx: TransactionRow;
          if (direction === "OUT") {
            const source = ungatedOut ? ungatedOut.account : (await trx.lockAccounts(input.platformId, [internal.id])).get(internal.id)!;
            if (refused) {
              // Money the account does not have is still refused first (400); a refused transfer holds nothing.
              checkHold({ id: source.id, currency: source.currency, system: false, balance: source.balance, held: source.held }, input.amount);
              tx = await trx.insertTransaction(row);
            } else {
              // The hold and the transaction row in one statement.
              const placed = await trx.insertTransactionWithHold(row, source, input.amount, now);
              await trx.emitBalanceUpdated(placed.account, now);
              tx = placed.tx;
            }
          } else {
            tx = await trx.insertTransaction(row);
          }
          if (refused) {
            // Never pending, never sent to a rail: its one event is the failure.
            await trx.emitTransactionChanged(failedEventType(type), tx, now);
          } else {
            await trx.emitTransactionChanged(createdEventType(type), tx, now);
            await trx.emitRailInstruction(tx, external, route, now);
          }
          await complete(trx, tx);
          return tx;
        });
      },
    );
  }

  return {
    transferIn: (input: TransferInput) => transfer(input, "IN"),
    transferOut: (input: TransferInput) => transfer(input, "OUT"),

    /**
     * A rail connector's outcome (consumer of corridor.rail-outcomes.v1, in its inbox transaction):
     * applyRailOutcomes of one.
     */
    async applyRailOutcome(inbox: unknown, o: RailOutcomeInput): Promise<RailOutcomeResult> {
      return (await applyRailOutcomes(inbox, [o]))[0]!;
    },

    applyRailOutcomes,

    async listTransactions(f: TransactionFilter, page: PageInput & { ascending: boolean }) {
      const limit = pageSize(page.limit);
      const { rows, total } = await store.listTransactions(f, { limit, ascending: page.ascending, after: after(page.cursor) });
      return toPage(rows, limit, (r) => ({ k: r.created_at.toISOString(), id: r.id }), total);
    },

    async getTransaction(platformId: string, id: string, customerId?: string) {
      const row = await store.getTransaction(platformId, id);
      if (!row || (customerId && row.customer_id !== customerId)) throw errors.notFound("Transaction", id);
      return row;
    },
  };
}
