import type { Clock, Logger } from "@corridor/kit";
import { createAccounts } from "./accounts.js";
import { createCancellation } from "./cancellation.js";
import { createCopies } from "./copies.js";
import { createDiscoveries } from "./discoveries.js";
import { createDeposits } from "./deposits.js";
import type { FundingBank } from "./funding.js";
import { createIncoming } from "./incoming.js";
import { createOwnership, type OwnershipSettings } from "./ownership.js";
import type { Idempotent } from "./idempotency.js";
import type { AccountRow, ExternalAccountRow, TransactionRow } from "./model.js";
import type { AnswerCodec, Directory, LedgerStore, WalletSignatures } from "./ports.js";
import { createWalletSettings } from "./wallet-settings.js";
import { createQuotes } from "./quote-transactions.js";
import { createRailRouter } from "./rails.js";
import { createSandboxFunding } from "./sandbox-funding.js";
import { createTransfers } from "./transfers.js";
import type { RailOutcomeInput, RailOutcomeResult } from "./rail-outcomes.js";

export { MAX_FUND_AMOUNT, requireTransactionType, type PageInput } from "./gates.js";
export type { TransferInput } from "./transfers.js";
export type { Directory } from "./ports.js";

/**
 * The ledger's use cases, one module per responsibility: accounts (accounts.ts), transfers and
 * their rail outcomes (transfers.ts), sandbox funding (sandbox-funding.ts), quote transactions
 * (quote-transactions.ts), incoming UMA payments (incoming.ts), the event-fed copies and customer
 * holdings (copies.ts). Each takes its I/O as arguments; this only wires them together.
 */
export function createLedger(deps: {
  store: LedgerStore;
  clock: Clock;
  directory: Directory;
  idempotent: Idempotent;
  answers: { transaction: AnswerCodec<TransactionRow>; internalAccount: AnswerCodec<AccountRow>; externalAccount: AnswerCodec<ExternalAccountRow> };
  log?: Pick<Logger, "warn" | "error" | "info">;
  /** LEDGER_FUNDING_BANK_ACCOUNTS: where production platforms are paid. */
  fundingBanks?: readonly FundingBank[];
  /** auth-sessions' signed retries (PATCH /internal-accounts/{id}). */
  walletSignatures: WalletSignatures;
  /** The WALLET_SIGNATURE challenge's knobs (config.ts, LEDGER_OWNERSHIP_SIGNATURE_*). */
  ownership: OwnershipSettings;
}) {
  const { store, clock, directory, idempotent, answers } = deps;
  const rails = createRailRouter({ store, directory, clock });
  const quotes = createQuotes({ store, clock, directory, rails });
  const transfers = createTransfers({ store, clock, directory, idempotent, answers: answers.transaction, quotes, rails });
  const deposits = createDeposits({ store, clock, log: deps.log });
  const ownership = createOwnership({ store, clock, directory, rails, log: deps.log, settings: deps.ownership });
  /**
   * Rail outcomes applied together in one transaction (rail-outcomes.ts: every lock taken up front,
   * in one order): a transaction's, else a RETURN instruction's (deposits.ts, contract 1.3), else a
   * micro-deposit's (ownership.ts). A batch of several with one that names no transaction throws
   * OutcomeBatchOrderError (the host then applies them one by one).
   */
  async function applyRailOutcomes(inbox: unknown, outcomes: readonly RailOutcomeInput[]): Promise<RailOutcomeResult[]> {
    const results = await transfers.applyRailOutcomes(inbox, outcomes);
    for (const [i, r] of results.entries()) {
      if (r !== "unknown") continue;
      const o = outcomes[i]!;
      results[i] = (await deposits.applyReturnOutcome(inbox, o)) ?? (await ownership.applyMicroDepositOutcome(inbox, o)) ?? "unknown";
    }
    return results;
  }

  return {
    ...createAccounts({ store, clock, directory, idempotent, answers: answers.externalAccount }),
    ...createCopies({ store, clock, fundingBanks: deps.fundingBanks }),
    ...transfers,
    ...createSandboxFunding({ store, clock, directory, idempotent, answers: answers.internalAccount }),
    ...createIncoming({ store, clock, directory, idempotent, answers: answers.transaction, rails }),
    /** Rail notices: deposits, the suspense list, notifications of change (deposits.ts). */
    ...deposits,
    /** Cancellation before the rail has a transaction, and receipt confirmations (cancellation.ts). */
    ...createCancellation({ store, clock, log: deps.log }),
    /** The rails a platform can pay out over, per country and currency (discoveries.ts). */
    ...createDiscoveries({ store, directory }),
    /** An embedded wallet's privacy, by signed retry (wallet-settings.ts). */
    updateInternalAccount: createWalletSettings({ store, clock, signatures: deps.walletSignatures }).updateInternalAccount,
    /** Ownership verification by micro-deposits or wallet signature (ownership.ts). */
    startOwnershipChallenge: ownership.startOwnershipChallenge,
    verifyOwnership: ownership.verifyOwnership,
    /**
     * A rail outcome: a transaction's (transfers.ts), else a RETURN instruction's (deposits.ts,
     * contract 1.3), else a micro-deposit's (ownership.ts).
     */
    async applyRailOutcome(inbox: unknown, o: RailOutcomeInput): Promise<RailOutcomeResult> {
      return (await applyRailOutcomes(inbox, [o]))[0]!;
    },
    /**
     * Rail outcomes applied together in one transaction (rail-outcomes.ts: every lock taken up
     * front, in one order). A batch of several with one that names no transaction throws
     * OutcomeBatchOrderError: the host then applies them one by one.
     */
    applyRailOutcomes,
    createQuoteTransaction: quotes.createQuoteTransaction,
    authorizeQuoteTransaction: quotes.authorizeQuoteTransaction,
    createLookupTransaction: quotes.createLookupTransaction,
    expireQuoteTransaction: quotes.expireQuoteTransaction,
    onSandboxClockAdvanced: quotes.onSandboxClockAdvanced,
    executeQuoteTransaction: quotes.executeQuoteTransaction,
    recordQuoteFunding: quotes.recordQuoteFunding,
    checkPaymentRail: quotes.checkPaymentRail,
    /** The operator's rail bindings (LedgerAdminService, LEDGER_RAIL_BINDINGS). */
    bindRail: rails.bind,
    unbindRail: rails.unbind,
    listRailBindings: rails.list,
    /** Where a payment would go (quotes-fx asks before it prices a quote). */
    routeRail: rails.route,
  };
}

export type Ledger = ReturnType<typeof createLedger>;
