import { MAX_AMOUNT, errors, newId, type Clock, type FieldError } from "@corridor/kit";
import { accountType } from "./accounts.js";
import { newReference } from "./funding.js";
import { approvedCustomer, internalAccount } from "./gates.js";
import type { Posting } from "./journal.js";
import {
  checkQuoteAmounts,
  executionPostings,
  isUmaAddress,
  quoteOutcomeEffect,
  reversalPostings,
  suspensePostings,
  type ExecutionAccounts,
  type QuoteOutcomeStatus,
} from "./quotes.js";
import { SYSTEM_TYPES, type AccountRow, type TransactionRow } from "./model.js";
import { PENDING_AUTHORIZATION, authorizationTransition } from "./transactions.js";
import type { Directory, LedgerStatements, LedgerStore, LedgerTx } from "./ports.js";
import { UMA_RAIL, candidateRails, type RailRouter, type RailRoute } from "./rails.js";

export interface QuoteTransactionInput {
  platformId: string;
  quoteId: string;
  customerId: string;
  source: { type: string; accountId: string };
  destination: { type: string; accountId: string; paymentRail: string; umaAddress: string };
  sendingCurrency: string;
  totalSendingAmount: bigint;
  receivingCurrency: string;
  totalReceivingAmount: bigint;
  feesIncluded: bigint;
  exchangeRate: string;
  rateDetails?: Record<string, unknown>;
  description: string;
  counterpartyInformation: Record<string, string>;
  expiresAt?: Date;
  agentId: string;
  /** The receiver lookup the quote was made from; its CREATED transaction is adopted. Optional. */
  lookupId?: string;
  /** The quote waits for strong customer authentication: the transaction starts PENDING_AUTHORIZATION. */
  awaitingAuthorization?: boolean;
}

/** A receiver lookup made for a customer: its CREATED transaction (no amount, no money moved). */
export interface LookupTransactionInput {
  platformId: string;
  lookupId: string;
  customerId: string;
  destination: { type: string; accountId: string; umaAddress: string };
  sendingCurrency: string;
  receivingCurrency: string;
  expiresAt?: Date;
}

/** The result of execute / funding: the transaction, and whether it had been executed before. */
export interface ExecutionResult {
  tx: TransactionRow;
  alreadyExecuted: boolean;
}

/** A quote's destination: an external account, or a UMA address. */
function destinationErrors(d: { type: string; accountId: string; umaAddress: string }): FieldError[] {
  if (d.type === "EXTERNAL_ACCOUNT") return d.accountId ? [] : [{ field: "destination.accountId", reason: "is required" }];
  if (d.type === "UMA_ADDRESS") return isUmaAddress(d.umaAddress) ? [] : [{ field: "destination.umaAddress", reason: "must be a UMA address ($user@domain)" }];
  return [{ field: "destination.type", reason: "must be EXTERNAL_ACCOUNT or UMA_ADDRESS" }];
}

const expired = (id: string) => errors.conflict("QUOTE_EXPIRED", "The quote has expired", { transactionId: id });

/** Execution (or real-time funding) of a transaction that waits for SCA: never PROCESSING directly. */
const awaitingAuthorization = (id: string) =>
  errors.conflict("QUOTE_PENDING_AUTHORIZATION", "The quote waits for strong customer authentication: authorize it first", { transactionId: id, status: PENDING_AUTHORIZATION });

/**
 * Quote transactions (issue 5): create (PENDING, or PENDING_AUTHORIZATION while the quote waits
 * for strong customer authentication; authorize moves it to PENDING), expire, execute (one money transaction: debit,
 * fee, FX legs, payout instruction) and the QUOTE_PAYOUT outcomes with their refunds. Service calls
 * (environment, KYC) happen before any transaction opens.
 */
export function createQuotes(deps: { store: LedgerStore; clock: Clock; directory: Directory; rails: Pick<RailRouter, "route"> }) {
  const { store, clock, directory } = deps;

  async function quoteTransaction(platformId: string, id: string): Promise<TransactionRow> {
    const tx = await store.getTransaction(platformId, id);
    if (!tx || !tx.quote_id) throw errors.notFound("Transaction", id);
    return tx;
  }

  /** A quote transaction, or a lookup's transaction no quote adopted (both expire). */
  async function expirableTransaction(platformId: string, id: string): Promise<TransactionRow> {
    const tx = await store.getTransaction(platformId, id);
    if (!tx || (!tx.quote_id && !tx.lookup_id)) throw errors.notFound("Transaction", id);
    return tx;
  }

  /**
   * The accounts of the execution's legs; the payer is the source account or, for real-time
   * funding, sandbox funding. Executions open the system accounts with `store` before their money
   * transaction: two executions in opposite currency pairs opening them inside their transactions
   * would wait on each other's uncommitted inserts (a deadlock).
   */
  async function executionAccounts(d: LedgerStatements, tx: TransactionRow, now: Date): Promise<ExecutionAccounts> {
    const sending = tx.sent_currency!;
    const sys = (currency: string, type: string) => d.systemAccountId(tx.platform_id, currency, type, now);
    return {
      source: tx.internal_account_id ?? (await sys(sending, SYSTEM_TYPES.sandboxFunding)),
      feeRevenue: await sys(sending, SYSTEM_TYPES.feeRevenue),
      fxPoolSending: await sys(sending, SYSTEM_TYPES.fxPool),
      fxPoolReceiving: await sys(tx.currency, SYSTEM_TYPES.fxPool),
      railClearing: await sys(tx.currency, SYSTEM_TYPES.railClearing),
    };
  }

  const amountsOf = (tx: TransactionRow) => ({ totalSendingAmount: tx.sent_amount!, totalReceivingAmount: tx.amount, feesIncluded: tx.fees ?? 0n });

  /** Posts one entry of the transaction and tells the payer's watchers its balance changed. */
  async function post(trx: LedgerTx, tx: TransactionRow, kind: string, postings: Posting[], now: Date) {
    const locked = await trx.lockAccounts(tx.platform_id, postings.map((p) => p.accountId));
    await trx.postEntry(locked, { platformId: tx.platform_id, transactionId: tx.id, kind, postings, now });
    const payer = tx.internal_account_id ? locked.get(tx.internal_account_id) : undefined;
    if (payer) await trx.emitBalanceUpdated(payer, now);
  }

  /** A refund that cannot reach the payer: the money moves from RAIL_CLEARING(R) to REFUND_SUSPENSE(R), refund FAILED. */
  async function suspend(trx: LedgerTx, tx: TransactionRow, now: Date, reason?: string) {
    // One new system account at most in this transaction, so no opposite-order wait.
    const accounts = {
      railClearing: await trx.systemAccountId(tx.platform_id, tx.currency, SYSTEM_TYPES.railClearing, now),
      refundSuspense: await trx.systemAccountId(tx.platform_id, tx.currency, SYSTEM_TYPES.refundSuspense, now),
    };
    await post(trx, tx, "QUOTE_REFUND_SUSPENSE", suspensePostings(accounts, tx.amount), now);
    const updated = await trx.updateTransaction(tx.platform_id, tx.id, { refund_status: "FAILED", ...(reason ? { refund_reason: reason } : {}), updated_at: now });
    await trx.emitTransactionChanged("OUTGOING_PAYMENT_REFUND_FAILED", updated, now);
  }

  /** Executes a PENDING quote transaction inside `trx` (locked by the caller); the payout goes by `route`. */
  async function executeIn(trx: LedgerTx, tx: TransactionRow, accounts: ExecutionAccounts, route: RailRoute): Promise<TransactionRow> {
    const now = clock.now();
    // Not enough available money throws INVALID INSUFFICIENT_BALANCE here and the whole transaction rolls back.
    await post(trx, tx, "QUOTE_EXECUTION", executionPostings(accounts, amountsOf(tx)), now);
    const updated = await trx.updateTransaction(tx.platform_id, tx.id, { status: "PROCESSING", executed_at: now, updated_at: now, connector: route.connector });
    await trx.emitTransactionChanged("OUTGOING_PAYMENT_PROCESSING", updated, now);
    const external = updated.external_account_id ? await trx.findExternalAccount(tx.platform_id, updated.external_account_id) : undefined;
    await trx.emitQuotePayout(updated, external, route, now);
    return updated;
  }

  /**
   * Where a quote's payout goes: over its chosen rail (or its external account's rails, or UMA for a
   * UMA address) to the simulator or the operator's binding; 400 PAYMENT_RAIL_NOT_AVAILABLE for a
   * production rail nobody bound. Asked before any money transaction opens.
   */
  async function payoutRoute(platformId: string, currency: string, d: { externalAccountInfo?: Record<string, unknown>; paymentRail: string; uma: boolean }): Promise<RailRoute> {
    return deps.rails.route(platformId, currency, d.uma ? [d.paymentRail || UMA_RAIL] : candidateRails(d.externalAccountInfo, d.paymentRail));
  }

  /** The route of an existing quote transaction's payout, as of now (the operator may have rebound the rail since the quote). */
  async function routeOf(tx: TransactionRow): Promise<RailRoute> {
    const external = tx.external_account_id ? await store.findExternalAccount(tx.platform_id, tx.external_account_id) : undefined;
    return payoutRoute(tx.platform_id, tx.currency, { externalAccountInfo: external?.account_info, paymentRail: tx.payment_rail ?? "", uma: !tx.external_account_id });
  }

  /**
   * The platform's time, which its quotes expire by: the ledger's clock plus the platform's sandbox
   * clock offset (event-fed from corridor.sandbox.v1; 0 for production and never-advanced platforms).
   */
  async function platformNow(d: LedgerStatements, platformId: string): Promise<Date> {
    return new Date(clock.now().getTime() + Number(await d.sandboxOffsetMs(platformId)));
  }

  /**
   * Moves a PENDING (or PENDING_AUTHORIZATION) quote transaction to EXPIRED inside `trx` (row locked); anything else is answered
   * as is. A lookup's CREATED transaction no quote adopted expires too, silently: no failure reason
   * (nothing failed, no quote existed) and no event (no payment was ever announced).
   */
  async function expireIn(trx: LedgerTx, platformId: string, id: string, dueBy?: Date): Promise<{ tx: TransactionRow; expired: boolean }> {
    const tx = (await trx.getTransaction(platformId, id, true))!;
    // A row found due by a scan is judged again under its lock: between the scan and the lock a
    // quote may have adopted a lookup's CREATED transaction (PENDING now, with the quote's later
    // expiry), which must not expire with the lookup.
    if (dueBy && (!tx.expires_at || tx.expires_at > dueBy)) return { tx, expired: false };
    if (tx.status === "CREATED" && tx.lookup_id && !tx.quote_id) {
      const updated = await trx.updateTransaction(platformId, id, { status: "EXPIRED", updated_at: clock.now() });
      return { tx: updated, expired: true };
    }
    if (tx.status !== "PENDING" && authorizationTransition(tx.status, "EXPIRED") !== "EXPIRED") return { tx, expired: false };
    const now = clock.now();
    const updated = await trx.updateTransaction(platformId, id, { status: "EXPIRED", failure_reason: "QUOTE_EXPIRED", failure_detail: null, updated_at: now });
    await trx.emitTransactionChanged("OUTGOING_PAYMENT_EXPIRED", updated, now);
    return { tx: updated, expired: true };
  }

  /** Checks shared by execute and funding, before any transaction opens; `done` when nothing is left to run. */
  async function precheck(platformId: string, id: string): Promise<{ tx: TransactionRow; done?: ExecutionResult; route?: RailRoute }> {
    const tx = await quoteTransaction(platformId, id);
    if (tx.status === "EXPIRED") throw expired(id);
    if (authorizationTransition(tx.status, "EXECUTE") === "REFUSED") throw awaitingAuthorization(id);
    if (tx.status !== "PENDING") return { tx, done: { tx, alreadyExecuted: true } };
    if (tx.expires_at && (await platformNow(store, platformId)) > tx.expires_at) throw expired(id);
    if (tx.customer_id) await approvedCustomer(directory, platformId, tx.customer_id);
    return { tx, route: await routeOf(tx) };
  }

  /**
   * Locks the transaction and executes it unless someone else did first. `read` is the
   * transaction as the precheck read it: the accounts come from fields that never change after
   * creation (platform, payer account, currencies); its status is read again under the lock.
   */
  async function lockAndExecute(platformId: string, id: string, read: TransactionRow, route: RailRoute): Promise<ExecutionResult> {
    const accounts = await executionAccounts(store, read, clock.now());
    return store.transaction(async (trx) => {
      const tx = (await trx.getTransaction(platformId, id, true))!;
      if (tx.status === "EXPIRED") throw expired(id);
      if (authorizationTransition(tx.status, "EXECUTE") === "REFUSED") throw awaitingAuthorization(id);
      if (tx.status !== "PENDING") return { tx, alreadyExecuted: true };
      return { tx: await executeIn(trx, tx, accounts, route), alreadyExecuted: false };
    });
  }

  return {
    /**
     * The accounts this quote transaction's rail outcomes (their `statuses`, in a batch) may post
     * on in applyQuoteOutcome, for the batch to lock them all first: the execution's accounts for
     * a failure, a refund or REFUNDED, and REFUND_SUSPENSE where a refund cannot reach the payer
     * (REFUND_FAILED; a refund to a closed customer). None while its outcomes cannot move money
     * (not executed, or settled with no refund pending). Opens no account an outcome alone would
     * not open.
     */
    async outcomeAccounts(d: LedgerStatements, tx: TransactionRow, now: Date, o: { statuses: ReadonlySet<string>; customerClosed: boolean }): Promise<string[]> {
      if (tx.status !== "PROCESSING" && tx.status !== "COMPLETED" && tx.refund_status !== "PENDING") return [];
      const refund = o.statuses.has("REFUND_COMPLETED") || o.statuses.has("REFUNDED");
      const ids: string[] = [];
      if (refund || o.statuses.has("FAILED") || o.statuses.has("REJECTED")) {
        const a = await executionAccounts(d, tx, now);
        ids.push(a.source, a.feeRevenue, a.fxPoolSending, a.fxPoolReceiving, a.railClearing);
      }
      if (o.statuses.has("REFUND_FAILED") || (refund && o.customerClosed)) {
        ids.push(await d.systemAccountId(tx.platform_id, tx.currency, SYSTEM_TYPES.railClearing, now), await d.systemAccountId(tx.platform_id, tx.currency, SYSTEM_TYPES.refundSuspense, now));
      }
      return ids;
    },

    async createQuoteTransaction(i: QuoteTransactionInput): Promise<TransactionRow> {
      const fieldErrors: FieldError[] = [];
      if (!i.quoteId) fieldErrors.push({ field: "quoteId", reason: "is required" });
      fieldErrors.push(...checkQuoteAmounts(i, MAX_AMOUNT));
      if (i.source.type === "INTERNAL_ACCOUNT") {
        if (!i.source.accountId) fieldErrors.push({ field: "source.accountId", reason: "is required" });
      } else if (i.source.type === "REALTIME_FUNDING") {
        if (i.source.accountId) fieldErrors.push({ field: "source.accountId", reason: "must be empty for REALTIME_FUNDING" });
      } else fieldErrors.push({ field: "source.type", reason: "must be INTERNAL_ACCOUNT or REALTIME_FUNDING" });
      fieldErrors.push(...destinationErrors(i.destination));
      if (fieldErrors.length) throw errors.invalidInput(fieldErrors);

      const existing = await store.findQuoteTransaction(i.platformId, i.quoteId);
      if (existing) return existing;

      let source: AccountRow | undefined;
      if (i.source.type === "INTERNAL_ACCOUNT") {
        source = await internalAccount(store, i.platformId, i.source.accountId);
        if ((source.customer_id ?? "") !== i.customerId) {
          // Another customer's account is invisible; a customer's account for a platform-funded quote is the wrong owner.
          if (i.customerId) throw errors.notFound("InternalAccount", source.id);
          throw errors.badRequest("ACCOUNT_OWNER_MISMATCH", "A platform-funded quote must be paid from a platform account", { sourceAccountId: source.id });
        }
        if (source.currency !== i.sendingCurrency) {
          throw errors.badRequest("CURRENCY_MISMATCH", `The source account holds ${source.currency}, not the sending currency ${i.sendingCurrency}`, {
            accountCurrency: source.currency,
            sendingCurrency: i.sendingCurrency,
          });
        }
      }
      let externalId: string | null = null;
      let externalAccountInfo: Record<string, unknown> | undefined;
      if (i.destination.type === "EXTERNAL_ACCOUNT") {
        const external = await store.findExternalAccount(i.platformId, i.destination.accountId);
        if (!external) throw errors.notFound("ExternalAccount", i.destination.accountId);
        if (external.currency !== i.receivingCurrency) {
          throw errors.badRequest("CURRENCY_MISMATCH", `The destination account holds ${external.currency}, not the receiving currency ${i.receivingCurrency}`, {
            accountCurrency: external.currency,
            receivingCurrency: i.receivingCurrency,
          });
        }
        externalId = external.id;
        externalAccountInfo = external.account_info;
      }
      // A production rail nobody bound answers 400 PAYMENT_RAIL_NOT_AVAILABLE now, not at execution.
      const route = await payoutRoute(i.platformId, i.receivingCurrency, { externalAccountInfo, paymentRail: i.destination.paymentRail, uma: !externalId });
      const customer = i.customerId ? await approvedCustomer(directory, i.platformId, i.customerId) : undefined;

      // The lookup's CREATED transaction, when the quote is for the customer it was made for.
      const lookupTx = i.lookupId ? await store.findLookupTransaction(i.platformId, i.lookupId) : undefined;
      const adoptable = lookupTx && lookupTx.status === "CREATED" && !lookupTx.quote_id && (lookupTx.customer_id ?? "") === i.customerId ? lookupTx : undefined;

      return store.transaction(async (trx) => {
        const now = clock.now();
        if (i.customerId) await trx.requireOpenCustomer(i.platformId, i.customerId);
        const quoteColumns = {
          type: "OUTGOING" as const,
          status: i.awaitingAuthorization ? PENDING_AUTHORIZATION : "PENDING",
          source_type: source ? "ACCOUNT" : "REALTIME_FUNDING",
          source_account_id: source?.id ?? "",
          destination_type: externalId ? "ACCOUNT" : "UMA_ADDRESS",
          destination_account_id: externalId ?? "",
          payment_rail: i.destination.paymentRail || (route.environment === "PRODUCTION" ? route.paymentRail : null),
          connector: route.connector,
          uma_address: externalId ? null : i.destination.umaAddress,
          internal_account_id: source?.id ?? null,
          external_account_id: externalId,
          customer_id: i.customerId || null,
          platform_customer_id: customer?.platformCustomerId || null,
          amount: i.totalReceivingAmount,
          currency: i.receivingCurrency,
          sent_amount: i.totalSendingAmount,
          sent_currency: i.sendingCurrency,
          fees: i.feesIncluded,
          exchange_rate: i.exchangeRate,
          rate_details: i.rateDetails ? JSON.stringify(i.rateDetails) : null,
          counterparty_information: Object.keys(i.counterpartyInformation).length ? JSON.stringify(i.counterpartyInformation) : null,
          quote_id: i.quoteId,
          expires_at: i.expiresAt ?? null,
          description: i.description,
          agent_id: i.agentId || null,
          failure_reason: null,
          failure_detail: null,
          settled_at: null,
          updated_at: now,
        };
        // CREATED -> PENDING: the lookup's transaction becomes the quote's (same id, created_at and
        // reference). Another quote of the same lookup, or an expiry, got there first: a new one.
        const adopted = adoptable ? await trx.adoptLookupTransaction(i.platformId, adoptable.id, quoteColumns) : undefined;
        const row =
          adopted ??
          (await trx.insertQuoteTransaction({
            ...quoteColumns,
            id: newId("Transaction"),
            platform_id: i.platformId,
            reference: newReference("TXN"),
            created_at: now,
          }));
        // A concurrent call for the same quote won the insert: answer its transaction.
        if (!row) return (await trx.findQuoteTransaction(i.platformId, i.quoteId))!;
        // A transaction that waits for SCA is announced when it becomes PENDING (authorizeQuoteTransaction):
        // Grid has no webhook for PENDING_AUTHORIZATION, and the platform has the quote's answer already.
        if (row.status === "PENDING") await trx.emitTransactionChanged("OUTGOING_PAYMENT_PENDING", row, now);
        return row;
      });
    },

    /**
     * A receiver lookup made for a customer (issue 10; spec: CREATED = "initial lookup created"):
     * opens its OUTGOING transaction in status CREATED, amount 0, no reference shown, no money
     * moved and no event; idempotent per lookup. The customer must exist (USER_NOT_FOUND) but need
     * not be APPROVED yet: a lookup moves no money (the quote checks KYC).
     */
    async createLookupTransaction(i: LookupTransactionInput): Promise<TransactionRow> {
      const fieldErrors: FieldError[] = [];
      if (!i.lookupId) fieldErrors.push({ field: "lookupId", reason: "is required" });
      if (!i.customerId) fieldErrors.push({ field: "customerId", reason: "is required" });
      if (!i.sendingCurrency) fieldErrors.push({ field: "sendingCurrency", reason: "is required" });
      if (!i.receivingCurrency) fieldErrors.push({ field: "receivingCurrency", reason: "is required" });
      if (!i.expiresAt) fieldErrors.push({ field: "expiresAt", reason: "is required" });
      fieldErrors.push(...destinationErrors(i.destination));
      if (fieldErrors.length) throw errors.invalidInput(fieldErrors);

      const existing = await store.findLookupTransaction(i.platformId, i.lookupId);
      if (existing) return existing;
      let externalId: string | null = null;
      if (i.destination.type === "EXTERNAL_ACCOUNT") {
        const external = await store.findExternalAccount(i.platformId, i.destination.accountId);
        if (!external) throw errors.notFound("ExternalAccount", i.destination.accountId);
        externalId = external.id;
      }
      const customer = await directory.customer(i.platformId, i.customerId);
      if (customer.isDeleted) throw errors.notFound("Customer", i.customerId);
      // The money would come from the customer's internal account in the sending currency: the
      // CREATED transaction names it as its source (Grid shows source.accountId from the start);
      // none yet (the account opens with the customer's currencies) leaves it empty.
      const source = await store.customerAccountOf(i.platformId, i.customerId, i.sendingCurrency, accountType(i.sendingCurrency));

      return store.transaction(async (trx) => {
        const now = clock.now();
        await trx.requireOpenCustomer(i.platformId, i.customerId);
        const row = await trx.insertLookupTransaction({
          id: newId("Transaction"),
          platform_id: i.platformId,
          type: "OUTGOING",
          status: "CREATED",
          source_type: "ACCOUNT",
          source_account_id: source?.id ?? "",
          destination_type: externalId ? "ACCOUNT" : "UMA_ADDRESS",
          destination_account_id: externalId ?? "",
          uma_address: externalId ? null : i.destination.umaAddress,
          internal_account_id: null,
          external_account_id: externalId,
          customer_id: i.customerId,
          platform_customer_id: customer.platformCustomerId || null,
          amount: 0n,
          currency: i.receivingCurrency,
          sent_currency: i.sendingCurrency,
          lookup_id: i.lookupId,
          expires_at: i.expiresAt!,
          // Kept for the quote that adopts it; not shown while CREATED (spec).
          reference: newReference("TXN"),
          description: "",
          agent_id: null,
          failure_reason: null,
          failure_detail: null,
          settled_at: null,
          created_at: now,
          updated_at: now,
        });
        return row ?? (await trx.findLookupTransaction(i.platformId, i.lookupId))!;
      });
    },

    /** Where a payout would go (LedgerService.CheckPaymentRail; quotes-fx asks before pricing a production quote). */
    async checkPaymentRail(platformId: string, currency: string, d: { externalAccountId: string; paymentRail: string }): Promise<RailRoute> {
      let info: Record<string, unknown> | undefined;
      if (d.externalAccountId) {
        const external = await store.findExternalAccount(platformId, d.externalAccountId);
        if (!external) throw errors.notFound("ExternalAccount", d.externalAccountId);
        info = external.account_info;
      }
      return payoutRoute(platformId, currency, { externalAccountInfo: info, paymentRail: d.paymentRail, uma: !d.externalAccountId });
    },

    /**
     * The quote's SCA challenge was satisfied (quotes-fx, POST /quotes/{id}/authorize):
     * PENDING_AUTHORIZATION -> PENDING under the row lock, with the OUTGOING_PAYMENT_PENDING event
     * in the same transaction (outbox). Idempotent: any other status is answered as is, so a retry
     * after a lost answer, or a transaction stored PENDING by an earlier version, changes nothing;
     * an EXPIRED or FAILED one (the quote ended while it waited) is answered so.
     */
    async authorizeQuoteTransaction(platformId: string, id: string): Promise<{ tx: TransactionRow; authorized: boolean }> {
      await quoteTransaction(platformId, id);
      return store.transaction(async (trx) => {
        const tx = (await trx.getTransaction(platformId, id, true))!;
        if (authorizationTransition(tx.status, "AUTHORIZED") !== "PENDING") return { tx, authorized: false };
        const now = clock.now();
        const updated = await trx.updateTransaction(platformId, id, { status: "PENDING", updated_at: now });
        await trx.emitTransactionChanged("OUTGOING_PAYMENT_PENDING", updated, now);
        return { tx: updated, authorized: true };
      });
    },

    /**
     * Expires the quote transaction (quotes-fx found its quote due; or, with `dueBy`, the expiry
     * worker's scan found it due by then: judged again under the row lock).
     */
    async expireQuoteTransaction(platformId: string, id: string, dueBy?: Date): Promise<{ tx: TransactionRow; expired: boolean }> {
      await expirableTransaction(platformId, id);
      return store.transaction((trx) => expireIn(trx, platformId, id, dueBy));
    },

    /**
     * A sandbox platform's clock moved (consumer of corridor.sandbox.v1 ClockAdvanced, in its inbox
     * transaction): remember the offset, and expire at once every PENDING quote transaction of the
     * platform due by its new sandbox time, as the sandbox fires its own due rail outcomes. quotes-fx
     * follows from OUTGOING_PAYMENT_EXPIRED (its quote becomes EXPIRED), notifications sends the webhook.
     */
    async onSandboxClockAdvanced(inbox: unknown, c: { platformId: string; sandboxNow: Date; offsetMs: bigint; at: Date }): Promise<number> {
      const trx = store.within(inbox);
      await trx.recordSandboxOffset(c.platformId, c.offsetMs, c.at);
      let expiredCount = 0;
      for (;;) {
        const due = await trx.dueQuoteTransactionsOf(c.platformId, c.sandboxNow, 100);
        for (const row of due) if ((await expireIn(trx, c.platformId, row.id, c.sandboxNow)).expired) expiredCount++;
        if (due.length < 100) return expiredCount;
      }
    },

    async executeQuoteTransaction(platformId: string, id: string): Promise<ExecutionResult> {
      const { tx, done, route } = await precheck(platformId, id);
      if (done) return done;
      if (tx.source_type === "REALTIME_FUNDING") {
        throw errors.conflict("QUOTE_NOT_FUNDED", "A real-time-funding quote executes when its payment instructions are paid", { transactionId: id });
      }
      return lockAndExecute(platformId, id, tx, route!);
    },

    async recordQuoteFunding(i: { platformId: string; transactionId: string; currencyCode: string; amount: bigint }): Promise<ExecutionResult> {
      const tx = await quoteTransaction(i.platformId, i.transactionId);
      if (tx.source_type !== "REALTIME_FUNDING") {
        throw errors.badRequest("QUOTE_NOT_REALTIME_FUNDED", "This quote is paid from an internal account; execute it instead", { transactionId: tx.id });
      }
      const fieldErrors: FieldError[] = [];
      if (i.currencyCode !== tx.sent_currency) fieldErrors.push({ field: "currencyCode", reason: `must be the quote's sending currency ${tx.sent_currency}` });
      if (i.amount !== tx.sent_amount) fieldErrors.push({ field: "amount", reason: `must be the quote's total sending amount ${tx.sent_amount}` });
      if (fieldErrors.length) throw errors.invalidInput(fieldErrors);
      if ((await directory.environment(i.platformId)) !== "SANDBOX") throw errors.forbidden("Simulated funding is for sandbox platforms only");
      const { tx: read, done, route } = await precheck(i.platformId, i.transactionId);
      if (done) return done;
      return lockAndExecute(i.platformId, i.transactionId, read, route!);
    },

    /** A QUOTE_PAYOUT outcome (rail-outcomes consumer, in its inbox transaction). */
    async applyQuoteOutcome(trx: LedgerTx, tx: TransactionRow, o: { status: QuoteOutcomeStatus; reason: string; at: Date }): Promise<void> {
      const effect = quoteOutcomeEffect({ status: tx.status, refundStatus: tx.refund_status }, o.status, o.reason);
      if (!effect) return;
      const now = clock.now();
      switch (effect.kind) {
        case "complete": {
          const updated = await trx.updateTransaction(tx.platform_id, tx.id, { status: "COMPLETED", settled_at: o.at, updated_at: now });
          await trx.emitTransactionChanged("OUTGOING_PAYMENT_COMPLETED", updated, now);
          return;
        }
        case "fail-reverse": {
          // Nothing left the platform: undo the execution entry, no refund.
          await post(trx, tx, "QUOTE_REVERSAL", reversalPostings(await executionAccounts(trx, tx, now), amountsOf(tx)), now);
          const updated = await trx.updateTransaction(tx.platform_id, tx.id, { status: "FAILED", failure_reason: effect.failureReason, failure_detail: o.reason || null, settled_at: null, updated_at: now });
          await trx.emitTransactionChanged("OUTGOING_PAYMENT_FAILED", updated, now);
          return;
        }
        case "fail-refund": {
          // The money is with the rail; it comes back (or not) with a later REFUND_* outcome.
          const failed = await trx.updateTransaction(tx.platform_id, tx.id, {
            status: "FAILED",
            failure_reason: effect.failureReason,
            failure_detail: o.reason || null,
            settled_at: null,
            refund_reference: newReference("RFD"),
            refund_status: "PENDING",
            refund_reason: o.reason || effect.failureReason,
            refund_initiated_at: o.at,
            refund_settled_at: null,
            updated_at: now,
          });
          await trx.emitTransactionChanged("OUTGOING_PAYMENT_FAILED", failed, now);
          await trx.emitTransactionChanged("OUTGOING_PAYMENT_REFUND_PENDING", failed, now);
          return;
        }
        case "refund-complete": {
          // A payout returned after its customer was deleted: the money cannot go back into a
          // closed account, so it waits in REFUND_SUSPENSE for the operator (refund FAILED).
          if (tx.customer_id && tx.internal_account_id && (await trx.customerClosed(tx.platform_id, tx.customer_id))) {
            await suspend(trx, tx, now, "CUSTOMER_DELETED");
            return;
          }
          await post(trx, tx, "QUOTE_REFUND", reversalPostings(await executionAccounts(trx, tx, now), amountsOf(tx)), now);
          const updated = await trx.updateTransaction(tx.platform_id, tx.id, { refund_status: "COMPLETED", refund_settled_at: o.at, updated_at: now });
          await trx.emitTransactionChanged("OUTGOING_PAYMENT_REFUND_COMPLETED", updated, now);
          return;
        }
        case "refund-fail": {
          await suspend(trx, tx, now);
          return;
        }
        case "refunded": {
          // Issue 10 (sandbox quote suffix 008, $refunded.*): nothing was delivered and the money is
          // back at once. As for a completed refund, a closed customer's money waits in suspense
          // (the payment is then FAILED with its refund FAILED, as a failed payout's would be).
          if (tx.customer_id && tx.internal_account_id && (await trx.customerClosed(tx.platform_id, tx.customer_id))) {
            const failed = await trx.updateTransaction(tx.platform_id, tx.id, {
              status: "FAILED",
              failure_reason: effect.failureReason,
              failure_detail: o.reason || null,
              settled_at: null,
              refund_reference: newReference("RFD"),
              refund_status: "PENDING",
              refund_reason: o.reason || effect.failureReason,
              refund_initiated_at: o.at,
              refund_settled_at: null,
              updated_at: now,
            });
            await trx.emitTransactionChanged("OUTGOING_PAYMENT_FAILED", failed, now);
            await suspend(trx, failed, now, "CUSTOMER_DELETED");
            return;
          }
          await post(trx, tx, "QUOTE_REFUND", reversalPostings(await executionAccounts(trx, tx, now), amountsOf(tx)), now);
          const refunded = await trx.updateTransaction(tx.platform_id, tx.id, {
            status: "REFUNDED",
            failure_reason: effect.failureReason,
            failure_detail: o.reason || null,
            settled_at: null,
            refund_reference: newReference("RFD"),
            refund_status: "COMPLETED",
            refund_reason: o.reason || effect.failureReason,
            refund_initiated_at: o.at,
            refund_settled_at: o.at,
            updated_at: now,
          });
          await trx.emitTransactionChanged("OUTGOING_PAYMENT_REFUND_COMPLETED", refunded, now);
          return;
        }
      }
    },
  };
}

export type Quotes = ReturnType<typeof createQuotes>;
