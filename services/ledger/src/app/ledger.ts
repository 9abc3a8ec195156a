import { AppError, MAX_AMOUNT, decodeKeysetCursor, errors, newId, pageSize, toPage, type Clock, type FieldError } from "@corridor/kit";
import { InternalAccountSchema } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import { TransactionSchema } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import type { Kysely, Transaction } from "kysely";
import {
  SYSTEM_TYPES,
  getAccount,
  listAccounts,
  lockAccounts,
  openAccount,
  systemAccountId,
  type AccountRow,
  type InternalAccountFilter,
} from "../data/accounts.js";
import {
  clearDefaultDeposit,
  findExternalAccount,
  getExternalAccount,
  insertExternalAccount,
  listExternalAccounts,
  markExternalAccountDeleted,
  type ExternalAccountScope,
} from "../data/external-accounts.js";
import { holdingsOf, requireOpenCustomer } from "../data/customers.js";
import { placeHold, postEntry, settleHold } from "../data/journal.js";
import type { LedgerDatabase } from "../data/tables.js";
import { getTransaction, insertTransaction, listTransactions, updateTransaction, type TransactionFilter } from "../data/transactions.js";
import { PULL_CAPABLE, validateAccountInfo } from "../domain/account-info.js";
import { verifyBeneficiary } from "../domain/beneficiary.js";
import { WALLET_CURRENCY, isCrypto } from "../domain/currencies.js";
import { fundingInstructions, newReference } from "../domain/funding.js";
import { createdEventType, transitionFor, type RailStatus } from "../domain/transactions.js";
import { emitBalanceUpdated, emitRailInstruction, emitTransactionChanged } from "../events/ledger-events.js";
import { internalAccountToPb, transactionToPb } from "../handlers/mappers.js";
import { idempotencyRunner } from "./idempotency.js";
import { createQuotes } from "./quotes.js";
import { createIncoming } from "./incoming.js";
import type { QuoteOutcomeStatus } from "../domain/quotes.js";

/** What the ledger asks other services (over Connect, never inside a DB transaction). */
export interface Directory {
  environment(platformId: string): Promise<"SANDBOX" | "PRODUCTION">;
  /** Throws 404 CUSTOMER_NOT_FOUND for an unknown or foreign customer. */
  customer(platformId: string, customerId: string): Promise<{ platformCustomerId: string; verificationStatus: string; isDeleted: boolean }>;
  /**
   * The transaction types (OUTGOING, INCOMING) the platform's configuration enables in this
   * currency, read fresh (a PATCH /config applies at once); undefined when the currency is not in
   * its supportedCurrencies.
   */
  transactionTypes(platformId: string, currency: string): Promise<string[] | undefined>;
}

/** 400 when the platform's configuration does not enable this direction in this currency. */
export async function requireTransactionType(directory: Directory, platformId: string, currency: string, type: "OUTGOING" | "INCOMING"): Promise<void> {
  const enabled = await directory.transactionTypes(platformId, currency);
  if (enabled && !enabled.includes(type)) {
    throw errors.badRequest(
      "TRANSACTION_TYPE_NOT_ENABLED",
      `${type} payments in ${currency} are not enabled in the platform's configuration (supportedCurrencies[].enabledTransactionTypes)`,
      { currency, transactionType: type },
    );
  }
}

export const MAX_FUND_AMOUNT = 100_000_000_000n;

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
}

export interface PageInput {
  limit?: number;
  cursor?: string;
}

type Trx = Transaction<LedgerDatabase>;

export function createLedger(deps: { db: Kysely<LedgerDatabase>; clock: Clock; directory: Directory }) {
  const { db, clock, directory } = deps;
  const idempotent = idempotencyRunner(db, clock);

  const accountType = (currency: string) => (isCrypto(currency) ? "INTERNAL_CRYPTO" : "INTERNAL_FIAT");

  async function open(trx: Trx, platformId: string, ownerKind: "CUSTOMER" | "PLATFORM", customerId: string | undefined, type: string, currency: string, now: Date) {
    const reference = newReference("DEP");
    await openAccount(trx, {
      platformId,
      ownerKind,
      customerId,
      type,
      currency,
      reference,
      fundingInstructions: fundingInstructions({ currency, reference, isPlatformAccount: ownerKind === "PLATFORM" }),
      now,
    });
  }

  async function internalAccount(platformId: string, id: string): Promise<AccountRow> {
    const row = await getAccount(db, platformId, id);
    if (!row || row.owner_kind === "SYSTEM") throw errors.notFound("InternalAccount", id);
    return row;
  }

  /** KYC/KYB gate: a customer moves money only once APPROVED. */
  async function approvedCustomer(platformId: string, customerId: string) {
    const c = await directory.customer(platformId, customerId);
    if (c.isDeleted) throw errors.notFound("Customer", customerId);
    if (c.verificationStatus !== "APPROVED") {
      throw new AppError("FORBIDDEN", "CUSTOMER_NOT_VERIFIED", "The customer's KYC/KYB verification is not APPROVED; it cannot move money yet", {
        customerId,
        verificationStatus: c.verificationStatus,
      });
    }
    return c;
  }

  function checkAmount(amount: bigint, max: bigint): void {
    if (amount < 1n || amount > max) throw errors.invalidInput([{ field: "amount", reason: `must be an integer from 1 to ${max}` }]);
  }

  /** Every ledger list pages on (created_at, id): a cursor whose key is no timestamp is a 400. */
  function after(cursor: string | undefined) {
    const pos = decodeKeysetCursor(cursor, "timestamp");
    return pos && { at: pos.k, id: pos.id };
  }

  /** Shared checks of both transfer directions, all before any transaction is opened. */
  async function prepareTransfer(input: TransferInput, direction: "IN" | "OUT") {
    checkAmount(input.amount, MAX_AMOUNT);
    const missing: FieldError[] = [];
    if (!input.sourceAccountId) missing.push({ field: "source.accountId", reason: "is required" });
    if (!input.destinationAccountId) missing.push({ field: "destination.accountId", reason: "is required" });
    if (missing.length) throw errors.invalidInput(missing);
    const internalId = direction === "OUT" ? input.sourceAccountId : input.destinationAccountId;
    const externalId = direction === "OUT" ? input.destinationAccountId : input.sourceAccountId;
    const internal = await internalAccount(input.platformId, internalId);
    const external = await findExternalAccount(db, input.platformId, externalId);
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
    await requireTransactionType(directory, input.platformId, internal.currency, direction === "OUT" ? "OUTGOING" : "INCOMING");
    if ((await directory.environment(input.platformId)) !== "SANDBOX") {
      throw errors.notImplemented("No rail connector is configured for production platforms yet");
    }
    const customer = internal.customer_id ? await approvedCustomer(input.platformId, internal.customer_id) : undefined;
    return { internal, external, platformCustomerId: customer?.platformCustomerId ?? null };
  }

  async function transfer(input: TransferInput, direction: "IN" | "OUT") {
    return idempotent(
      {
        platformId: input.platformId,
        key: input.idempotencyKey,
        request: { op: `transfer-${direction.toLowerCase()}`, s: input.sourceAccountId, d: input.destinationAccountId, a: input.amount, desc: input.description, agent: input.agentId, c: input.customerId },
        status: 201,
        schema: TransactionSchema,
      },
      async (complete) => {
        const { internal, external, platformCustomerId } = await prepareTransfer(input, direction);
        return db.transaction().execute(async (trx) => {
          const now = clock.now();
          // A customer closed (being deleted) since the checks: no money to or from it any more.
          if (internal.customer_id) await requireOpenCustomer(trx, input.platformId, internal.customer_id);
          // Deleted while we were checking: nothing may go to (or come from) it any more.
          if (!(await findExternalAccount(trx, input.platformId, external.id))) throw errors.notFound("ExternalAccount", external.id);
          const id = newId("Transaction");
          const type = direction === "OUT" ? "OUTGOING" : "INCOMING";
          if (direction === "OUT") {
            const locked = await lockAccounts(trx, input.platformId, [internal.id]);
            const held = await placeHold(trx, locked.get(internal.id)!, id, input.amount, now);
            await emitBalanceUpdated(trx, held, now);
          }
          const tx = await insertTransaction(trx, {
            id,
            platform_id: input.platformId,
            type,
            status: "PENDING",
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
            failure_reason: null,
            failure_detail: null,
            settled_at: null,
            created_at: now,
            updated_at: now,
          });
          await emitTransactionChanged(trx, createdEventType(type), tx, now);
          await emitRailInstruction(trx, tx, external, now);
          const value = transactionToPb(tx);
          await complete(trx, value);
          return value;
        });
      },
    );
  }

  const quotes = createQuotes({ db, clock, directory, internalAccount, approvedCustomer });

  return {
    // ---- quote transactions (issue 5; see app/quotes.ts) ----

    createQuoteTransaction: quotes.createQuoteTransaction,
    expireQuoteTransaction: quotes.expireQuoteTransaction,
    onSandboxClockAdvanced: quotes.onSandboxClockAdvanced,
    executeQuoteTransaction: quotes.executeQuoteTransaction,
    recordQuoteFunding: quotes.recordQuoteFunding,

    // ---- incoming UMA payments (issue 5; see app/incoming.ts) ----
    ...createIncoming({ db, clock, directory }),

    // ---- accounts opened by events (called by consumers, inside their inbox transaction) ----

    async onPlatform(trx: Trx, p: { platformId: string; environment?: string; currencies: string[]; at: Date }) {
      await trx
        .insertInto("platforms")
        .values({ id: p.platformId, environment: p.environment ?? "UNKNOWN", supported_currencies: JSON.stringify(p.currencies), updated_at: p.at })
        .onConflict((oc) =>
          oc.column("id").doUpdateSet((eb) => ({
            supported_currencies: eb.ref("excluded.supported_currencies"),
            updated_at: eb.ref("excluded.updated_at"),
            ...(p.environment ? { environment: eb.ref("excluded.environment") } : {}),
          })),
        )
        .execute();
      // Currencies only ever gain accounts: a currency removed from the config keeps its account
      // (and its money).
      for (const currency of p.currencies) await open(trx, p.platformId, "PLATFORM", undefined, accountType(currency), currency, clock.now());
    },

    async onCustomer(trx: Trx, c: { platformId: string; customerId: string; platformCustomerId: string; currencies: string[]; isDeleted: boolean; at: Date }) {
      await trx
        .insertInto("customers")
        .values({ id: c.customerId, platform_id: c.platformId, platform_customer_id: c.platformCustomerId, currencies: JSON.stringify(c.currencies), is_deleted: c.isDeleted, updated_at: c.at })
        .onConflict((oc) =>
          oc.column("id").doUpdateSet((eb) => ({
            platform_customer_id: eb.ref("excluded.platform_customer_id"),
            currencies: eb.ref("excluded.currencies"),
            is_deleted: eb.ref("excluded.is_deleted"),
            updated_at: eb.ref("excluded.updated_at"),
          })),
        )
        .execute();
      if (c.isDeleted) return;
      // Closed by the ledger (deletion in progress): no new accounts, whatever the event says.
      const copy = await trx.selectFrom("customers").select("closed_at").where("id", "=", c.customerId).executeTakeFirst();
      if (copy?.closed_at) return;
      const now = clock.now();
      for (const currency of c.currencies) await open(trx, c.platformId, "CUSTOMER", c.customerId, accountType(currency), currency, now);
      await open(trx, c.platformId, "CUSTOMER", c.customerId, "EMBEDDED_WALLET", WALLET_CURRENCY, now);
    },

    // ---- customer holdings (customers-kyc asks before deleting a customer) ----

    /**
     * What the customer holds (non-zero balances and holds, in-flight transactions); with `close`
     * and nothing held, the customer is closed in the same transaction (see data/customers.ts).
     */
    async customerHoldings(platformId: string, customerId: string, close: boolean) {
      const missing: FieldError[] = [];
      if (!customerId) missing.push({ field: "customerId", reason: "is required" });
      if (missing.length) throw errors.invalidInput(missing);
      return db.transaction().execute((trx) => holdingsOf(trx, { platformId, customerId, close, now: clock.now() }));
    },

    // ---- internal accounts ----

    async listInternalAccounts(f: InternalAccountFilter, page: PageInput) {
      const limit = pageSize(page.limit);
      const { rows, total } = await listAccounts(db, f, { limit, after: after(page.cursor) });
      return toPage(rows, limit, (r) => ({ k: r.created_at.toISOString(), id: r.id }), total);
    },

    getInternalAccount: internalAccount,

    // ---- external accounts ----

    async createExternalAccount(i: {
      platformId: string;
      ownerKind: "CUSTOMER" | "PLATFORM";
      customerId: string;
      currency: string;
      accountInfo: unknown;
      platformAccountId: string;
      defaultUmaDepositAccount: boolean;
    }) {
      const fieldErrors: FieldError[] = [];
      if (i.ownerKind === "CUSTOMER" && !i.customerId) fieldErrors.push({ field: "customerId", reason: "is required" });
      if (!/^[A-Z]{3,5}$/.test(i.currency)) fieldErrors.push({ field: "currency", reason: "must be an ISO 4217 or asset code (3 to 5 capital letters)" });
      if (i.ownerKind === "PLATFORM" && i.defaultUmaDepositAccount) {
        fieldErrors.push({ field: "defaultUmaDepositAccount", reason: "applies to customer accounts only" });
      }
      const checked = validateAccountInfo(i.currency, i.accountInfo);
      if ("errors" in checked) fieldErrors.push(...checked.errors.filter((e) => !(e.field === "currency" && fieldErrors.some((f) => f.field === "currency"))));
      if (fieldErrors.length || !("ok" in checked)) throw errors.invalidInput(fieldErrors);
      const valid = checked.ok;
      if (i.ownerKind === "CUSTOMER") {
        const c = await directory.customer(i.platformId, i.customerId);
        if (c.isDeleted) throw errors.notFound("Customer", i.customerId);
      }
      const environment = await directory.environment(i.platformId);
      const beneficiary = valid.info.beneficiary as { fullName?: string } | undefined;
      const verification = verifyBeneficiary(environment, valid.identifier, beneficiary?.fullName);
      return db.transaction().execute(async (trx) => {
        const now = clock.now();
        if (i.defaultUmaDepositAccount) await clearDefaultDeposit(trx, i.platformId, i.customerId, now);
        const id = newId("ExternalAccount");
        await insertExternalAccount(trx, {
          id,
          platform_id: i.platformId,
          owner_kind: i.ownerKind,
          customer_id: i.ownerKind === "CUSTOMER" ? i.customerId : null,
          currency: i.currency,
          account_type: valid.accountType,
          account_info: valid.info,
          platform_account_id: i.platformAccountId,
          default_uma_deposit_account: i.defaultUmaDepositAccount,
          status: "ACTIVE",
          beneficiary_verification_status: verification.status,
          beneficiary_verified_data: verification.verifiedData ?? null,
          created_at: now,
          updated_at: now,
          deleted_at: null,
        });
        return (await getExternalAccount(trx, { platformId: i.platformId, ownerKind: i.ownerKind }, id))!;
      });
    },

    async listExternalAccounts(f: ExternalAccountScope & { currency?: string }, page: PageInput) {
      const limit = pageSize(page.limit);
      const { rows, total } = await listExternalAccounts(db, f, { limit, after: after(page.cursor) });
      return toPage(rows, limit, (r) => ({ k: r.created_at.toISOString(), id: r.id }), total);
    },

    async getExternalAccount(scope: ExternalAccountScope, id: string) {
      const row = await getExternalAccount(db, scope, id);
      if (!row) throw errors.notFound("ExternalAccount", id);
      return row;
    },

    async deleteExternalAccount(scope: ExternalAccountScope, id: string) {
      return db.transaction().execute(async (trx) => {
        const row = await getExternalAccount(trx, scope, id);
        if (!row) throw errors.notFound("ExternalAccount", id);
        return markExternalAccountDeleted(trx, id, clock.now());
      });
    },

    // ---- transfers ----

    transferIn: (input: TransferInput) => transfer(input, "IN"),
    transferOut: (input: TransferInput) => transfer(input, "OUT"),

    /**
     * A rail connector's outcome (consumer of corridor.rail-outcomes.v1, in its inbox transaction).
     * Outcomes that do not apply (late, repeated, backwards) change nothing.
     */
    async applyRailOutcome(trx: Trx, o: { platformId: string; transactionId: string; status: RailStatus | QuoteOutcomeStatus; reason: string; at: Date }) {
      const tx = await getTransaction(trx, o.platformId, o.transactionId, true);
      if (!tx) return;
      if (tx.quote_id) return quotes.applyQuoteOutcome(trx, tx, { status: o.status, reason: o.reason, at: o.at });
      // RETURNED and REFUND_* belong to quote payouts only.
      if (o.status !== "PROCESSING" && o.status !== "COMPLETED" && o.status !== "FAILED" && o.status !== "REJECTED") return;
      const internalId = tx.internal_account_id!;
      const t = transitionFor(tx.type, tx.status, o.status, o.reason);
      if (!t) return;
      const now = clock.now();
      if (t.money !== "none") {
        const clearing = await systemAccountId(trx, tx.platform_id, tx.currency, SYSTEM_TYPES.railClearing, now);
        const locked = await lockAccounts(trx, tx.platform_id, [internalId, clearing]);
        if (t.money === "capture-hold") {
          const amount = await settleHold(trx, locked, tx.id, "CAPTURED", now);
          if (amount > 0n) {
            await postEntry(trx, locked, { platformId: tx.platform_id, transactionId: tx.id, kind: "TRANSFER_OUT", now, postings: [{ accountId: internalId, amount: -amount }, { accountId: clearing, amount }] });
          }
        } else if (t.money === "release-hold") {
          await settleHold(trx, locked, tx.id, "RELEASED", now);
          await emitBalanceUpdated(trx, locked.get(internalId)!, now);
        } else {
          await postEntry(trx, locked, { platformId: tx.platform_id, transactionId: tx.id, kind: "TRANSFER_IN", now, postings: [{ accountId: clearing, amount: -tx.amount }, { accountId: internalId, amount: tx.amount }] });
          await emitBalanceUpdated(trx, locked.get(internalId)!, now);
        }
      }
      const updated = await updateTransaction(trx, tx.id, {
        status: t.to,
        failure_reason: t.failure?.reason ?? null,
        failure_detail: t.failure?.detail || null,
        settled_at: t.to === "COMPLETED" ? o.at : null,
        updated_at: now,
      });
      if (t.eventType) await emitTransactionChanged(trx, t.eventType, updated, now);
    },

    // ---- transactions ----

    async listTransactions(f: TransactionFilter, page: PageInput & { ascending: boolean }) {
      const limit = pageSize(page.limit);
      const { rows, total } = await listTransactions(db, f, { limit, ascending: page.ascending, after: after(page.cursor) });
      return toPage(rows, limit, (r) => ({ k: r.created_at.toISOString(), id: r.id }), total);
    },

    async getTransaction(platformId: string, id: string, customerId?: string) {
      const row = await getTransaction(db, platformId, id);
      if (!row || (customerId && row.customer_id !== customerId)) throw errors.notFound("Transaction", id);
      return row;
    },

    // ---- sandbox funding ----

    async fund(i: { platformId: string; accountId: string; amount: bigint; idempotencyKey: string }) {
      checkAmount(i.amount, MAX_FUND_AMOUNT);
      return idempotent(
        { platformId: i.platformId, key: i.idempotencyKey, request: { op: "fund", a: i.accountId, amt: i.amount }, status: 200, schema: InternalAccountSchema },
        async (complete) => {
          const account = await internalAccount(i.platformId, i.accountId);
          if ((await directory.environment(i.platformId)) !== "SANDBOX") throw errors.forbidden("Sandbox funding is for sandbox platforms only");
          return db.transaction().execute(async (trx) => {
            const now = clock.now();
            // Money for a deleted (or closing) customer is refused, never parked in its account.
            if (account.customer_id) await requireOpenCustomer(trx, i.platformId, account.customer_id);
            const funding = await systemAccountId(trx, i.platformId, account.currency, SYSTEM_TYPES.sandboxFunding, now);
            const locked = await lockAccounts(trx, i.platformId, [account.id, funding]);
            await postEntry(trx, locked, { platformId: i.platformId, kind: "SANDBOX_FUNDING", now, postings: [{ accountId: funding, amount: -i.amount }, { accountId: account.id, amount: i.amount }] });
            const after = locked.get(account.id)!;
            await emitBalanceUpdated(trx, after, now);
            const value = internalAccountToPb(after);
            await complete(trx, value);
            return value;
          });
        },
      );
    },
  };
}

export type Ledger = ReturnType<typeof createLedger>;
