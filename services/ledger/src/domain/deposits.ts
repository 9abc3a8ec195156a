import { errors, newId, type Clock, type Logger } from "@corridor/kit";
import { validateAccountInfo } from "./account-info.js";
import { newReference } from "./funding.js";
import { SYSTEM_TYPES, type AccountCorrectionRow, type AccountRow, type ReceivedCreditRow, type TransactionRow } from "./model.js";
import type { LedgerStore, LedgerTx } from "./ports.js";

/** An INCOMING_CREDIT rail notice, as the consumer hands it over. */
export interface IncomingCreditInput {
  connector: string;
  environment: string;
  bankEntryId: string;
  at: Date;
  amount: bigint;
  currency: string;
  paymentRail: string;
  creditedAccount: string;
  creditedRouting: string;
  reference: string;
  senderName: string;
  senderAccount: string;
  senderRouting: string;
  valueDate: string;
}

/** An ACCOUNT_CORRECTION rail notice. */
export interface AccountCorrectionInput {
  connector: string;
  environment: string;
  bankEntryId: string;
  at: Date;
  transactionId: string;
  platformId: string;
  externalAccountId: string;
  code: string;
  corrected: Record<string, string>;
  correctedData: string;
}

export type SuspenseReason =
  | "UNKNOWN_REFERENCE"
  | "AMBIGUOUS_REFERENCE"
  | "ACCOUNT_MISMATCH"
  | "CURRENCY_MISMATCH"
  | "CUSTOMER_CLOSED"
  | "ACCOUNT_NOT_ACTIVE"
  | "NOT_PRODUCTION"
  | "RAIL_NOT_BOUND";

/** Funding references as domain/funding.ts makes them (DEP- for internal accounts), in any remittance text. */
const REFERENCE = /\b(?:DEP|CRD)-[A-Z0-9]{10}\b/g;

/** The distinct funding references a remittance text names (upper-cased: bank files shout). */
export function referencesIn(text: string): string[] {
  return [...new Set(text.toUpperCase().match(REFERENCE) ?? [])];
}

/** Account numbers and IBANs compared as banks write them: no blanks, upper case (IBAN); an account number also without leading zeros. */
export function sameBankAccount(a: string, b: string): boolean {
  const norm = (v: string) => v.replace(/[\s-]/g, "").toUpperCase();
  const x = norm(a);
  const y = norm(b);
  if (!x || !y) return false;
  if (x === y) return true;
  return /^[0-9]+$/.test(x) && /^[0-9]+$/.test(y) && x.replace(/^0+/, "") === y.replace(/^0+/, "");
}

/** The bank accounts an internal account's funding payment instructions tell payers to pay into. */
export function fundingAccountsOf(account: Pick<AccountRow, "funding_instructions">): { accountNumber?: string; iban?: string }[] {
  const out: { accountNumber?: string; iban?: string }[] = [];
  for (const i of (account.funding_instructions ?? []) as { accountOrWalletInfo?: Record<string, unknown> }[]) {
    const info = i?.accountOrWalletInfo ?? {};
    const accountNumber = typeof info.accountNumber === "string" ? info.accountNumber : undefined;
    const iban = typeof info.iban === "string" ? info.iban : undefined;
    if (accountNumber || iban) out.push({ accountNumber, iban });
  }
  return out;
}

const MAX_LIST = 500;
const STATUSES = new Set(["SUSPENSE", "CREDITED", "RETURN_REQUESTED", "RETURNED", "RETURN_FAILED", "ALL"]);

/**
 * The return reasons the operator may send (ACH R-codes an RDFI uses to return a credit it cannot
 * place): R23 credit entry refused by receiver (the default), R17 file record edit criteria (the
 * entry cannot be processed), R03 no account / unable to locate account.
 */
export const RETURN_REASONS = ["R23", "R17", "R03"] as const;

/**
 * Deposits and notifications of change from production rails (rail contract 1.2,
 * docs/connectors.md "Notices"; docs/operations.md "Deposits in suspense").
 *
 * An INCOMING_CREDIT is recorded once per (connector, bank entry id) and matched to the internal
 * account whose funding reference (DEP-…) its remittance names, when that account's funding
 * instructions name the bank account credited, its platform is PRODUCTION with the (currency,
 * rail) bound to the reporting connector, the currency agrees and the account and its customer are
 * open. Matched: an INCOMING transaction, COMPLETED at once, credits the account from the
 * platform's RAIL_CLEARING (the money is at the operator's bank, as for a completed pull).
 * Otherwise it waits in suspense (no journal entry: it is nobody's money on the books yet) until
 * the operator assigns it (credited exactly once, as a match) or returns it.
 */
export function createDeposits(deps: { store: LedgerStore; clock: Clock; log?: Pick<Logger, "warn" | "error" | "info"> }) {
  const { store, clock } = deps;

  /** Why the account cannot take the credit, or undefined when it can. */
  async function refusal(trx: LedgerTx, c: ReceivedCreditRow, account: AccountRow, checkFunding: boolean): Promise<SuspenseReason | undefined> {
    if ((await trx.platformEnvironment(account.platform_id)) !== "PRODUCTION") return "NOT_PRODUCTION";
    if (account.currency !== c.currency) return "CURRENCY_MISMATCH";
    if (checkFunding) {
      const funding = fundingAccountsOf(account);
      if (!funding.some((f) => sameBankAccount(f.accountNumber ?? f.iban ?? "", c.credited_account))) return "ACCOUNT_MISMATCH";
    }
    const bindings = await trx.railBindingsOf(account.platform_id, c.currency);
    if (!bindings.some((b) => b.connector === c.connector && (c.payment_rail === "" || b.payment_rail === c.payment_rail))) return "RAIL_NOT_BOUND";
    if (account.status !== "ACTIVE") return "ACCOUNT_NOT_ACTIVE";
    if (account.customer_id && (await trx.customerClosed(account.platform_id, account.customer_id))) return "CUSTOMER_CLOSED";
    return undefined;
  }

  /** Credits the item to the account: the INCOMING transaction, the journal entry, the webhooks; the item becomes CREDITED. */
  async function credit(trx: LedgerTx, c: ReceivedCreditRow, account: AccountRow, note: string): Promise<{ item: ReceivedCreditRow; tx: TransactionRow }> {
    const now = clock.now();
    const clearing = await trx.systemAccountId(account.platform_id, c.currency, SYSTEM_TYPES.railClearing, now);
    const locked = await trx.lockAccounts(account.platform_id, [account.id, clearing]);
    const id = newId("Transaction");
    const counterparty: Record<string, string> = { paymentRail: c.payment_rail, bankEntryId: c.bank_entry_id };
    if (c.sender_name) counterparty.senderName = c.sender_name;
    if (c.reference) counterparty.remittanceInformation = c.reference;
    const tx = await trx.insertTransaction({
      id,
      platform_id: account.platform_id,
      type: "INCOMING",
      status: "COMPLETED",
      source_type: "ACCOUNT",
      source_account_id: "",
      destination_type: "ACCOUNT",
      destination_account_id: account.id,
      internal_account_id: account.id,
      external_account_id: null,
      customer_id: account.customer_id,
      platform_customer_id: null,
      amount: c.amount,
      currency: c.currency,
      counterparty_information: JSON.stringify(counterparty),
      reference: newReference("TXN"),
      description: "",
      agent_id: null,
      failure_reason: null,
      failure_detail: null,
      settled_at: now,
      created_at: now,
      updated_at: now,
      connector: c.connector,
      payment_rail: c.payment_rail || null,
    });
    await trx.postEntry(locked, {
      platformId: account.platform_id,
      transactionId: id,
      kind: "RAIL_DEPOSIT",
      now,
      postings: [
        { accountId: clearing, amount: -c.amount },
        { accountId: account.id, amount: c.amount },
      ],
    });
    const item = await trx.updateReceivedCredit(c.id, { status: "CREDITED", platform_id: account.platform_id, internal_account_id: account.id, transaction_id: id, note: note || c.note, updated_at: now });
    await trx.emitTransactionChanged("INCOMING_PAYMENT_COMPLETED", tx, now);
    await trx.emitBalanceUpdated(locked.get(account.id)!, now);
    return { item, tx };
  }

  return {
    /** An INCOMING_CREDIT (rail-notices consumer, in its inbox transaction). Answers the item, or undefined for a repeat. */
    async onIncomingCredit(inbox: unknown, n: IncomingCreditInput): Promise<ReceivedCreditRow | undefined> {
      const trx = store.within(inbox);
      const now = clock.now();
      if (n.environment !== "PRODUCTION" || n.connector === "sandbox" || n.connector === "") {
        deps.log?.error({ connector: n.connector, environment: n.environment, bank_entry_id: n.bankEntryId }, "incoming credit notice not from a production connector; ignored");
        return undefined;
      }
      const inserted = await trx.insertReceivedCredit({
        id: newId("RailNotice"),
        connector: n.connector,
        bank_entry_id: n.bankEntryId,
        amount: n.amount,
        currency: n.currency,
        payment_rail: n.paymentRail,
        credited_account: n.creditedAccount,
        credited_routing: n.creditedRouting,
        reference: n.reference,
        sender_name: n.senderName,
        sender_account: n.senderAccount,
        sender_routing: n.senderRouting,
        value_date: n.valueDate,
        status: "SUSPENSE",
        suspense_reason: "",
        platform_id: null,
        internal_account_id: null,
        transaction_id: null,
        note: "",
        received_at: now,
        updated_at: now,
        return_transaction_id: null,
        return_reason: "",
        return_detail: "",
      });
      if (!inserted) return undefined; // the same bank entry again (another event id): applied once
      const refs = referencesIn(n.reference);
      const suspend = async (reason: SuspenseReason, platformId?: string) => {
        deps.log?.warn({ id: inserted.id, connector: n.connector, reason }, "received credit kept in suspense for the operator");
        return trx.updateReceivedCredit(inserted.id, { suspense_reason: reason, platform_id: platformId ?? null });
      };
      if (refs.length !== 1) return suspend(refs.length === 0 ? "UNKNOWN_REFERENCE" : "AMBIGUOUS_REFERENCE");
      const account = await trx.accountByReference(refs[0]!);
      if (!account) return suspend("UNKNOWN_REFERENCE");
      const reason = await refusal(trx, inserted, account, true);
      if (reason) return suspend(reason, account.platform_id);
      return (await credit(trx, inserted, account, "")).item;
    },

    /**
     * An ACCOUNT_CORRECTION (rail-notices consumer, in its inbox transaction): the external account
     * the transaction went to takes the corrected account number, routing number and account type
     * (accountInfo.bankAccountType) and the platform gets EXTERNAL_ACCOUNT_UPDATED. Refused and kept
     * (nothing changes, logged): a transaction unknown or not routed to that connector, an account
     * gone or not a US account, a code that corrects nothing the account holds (names,
     * identification numbers), a corrected value that is not valid. Once per (connector, bank entry id).
     */
    async onAccountCorrection(inbox: unknown, n: AccountCorrectionInput): Promise<AccountCorrectionRow["status"] | undefined> {
      const trx = store.within(inbox);
      const now = clock.now();
      if (n.environment !== "PRODUCTION" || n.connector === "sandbox" || n.connector === "") {
        deps.log?.error({ connector: n.connector, environment: n.environment, bank_entry_id: n.bankEntryId }, "account correction notice not from a production connector; ignored");
        return undefined;
      }
      const tx = n.platformId && n.transactionId ? await trx.getTransaction(n.platformId, n.transactionId) : undefined;
      const externalId = n.externalAccountId || tx?.external_account_id || "";
      const external = tx && externalId ? await trx.findExternalAccount(tx.platform_id, externalId) : undefined;
      const { changes, refused } = ((): { changes: Record<string, string>; refused?: string } => {
        if (!tx) return { changes: {}, refused: "UNKNOWN_TRANSACTION" };
        if ((tx.connector ?? "sandbox") !== n.connector) return { changes: {}, refused: "NOT_ROUTED_TO_CONNECTOR" };
        if (!external) return { changes: {}, refused: "EXTERNAL_ACCOUNT_NOT_FOUND" };
        if (external.account_info.accountType !== "USD_ACCOUNT") return { changes: {}, refused: "NOT_A_US_ACCOUNT" };
        const c: Record<string, string> = {};
        if (n.corrected.accountNumber !== undefined) c.accountNumber = n.corrected.accountNumber;
        if (n.corrected.routingNumber !== undefined) c.routingNumber = n.corrected.routingNumber;
        if (n.corrected.accountType !== undefined) c.bankAccountType = n.corrected.accountType;
        if (Object.keys(c).length === 0) return { changes: {}, refused: "NOTHING_TO_CORRECT" };
        const next = { ...external.account_info, ...c };
        const checked = validateAccountInfo(external.currency, next);
        if ("errors" in checked) return { changes: {}, refused: `INVALID_CORRECTION: ${checked.errors.map((e) => `${e.field} ${e.reason}`).join("; ")}` };
        const changed = Object.fromEntries(Object.entries(c).filter(([k, v]) => external.account_info[k] !== v));
        if (Object.keys(changed).length === 0) return { changes: {}, refused: "ALREADY_CURRENT" };
        return { changes: changed };
      })();
      const fresh = await trx.insertAccountCorrection({
        id: newId("RailNotice"),
        connector: n.connector,
        bank_entry_id: n.bankEntryId,
        transaction_id: n.transactionId,
        platform_id: tx?.platform_id ?? (n.platformId || null),
        external_account_id: externalId || null,
        code: n.code,
        corrected: n.corrected,
        corrected_data: n.correctedData,
        status: refused ? "REFUSED" : "APPLIED",
        detail: refused ?? Object.keys(changes).join(","),
        received_at: now,
      });
      if (!fresh) return undefined;
      if (refused || !external) {
        deps.log?.warn({ connector: n.connector, transaction_id: n.transactionId, code: n.code, reason: refused }, "account correction refused; kept, nothing changed");
        return "REFUSED";
      }
      await trx.updateExternalAccountInfo(external.platform_id, external.id, { ...external.account_info, ...changes }, now);
      const updated = (await trx.findExternalAccount(external.platform_id, external.id))!;
      await trx.emitExternalAccountUpdated(updated, now, { code: n.code, transactionId: n.transactionId, fields: Object.keys(changes) });
      return "APPLIED";
    },

    /** The operator's list of notifications of change: REFUSED by default (what needs a look), APPLIED, or ALL. */
    async listAccountCorrections(f: { status?: string; connector?: string; limit?: number }) {
      const status = f.status || "REFUSED";
      if (!["REFUSED", "APPLIED", "ALL"].includes(status)) throw errors.invalidInput([{ field: "status", reason: "must be one of REFUSED, APPLIED, ALL" }]);
      const limit = f.limit && f.limit > 0 ? Math.min(f.limit, MAX_LIST) : 100;
      return store.listAccountCorrections({ status: status === "ALL" ? undefined : status, connector: f.connector || undefined, limit });
    },

    async listSuspense(f: { status?: string; connector?: string; limit?: number }) {
      const status = f.status || "SUSPENSE";
      if (!STATUSES.has(status)) throw errors.invalidInput([{ field: "status", reason: `must be one of ${[...STATUSES].join(", ")}` }]);
      const limit = f.limit && f.limit > 0 ? Math.min(f.limit, MAX_LIST) : 100;
      return store.listReceivedCredits({ status: status === "ALL" ? undefined : status, connector: f.connector || undefined, limit });
    },

    async getSuspenseItem(id: string) {
      const item = id ? await store.getReceivedCredit(id) : undefined;
      if (!item) throw errors.notFound("SuspenseItem", id);
      return item;
    },

    /**
     * The operator assigns an item in suspense to an internal account: credited once, as a match
     * would (the funding account check is the operator's call; the rest still applies). The same
     * assignment again answers the item as it is; any other state refuses.
     */
    async assignSuspenseItem(i: { id: string; internalAccountId: string; note: string }) {
      if (!i.internalAccountId) throw errors.invalidInput([{ field: "internalAccountId", reason: "is required" }]);
      const first = await this.getSuspenseItem(i.id);
      // Opened before the money transaction when the account exists (no inserts under locks).
      const target = await store.accountById(i.internalAccountId);
      if (target && target.owner_kind !== "SYSTEM" && target.currency === first.currency) await store.systemAccountId(target.platform_id, first.currency, SYSTEM_TYPES.railClearing, clock.now());
      return store.transaction(async (trx) => {
        const item = (await trx.getReceivedCredit(first.id, true))!;
        if (item.status === "CREDITED" && item.internal_account_id === i.internalAccountId) return item;
        if (item.status !== "SUSPENSE" && item.status !== "RETURN_FAILED") throw errors.conflict("SUSPENSE_ITEM_NOT_OPEN", `The item is ${item.status}; only an item in SUSPENSE or RETURN_FAILED can be assigned`, { id: item.id, status: item.status });
        const account = await trx.accountById(i.internalAccountId);
        if (!account || account.owner_kind === "SYSTEM") throw errors.notFound("InternalAccount", i.internalAccountId);
        const reason = await refusal(trx, item, account, false);
        if (reason) throw errors.conflict("SUSPENSE_ITEM_NOT_ASSIGNABLE", `The account cannot take this credit: ${reason}`, { id: item.id, reason });
        return (await credit(trx, item, account, i.note)).item;
      });
    },

    /**
     * The operator returns an item in suspense (or whose return failed) to its sender (rail
     * contract 1.3): it becomes RETURN_REQUESTED and, in the same transaction, a RETURN instruction
     * with a new transaction id goes to the connector that reported the credit (exactly once: the
     * outbox). No journal entry: a credit in suspense was never booked (the money sits at the
     * operator's bank, on nobody's account), so sending it back leaves every balance and the trial
     * balance as they are. A repeat (RETURN_REQUESTED, RETURNED) answers the item as it is.
     * With `returned`: marked RETURNED by hand, for money the operator sent back outside Corridor
     * (no instruction; refused while a RETURN instruction is with the connector).
     */
    async returnSuspenseItem(i: { id: string; note: string; returned: boolean; reason?: string }) {
      const reason = (i.reason ?? "").trim().toUpperCase() || "R23";
      if (!(RETURN_REASONS as readonly string[]).includes(reason)) throw errors.invalidInput([{ field: "reason", reason: `must be one of ${RETURN_REASONS.join(", ")}` }]);
      await this.getSuspenseItem(i.id);
      return store.transaction(async (trx) => {
        const item = (await trx.getReceivedCredit(i.id, true))!;
        const now = clock.now();
        if (item.status === "RETURNED") return item;
        if (i.returned) {
          if (item.status !== "SUSPENSE" && item.status !== "RETURN_FAILED")
            throw errors.conflict("SUSPENSE_ITEM_NOT_OPEN", `The item is ${item.status}; only an item in SUSPENSE or RETURN_FAILED can be marked RETURNED by hand`, { id: item.id, status: item.status });
          return trx.updateReceivedCredit(item.id, { status: "RETURNED", note: i.note || item.note, updated_at: now });
        }
        if (item.status === "RETURN_REQUESTED") return item;
        if (item.status !== "SUSPENSE" && item.status !== "RETURN_FAILED")
          throw errors.conflict("SUSPENSE_ITEM_NOT_OPEN", `The item is ${item.status}; only an item in SUSPENSE or RETURN_FAILED can be returned`, { id: item.id, status: item.status });
        const returnId = newId("Transaction");
        const updated = await trx.updateReceivedCredit(item.id, {
          status: "RETURN_REQUESTED",
          return_transaction_id: returnId,
          return_reason: reason,
          return_detail: "",
          note: i.note || item.note,
          updated_at: now,
        });
        await trx.emitReturnInstruction(updated, returnId, now);
        deps.log?.info({ id: item.id, connector: item.connector, return_transaction_id: returnId, reason }, "received credit returned to its sender through the connector");
        return updated;
      });
    },

    /**
     * A connector's outcome for a RETURN instruction (rail-outcomes consumer, in its inbox
     * transaction); undefined when the transaction id is no return's. COMPLETED: RETURNED.
     * FAILED or REJECTED: RETURN_FAILED with the reason (the money is still at the operator's bank,
     * the item awaits the operator again). Anything else, a repeat, or an outcome for an earlier
     * attempt changes nothing.
     */
    async applyReturnOutcome(inbox: unknown, o: { transactionId: string; status: string; reason: string; connector?: string; environment?: string }): Promise<"applied" | "not-addressed" | undefined> {
      if (!o.transactionId) return undefined;
      const trx = store.within(inbox);
      const item = await trx.receivedCreditByReturn(o.transactionId);
      if (!item) return undefined;
      if (o.connector !== item.connector || (o.environment && o.environment !== "PRODUCTION")) return "not-addressed";
      if (item.status !== "RETURN_REQUESTED") return "applied";
      const now = clock.now();
      if (o.status === "COMPLETED") {
        await trx.updateReceivedCredit(item.id, { status: "RETURNED", return_detail: "", updated_at: now });
      } else if (o.status === "FAILED" || o.status === "REJECTED") {
        deps.log?.error({ id: item.id, connector: item.connector, return_transaction_id: o.transactionId, status: o.status, reason: o.reason }, "the connector failed the return of a received credit; it is back in suspense for the operator");
        await trx.updateReceivedCredit(item.id, { status: "RETURN_FAILED", return_detail: `${o.status}${o.reason ? `: ${o.reason}` : ""}`, updated_at: now });
      }
      return "applied";
    },
  };
}
