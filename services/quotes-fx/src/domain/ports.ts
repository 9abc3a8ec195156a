/**
 * What quotes-fx needs from other services and from storage. Implemented over Connect clients
 * (src/clients/) and Kysely (src/data/); tests pass fakes. Never called inside a transaction.
 */

export interface PlatformCurrencyConfig {
  currencyCode: string;
  minAmount: bigint;
  maxAmount: bigint;
  requiredCounterpartyFields: { name: string; mandatory: boolean }[];
  /** Receiver fields asked of the platform for an incoming payment in this currency (approval webhook). */
  providerRequiredCustomerFields?: string[];
  /** OUTGOING and/or INCOMING: the directions the platform enables in this currency. */
  enabledTransactionTypes?: string[];
}

export interface PlatformFacts {
  environment: "SANDBOX" | "PRODUCTION";
  umaDomain: string;
  supportedCurrencies: PlatformCurrencyConfig[];
}

/** auth-sessions: GetPlatform + GetPlatformConfig. */
export interface PlatformDirectory {
  facts(platformId: string): Promise<PlatformFacts>;
}

export interface InternalAccountView {
  id: string;
  customerId: string;
  type: "INTERNAL_FIAT" | "INTERNAL_CRYPTO" | "EMBEDDED_WALLET" | string;
  currency: string;
  available: bigint;
}

export interface ExternalAccountView {
  id: string;
  customerId: string;
  status: string;
  currency: string;
  accountType: string;
  /** accountInfo.beneficiary as registered (fullName, birthDate, nationality, …), when there is one. */
  beneficiary?: Record<string, unknown>;
}

/** The ledger: accounts by id, scoped to the platform; undefined when not found there. */
export interface LedgerPort {
  internalAccount(platformId: string, accountId: string): Promise<InternalAccountView | undefined>;
  externalAccount(platformId: string, accountId: string): Promise<ExternalAccountView | undefined>;
  /**
   * Refuses (400 PAYMENT_RAIL_NOT_AVAILABLE, from the ledger) a payout in `currency` no connector
   * would carry for this platform; resolves when one would (docs/connectors.md).
   */
  checkPaymentRail(platformId: string, currency: string, d: { externalAccountId: string; paymentRail: string }): Promise<void>;
}

/** Sandbox outcome a UMA receiver was looked up with (carried to the payment in part 2). */
export type UmaScenario = "SUCCESS" | "PENDING_LONG" | "FAIL_COMPLIANCE" | "FAIL_LNURLP" | "FAIL_PAYEE_DATA" | "REFUNDED";

export interface ReceiverCurrencyOffer {
  currencyCode: string;
  /** Decimal string: sending major units per receiving major unit. */
  estimatedExchangeRate: string;
  min: bigint;
  max: bigint;
}

export interface ReceiverLookup {
  id: string;
  platformId: string;
  kind: "UMA" | "EXTERNAL_ACCOUNT";
  receiverUmaAddress: string;
  accountId: string;
  customerId: string;
  senderUmaAddress: string;
  sendingCurrency: string;
  supportedCurrencies: ReceiverCurrencyOffer[];
  requiredPayerDataFields: { name: string; mandatory: boolean }[];
  /** Sandbox receivers only; empty otherwise. */
  scenario: UmaScenario | "";
  createdAt: Date;
  expiresAt: Date;
}

export interface LookupStore {
  insert(lookup: ReceiverLookup): Promise<void>;
  get(platformId: string, id: string): Promise<ReceiverLookup | undefined>;
}

/* ---------- Part 2: the quote lifecycle ---------- */

export type QuoteStatus = "PENDING_AUTHORIZATION" | "PENDING" | "PROCESSING" | "COMPLETED" | "FAILED" | "EXPIRED";

/** The SCA challenge a PENDING_AUTHORIZATION quote waits on (auth-sessions issued it; docs/sca.md). */
export interface QuoteScaChallenge {
  id: string;
  expiresAt: Date;
  factor: string;
  availableFactors: string[];
  purpose: string;
}

/** auth-sessions' strong customer authentication, for quotes. */
export interface ScaPort {
  /** The challenge when the customer's payment needs SCA; undefined when it does not. */
  begin(input: { platformId: string; customerId: string; quoteId: string; externalAccountId: string }): Promise<QuoteScaChallenge | undefined>;
  /** Throws auth-sessions' refusal (400 SCA_CODE_INVALID, SCA_CHALLENGE_EXPIRED, SCA_ATTEMPTS_EXCEEDED; 409 SCA_NOT_PENDING). */
  authorize(platformId: string, quoteId: string, code: string): Promise<void>;
  /** Throws 429 RATE_LIMITED within 30 s of the last code. */
  resend(platformId: string, quoteId: string): Promise<void>;
}

/** How to pay a REALTIME_FUNDING quote (spec: payment instruction item). */
export interface PaymentInstruction {
  accountType: "USD_ACCOUNT" | "SPARK_WALLET";
  paymentRails: string[];
  accountNumber: string;
  routingNumber: string;
  bankName: string;
  reference: string;
  assetType: string;
  address: string;
  invoice: string;
  instructionsNotes: string;
  amount: bigint;
  currency: string;
}

/** A persisted quote. Amounts are minor units; rates and fee rates are decimal strings. */
export interface Quote {
  id: string;
  platformId: string;
  status: QuoteStatus;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
  source: { sourceType: "ACCOUNT" | "REALTIME_FUNDING"; accountId: string; customerId: string; currency: string };
  destination: { destinationType: "ACCOUNT" | "UMA_ADDRESS"; accountId: string; paymentRail: string; umaAddress: string; currency: string };
  sendingCurrency: string;
  receivingCurrency: string;
  totalSendingAmount: bigint;
  totalReceivingAmount: bigint;
  exchangeRate: string;
  feesIncluded: bigint;
  rateDetails: {
    counterpartyMultiplier: string;
    counterpartyFixedFee: bigint;
    serviceApiMultiplier: string;
    serviceApiFixedFee: bigint;
    serviceApiVariableFeeRate: string;
    serviceApiVariableFeeAmount: bigint;
  };
  lockedCurrencySide: "SENDING" | "RECEIVING";
  lockedCurrencyAmount: bigint;
  lookupId: string;
  description: string;
  purposeOfPayment: string;
  counterpartyInformation: Record<string, string>;
  senderCustomerInfo: Record<string, string>;
  transactionId: string;
  /** EMBEDDED_WALLET sources: the challenge auth-sessions issued; empty otherwise. */
  payloadToSign: string;
  signatureRequestId: string;
  /** True once auth-sessions accepted the signature (the requestId is single use). */
  signatureVerified: boolean;
  paymentInstructions: PaymentInstruction[];
  /** Transaction failure reason (QUOTE_EXPIRED, PAY_REQUEST_FAILED, ...) once FAILED or EXPIRED. */
  failureReason: string;
  /** Set while an execution (or a real-time funding) is with the ledger; cleared if it failed. */
  executionStartedAt?: Date;
  /** Who holds that claim: executionClaimant(key) of the request that took it; undefined without a key. */
  executionClaimant?: string;
  /** Agent:<uuidv7> when an agent created the quote; "" otherwise. */
  agentId: string;
  /** PENDING_AUTHORIZATION quotes: the challenge they wait on. */
  scaChallenge?: QuoteScaChallenge;
  /** Created with immediatelyExecute while it needed SCA: executed once authorized. */
  executeOnAuthorization?: boolean;
}

/** The quote's transaction as the ledger reports it. */
export interface QuoteTransactionState {
  id: string;
  /** The ledger's status: PENDING, PROCESSING, COMPLETED, FAILED, REJECTED, REFUNDED or EXPIRED. */
  status: string;
  failureReason: string;
}

export interface CreateQuoteTransactionInput {
  platformId: string;
  quoteId: string;
  customerId: string;
  /** InternalAccount id, or "" for REALTIME_FUNDING. */
  sourceAccountId: string;
  destination: { kind: "EXTERNAL_ACCOUNT" | "UMA_ADDRESS"; accountId: string; paymentRail: string; umaAddress: string };
  sendingCurrency: string;
  totalSendingAmount: bigint;
  receivingCurrency: string;
  totalReceivingAmount: bigint;
  feesIncluded: bigint;
  exchangeRate: string;
  rateDetails: Record<string, string>;
  description: string;
  counterpartyInformation: Record<string, string>;
  expiresAt: Date;
  /** Agent:<uuidv7> when an agent created the quote; "" otherwise (stamped on the transaction). */
  agentId: string;
  /** The receiver lookup the quote was made from, "" for none: the ledger adopts its CREATED transaction. */
  lookupId: string;
  /** The quote waits for strong customer authentication: its transaction starts PENDING_AUTHORIZATION. */
  awaitingAuthorization: boolean;
}

/** A customer's receiver lookup, as the ledger records it (a CREATED transaction). */
export interface CreateLookupTransactionInput {
  platformId: string;
  lookupId: string;
  customerId: string;
  destination: { kind: "EXTERNAL_ACCOUNT" | "UMA_ADDRESS"; accountId: string; umaAddress: string };
  sendingCurrency: string;
  receivingCurrency: string;
  expiresAt: Date;
}

/** The ledger's quote transactions (LedgerService.*QuoteTransaction, RecordQuoteFunding). Never called inside a transaction. */
export interface QuoteLedgerPort {
  createQuoteTransaction(input: CreateQuoteTransactionInput): Promise<QuoteTransactionState>;
  /** LedgerService.CreateLookupTransaction: the CREATED transaction of a customer's lookup (idempotent per lookup). */
  createLookupTransaction(input: CreateLookupTransactionInput): Promise<QuoteTransactionState>;
  /**
   * LedgerService.AuthorizeQuoteTransaction: PENDING_AUTHORIZATION -> PENDING once the quote's SCA
   * challenge is satisfied; any other status answered as is (idempotent).
   */
  authorizeQuoteTransaction(platformId: string, transactionId: string): Promise<QuoteTransactionState>;
  expireQuoteTransaction(platformId: string, transactionId: string): Promise<QuoteTransactionState>;
  executeQuoteTransaction(platformId: string, transactionId: string): Promise<QuoteTransactionState & { alreadyExecuted: boolean }>;
  /** `snapshot`: the transaction as the ledger answered it, in its JSON form (kept as the first answer of /sandbox/send). */
  recordQuoteFunding(platformId: string, transactionId: string, currencyCode: string, amount: bigint): Promise<QuoteTransactionState & { alreadyExecuted: boolean; snapshot: unknown }>;
}

/** auth-sessions' signed-retry challenges for EXECUTE_QUOTE (WalletAuthService). */
export interface WalletSignaturePort {
  createChallenge(platformId: string, accountId: string, body: string): Promise<{ payloadToSign: string; requestId: string; expiresAt: Date }>;
  /** Throws auth-sessions' error (401 UNAUTHORIZED, WALLET_SIGNATURE_BODY_MISMATCH) when the signature does not verify. */
  verify(platformId: string, accountId: string, retry: { requestId: string; signature: string }, body: string): Promise<void>;
}

export interface QuoteStore {
  /**
   * Stores a quote as a draft, before the ledger is asked for its transaction: invisible to every
   * read below until `confirm`. `creationRef` ties it to the Idempotency-Key it was created under
   * ("" without a key); `at` is the service clock's time (the draft worker's age test).
   */
  insertDraft(quote: Quote, draft: { creationRef: string; at: Date }): Promise<void>;
  /** The newest quote (draft or not) created under `creationRef` since `since`. */
  findCreated(platformId: string, creationRef: string, since: Date): Promise<{ quote: Quote; confirmed: boolean } | undefined>;
  /**
   * Confirms the draft of `quote` with its ledger transaction (its status moved forward to the
   * transaction's), then runs `hook` in the same transaction with the quote as stored; an already
   * confirmed quote is answered as it is (and `hook` still runs); a draft deleted meanwhile is
   * stored again, confirmed, from `quote`.
   */
  confirm(
    quote: Quote,
    tx: { transactionId: string; status: QuoteStatus; failureReason: string; at: Date },
    hook?: (trx: unknown, q: Quote) => Promise<void>,
  ): Promise<Quote>;
  /** A draft (not yet confirmed) quote by id; undefined for a confirmed or unknown one. */
  getDraft(platformId: string, id: string): Promise<Quote | undefined>;
  /** Forgets a draft the ledger refused (no transaction exists for it); a confirmed quote stays. */
  deleteDraft(platformId: string, id: string): Promise<void>;
  /** Drafts stored at or before `before`, oldest first (the draft worker finishes them). */
  draftsDue(before: Date, limit: number): Promise<Quote[]>;
  get(platformId: string, id: string): Promise<Quote | undefined>;
  /**
   * Atomically claims a PENDING quote for execution: sets executionStartedAt (and the claimant)
   * when it is unset, older than `staleBefore`, or held by the same `claimant` (a retry of the
   * request that took it). Undefined when the quote is not claimable.
   */
  claimExecution(platformId: string, id: string, now: Date, staleBefore: Date, claimant?: string): Promise<Quote | undefined>;
  /** Clears a claim whose ledger call failed. */
  releaseExecution(platformId: string, id: string): Promise<void>;
  markSignatureVerified(platformId: string, id: string): Promise<void>;
  /**
   * Moves the quote forward to `status` (never back: PENDING < PROCESSING < COMPLETED < FAILED|EXPIRED),
   * then runs `hook` in the same transaction with the quote as stored. `trx` continues an open transaction.
   */
  advance(platformId: string, id: string, change: { status: QuoteStatus; failureReason: string; at: Date }, hook?: (trx: unknown, q: Quote) => Promise<void>, trx?: unknown): Promise<Quote | undefined>;
  /**
   * A PENDING_AUTHORIZATION quote becomes PENDING (its challenge satisfied), with the funding
   * instructions it withheld until then; undefined when it is no longer PENDING_AUTHORIZATION.
   */
  markAuthorized(platformId: string, id: string, change: { paymentInstructions: PaymentInstruction[]; at: Date }): Promise<Quote | undefined>;
  /** PENDING (and PENDING_AUTHORIZATION) quotes past expiry with no execution in flight, oldest first. */
  dueForExpiry(now: Date, limit: number): Promise<{ platformId: string; id: string }[]>;
  /**
   * Consumer path, inside `trx`: the confirmed quote of a ledger transaction moves forward to
   * `change.status` (as `advance` does, in one statement); nothing when there is no such quote or
   * it is already there or past it.
   */
  followTransaction(trx: unknown, platformId: string, transactionId: string, change: { status: QuoteStatus; failureReason: string; at: Date }): Promise<void>;
  /** GET /quotes: `limit + 1` quotes newest first (keyset on created_at, id) and the total matching the filter. */
  list(filter: QuoteFilter, page: { limit: number; before?: { at: Date; id: string } }): Promise<{ rows: Quote[]; total: number }>;
}

export interface QuoteFilter {
  platformId: string;
  customerId?: string;
  status?: QuoteStatus;
  createdAfter?: Date;
  createdBefore?: Date;
}

/** Decisions §3 around one effect: claim, run, complete in the effect's transaction (via the hook), release on failure. */
export type Idempotent = <T>(
  opts: { platformId: string; key: string; request: unknown; status: number; encode: (v: T) => unknown; decode: (json: unknown) => T },
  effect: (complete: (trx: unknown, value: T) => Promise<void>) => Promise<T>,
) => Promise<{ value: T; replayed: boolean }>;
