import { createHash } from "node:crypto";
import {
  AppError,
  IDEMPOTENCY_KEY_TTL_MS,
  IDEMPOTENCY_LEASE_MS,
  appErrorFromConnect,
  canonicalJson,
  decodeKeysetCursor,
  errors,
  formatAmount,
  newId,
  pageSize,
  requestHash,
  sandboxSparkAddress,
  toPage,
  type Clock,
} from "@corridor/kit";
import { sandboxLightningInvoice } from "./lightning.js";
import { platformNowOf, type PlatformClock } from "./platform-clock.js";
import type {
  CreateQuoteTransactionInput,
  Idempotent,
  PaymentInstruction,
  Quote,
  QuoteFilter,
  QuoteLedgerPort,
  QuoteStatus,
  QuoteStore,
  QuoteTransactionState,
  ScaPort,
  WalletSignaturePort,
} from "./ports.js";
import { quoteFromJson, quoteToJson, rateDetailsToJson } from "./quote-json.js";
import { answeredLater, type PreparedQuote, type QuoteRequest } from "./quotes.js";

/** The operation name auth-sessions signs for an embedded-wallet execution. */
export const EXECUTE_QUOTE = "EXECUTE_QUOTE";
/** An execution claim older than this is taken over (its holder crashed; the ledger call is idempotent). */
const STALE_EXECUTION_MS = 60_000;

/**
 * The claimant of an execution started under an Idempotency-Key (the scoped key, hashed: the quote
 * row keeps no client key in clear); undefined without a key, whose requests can never be told
 * apart from another client's and so never resume an execution.
 */
export function executionClaimant(scopedKey: string): string | undefined {
  return scopedKey ? createHash("sha256").update(`execute\n${scopedKey}`).digest("hex") : undefined;
}
/**
 * A draft older than this is finished by the draft worker: its creating request is over by then
 * (the lease of its Idempotency-Key has run out, so a retry of it could take over too).
 */
export const DRAFT_GRACE_MS = IDEMPOTENCY_LEASE_MS;

/** The ledger's transaction for a quote, as CreateQuoteTransaction takes it (idempotent per quote id). */
export function quoteTransactionInput(q: Quote): CreateQuoteTransactionInput {
  return {
    platformId: q.platformId,
    quoteId: q.id,
    customerId: q.source.customerId,
    sourceAccountId: q.source.accountId,
    destination: {
      kind: q.destination.destinationType === "UMA_ADDRESS" ? "UMA_ADDRESS" : "EXTERNAL_ACCOUNT",
      accountId: q.destination.accountId,
      paymentRail: q.destination.paymentRail,
      umaAddress: q.destination.umaAddress,
    },
    sendingCurrency: q.sendingCurrency,
    totalSendingAmount: q.totalSendingAmount,
    receivingCurrency: q.receivingCurrency,
    totalReceivingAmount: q.totalReceivingAmount,
    feesIncluded: q.feesIncluded,
    exchangeRate: q.exchangeRate,
    rateDetails: rateDetailsToJson(q.rateDetails),
    description: q.description,
    counterpartyInformation: q.counterpartyInformation,
    expiresAt: q.expiresAt,
    agentId: q.agentId,
    lookupId: q.lookupId,
    awaitingAuthorization: q.status === "PENDING_AUTHORIZATION",
  };
}

/**
 * Whether the ledger decided against the call (a public refusal: 400, 404, ...), so no transaction
 * exists for it; a dependency failure or a lost answer says nothing about that.
 */
function isRefusal(err: unknown): boolean {
  const refusal = appErrorFromConnect(err);
  return !!refusal && refusal.outcome !== "UNAVAILABLE" && refusal.outcome !== "RATE_LIMITED";
}

export interface LifecycleDeps {
  clock: Clock;
  /**
   * The time a platform's quotes are created and expire by on read, execute and sandbox send
   * (sandbox platforms: their sandbox clock). Without it, the service clock.
   */
  platformClock?: PlatformClock;
  /** Quote lifetime (CORRIDOR_QUOTE_TTL_SECONDS). */
  ttlMs: number;
  prepare: (platformId: string, req: QuoteRequest) => Promise<PreparedQuote>;
  ledger: QuoteLedgerPort;
  signer: WalletSignaturePort;
  store: QuoteStore;
  idempotent: Idempotent;
  /**
   * auth-sessions' strong customer authentication (docs/sca.md): a customer's quote that needs it
   * waits in PENDING_AUTHORIZATION. Without it (unit harnesses without auth-sessions) no quote does.
   */
  sca?: ScaPort;
}

const codec = { encode: quoteToJson, decode: quoteFromJson };

/**
 * The status a ledger transaction's change of status moves its quote to, if it can move one.
 * PENDING (and PENDING_AUTHORIZATION) is where a quote's transaction starts: it moves no quote (the
 * ledger's PENDING after authorization follows authorize, which moves the quote itself). The
 * consumer skips those before its inbox: they cost quotes-fx no transaction.
 */
export function quoteStatusMovedTo(transactionStatus: string): QuoteStatus | undefined {
  const status = quoteStatusOf(transactionStatus);
  return status === "PENDING" || status === "PENDING_AUTHORIZATION" ? undefined : status;
}

/** The ledger's transaction status as a quote status (a refunded or rejected payment is FAILED). */
export function quoteStatusOf(transactionStatus: string): QuoteStatus | undefined {
  switch (transactionStatus) {
    case "PENDING_AUTHORIZATION":
    case "PENDING":
    case "PROCESSING":
    case "COMPLETED":
    case "FAILED":
    case "EXPIRED":
      return transactionStatus;
    case "REJECTED":
    case "REFUNDED":
      return "FAILED";
    default:
      return undefined;
  }
}

/** The body auth-sessions hashes into payloadToSign: what the signer agrees to pay, to whom. */
export function signingBody(q: Pick<Quote, "id" | "platformId" | "source" | "destination" | "sendingCurrency" | "totalSendingAmount" | "receivingCurrency" | "totalReceivingAmount">): string {
  return canonicalJson({
    quoteId: q.id,
    accountId: q.source.accountId,
    sendingCurrency: q.sendingCurrency,
    totalSendingAmount: q.totalSendingAmount,
    receivingCurrency: q.receivingCurrency,
    totalReceivingAmount: q.totalReceivingAmount,
    destination: q.destination.destinationType === "UMA_ADDRESS" ? q.destination.umaAddress : q.destination.accountId,
  });
}

/**
 * Where to pay a REALTIME_FUNDING quote. There is no funding provider behind these: sandbox
 * platforms simulate the payment with POST /sandbox/send; the reference ties a payment to the quote.
 */
export function fundingInstructions(quoteId: string, currency: string, amount: bigint, opts: { now: Date; expiresAt: Date }): PaymentInstruction[] {
  const digest = createHash("sha256").update(quoteId).digest("hex");
  const reference = `QT-${quoteId.slice(-12).toUpperCase()}`;
  const base = { paymentRails: [], accountNumber: "", routingNumber: "", bankName: "", reference, assetType: "", address: "", invoice: "", amount, currency };
  if (currency === "BTC") {
    return [
      {
        ...base,
        accountType: "SPARK_WALLET",
        assetType: "BTC",
        address: sandboxSparkAddress(quoteId),
        invoice: sandboxLightningInvoice({ seed: quoteId, amountSats: amount, memo: reference, expiresAt: opts.expiresAt, now: opts.now }),
        instructionsNotes: `Send exactly ${amount} satoshis to the address, or pay the invoice; reference ${reference}.`,
      },
    ];
  }
  return [
    {
      ...base,
      accountType: "USD_ACCOUNT",
      paymentRails: ["ACH", "WIRE"],
      accountNumber: String(BigInt(`0x${digest.slice(0, 12)}`) % 10_000_000_000n).padStart(10, "0"),
      routingNumber: "021000021",
      bankName: "Corridor Funding Bank",
      instructionsNotes: `Pay exactly ${amount} minor units of ${currency} with reference ${reference} before the quote expires.`,
    },
  ];
}

/**
 * The quote lifecycle: create (with its PENDING ledger transaction), read, expire, execute and
 * real-time funding. Remote calls (ledger, auth-sessions) never run inside a database transaction:
 * each step reads, calls, then commits its change (with the Idempotency-Key's answer) in one short transaction.
 */
export function createQuoteLifecycle(deps: LifecycleDeps) {
  const { clock, store, ledger } = deps;

  /** The time a platform's quotes are created and expire by. Another service: never inside a transaction. */
  const platformNow = platformNowOf(clock, deps.platformClock);

  /** The quote; with `agentId`, only a quote that agent created (another's is 404, as if it did not exist). */
  async function load(platformId: string, id: string, agentId = ""): Promise<Quote> {
    const q = (await store.get(platformId, id)) ?? (await finishDraftOnRead(platformId, id));
    if (!q || (agentId && q.agentId !== agentId)) throw new AppError("NOT_FOUND", "QUOTE_NOT_FOUND", `Quote ${id} not found`, { id });
    return q;
  }

  /**
   * Expires a PENDING quote whose time is up on its platform's clock (the worker does the same in
   * bulk, on the service clock: `at`); answers the quote as it then is.
   */
  async function expireIfDue(q: Quote, at?: Date): Promise<Quote> {
    if (q.status !== "PENDING" && q.status !== "PENDING_AUTHORIZATION") return q;
    // Read before any transaction: the sandbox clock is another service.
    const now = at ?? (await platformNow(q.platformId));
    if (now < q.expiresAt) return q;
    // Claims are stamped with the service clock, so their age is too.
    if (q.executionStartedAt && clock.now().getTime() - q.executionStartedAt.getTime() < STALE_EXECUTION_MS) return q; // the ledger decides
    const tx = await ledger.expireQuoteTransaction(q.platformId, q.transactionId);
    const status = quoteStatusOf(tx.status) ?? "EXPIRED";
    return (await store.advance(q.platformId, q.id, { status, failureReason: tx.failureReason || (status === "EXPIRED" ? "QUOTE_EXPIRED" : ""), at: clock.now() })) ?? q;
  }

  /**
   * 409 unless the quote can be executed now: PENDING and not being executed, or being executed
   * under `claimant` (a retry of the request that started it, resuming: the ledger's execute is
   * idempotent, so the retry finishes what the first attempt left half done).
   */
  function refuseUnlessPending(q: Quote, claimant?: string): void {
    if (q.status === "EXPIRED") throw errors.conflict("QUOTE_EXPIRED", `Quote ${q.id} expired at ${q.expiresAt.toISOString()}`, { id: q.id });
    if (q.status === "PENDING_AUTHORIZATION") {
      throw errors.conflict("QUOTE_PENDING_AUTHORIZATION", `Quote ${q.id} waits for strong customer authentication: POST /quotes/${q.id}/authorize first`, { id: q.id, status: q.status });
    }
    const resumable = claimant !== undefined && q.executionClaimant === claimant;
    if (q.status !== "PENDING" || (q.executionStartedAt && !resumable)) {
      throw errors.conflict("INVALID_STATE_TRANSITION", `Quote ${q.id} was already executed`, { id: q.id, status: q.status });
    }
  }

  /** The quote was executed under `claimant` (the request's key) and has moved past PENDING since. */
  function executedUnder(q: Quote, claimant: string | undefined): boolean {
    if (claimant === undefined || q.executionClaimant !== claimant || !q.executionStartedAt) return false;
    return q.status !== "PENDING" && q.status !== "PENDING_AUTHORIZATION" && q.status !== "EXPIRED";
  }

  /**
   * Claims the quote (for `claimant`, the request's key), runs the ledger call (idempotent per
   * transaction), and commits the outcome (with `complete`).
   */
  async function runWithLedger(
    q: Quote,
    claimant: string | undefined,
    call: () => Promise<QuoteTransactionState & { alreadyExecuted: boolean }>,
    complete: (trx: unknown, value: Quote) => Promise<void>,
  ): Promise<Quote> {
    const now = clock.now();
    const claimed = await store.claimExecution(q.platformId, q.id, now, new Date(now.getTime() - STALE_EXECUTION_MS), claimant);
    if (!claimed) {
      const current = (await store.get(q.platformId, q.id)) ?? q;
      // The ledger's events moved the quote on between this request's read and its claim (the
      // claim takes a PENDING quote only): when that is this key's own execution (its first
      // attempt executed, then its answer was lost), the quote as it is now is the answer.
      if (executedUnder(current, claimant)) return (await store.advance(q.platformId, q.id, { status: current.status, failureReason: current.failureReason, at: clock.now() }, complete)) ?? current;
      refuseUnlessPending(current, claimant);
      throw errors.conflict("INVALID_STATE_TRANSITION", `Quote ${q.id} is being executed`, { id: q.id });
    }
    let tx: QuoteTransactionState & { alreadyExecuted: boolean };
    try {
      tx = await call();
    } catch (err) {
      // Nothing moved (the ledger refused, e.g. 400 INSUFFICIENT_BALANCE): the quote can be executed
      // again. Anything else (the ledger unavailable, its answer lost) says nothing about whether it
      // executed: a request with a key keeps its claim, so that key's retry resumes (the ledger
      // answers what it did) and the quote's later states, which the ledger's events bring, are
      // still its execution; another request waits for the claim to go stale (STALE_EXECUTION_MS),
      // as after a crash. A request without a key has no retry to keep it for: released.
      if (isRefusal(err) || claimant === undefined) await store.releaseExecution(q.platformId, q.id);
      throw err;
    }
    const status = quoteStatusOf(tx.status) ?? "PROCESSING";
    const after = await store.advance(q.platformId, q.id, { status: status === "PENDING" ? "PROCESSING" : status, failureReason: tx.failureReason, at: clock.now() }, complete);
    return after!;
  }

  async function execute(q: Quote, claimant: string | undefined, complete: (trx: unknown, value: Quote) => Promise<void>): Promise<Quote> {
    return runWithLedger(q, claimant, () => ledger.executeQuoteTransaction(q.platformId, q.transactionId), complete);
  }

  /**
   * Asks the ledger for a draft's transaction (idempotent per quote id) and confirms the quote with
   * it, running `hook` in that transaction. Whoever holds a ledger transaction makes sure its quote
   * exists: a draft deleted meanwhile (another caller's ledger call was refused a moment earlier)
   * is stored again from `q`.
   */
  async function confirmWithLedger(q: Quote, hook?: (trx: unknown, value: Quote) => Promise<void>): Promise<Quote> {
    const tx = await ledger.createQuoteTransaction(quoteTransactionInput(q));
    const ledgerStatus = quoteStatusOf(tx.status) ?? "PENDING";
    // A quote that waits for SCA keeps waiting: its transaction is PENDING_AUTHORIZATION too (or,
    // made by an earlier version before the ledger knew the status, PENDING).
    const status = ledgerStatus === "PENDING" && q.status === "PENDING_AUTHORIZATION" ? "PENDING_AUTHORIZATION" : ledgerStatus;
    return store.confirm(q, { transactionId: tx.id, status, failureReason: tx.failureReason, at: clock.now() }, hook);
  }

  /**
   * A draft read by its id. Its id is answered only once it is confirmed, so whoever asks for it
   * saw its ledger transaction (GET /transactions, a webhook) after the request that made it was
   * interrupted: it is finished now, rather than answering 404 for the quote of an existing
   * transaction. Undefined (404) when the ledger refuses it: no transaction exists.
   */
  async function finishDraftOnRead(platformId: string, id: string): Promise<Quote | undefined> {
    const draft = await store.getDraft(platformId, id);
    if (!draft) return undefined;
    try {
      return await confirmWithLedger(draft);
    } catch (err) {
      if (isRefusal(err)) return undefined;
      throw err;
    }
  }

  /**
   * The rest of POST /quotes from a stored quote: a draft gets its ledger transaction and is
   * confirmed together with the key's answer; an immediatelyExecute quote is then executed (the
   * stored answer is the executed quote; if the ledger refuses, for example 400
   * INSUFFICIENT_BALANCE, the error is the answer and the quote stays PENDING until it expires).
   */
  async function finishCreate(q: Quote, confirmed: boolean, executeNow: boolean, claimant: string | undefined, complete: (trx: unknown, value: Quote) => Promise<void>): Promise<Quote> {
    let quote = q;
    // A quote that waits for SCA executes when it is authorized (executeOnAuthorization), not now.
    const immediatelyExecute = executeNow && q.status !== "PENDING_AUTHORIZATION";
    if (!confirmed) {
      try {
        quote = await confirmWithLedger(q, immediatelyExecute ? undefined : complete);
      } catch (err) {
        // Refused: no transaction exists for this quote id, so the draft goes (a retry prices afresh).
        if (isRefusal(err)) await store.deleteDraft(q.platformId, q.id).catch(() => undefined);
        throw err;
      }
      if (!immediatelyExecute) return quote;
    } else if (!immediatelyExecute || quote.status !== "PENDING") {
      // Finished meanwhile (by the draft worker): this request's answer is the quote as it is.
      return (await store.advance(quote.platformId, quote.id, { status: quote.status, failureReason: quote.failureReason, at: clock.now() }, complete)) ?? quote;
    }
    return execute(quote, claimant, complete);
  }

  return {
    /**
     * POST /quotes. The quote is stored as a draft first, then the ledger creates its transaction
     * (idempotent per quote id), then one transaction confirms the quote and stores the
     * Idempotency-Key's answer. A process that dies in between leaves a draft, never a ledger
     * transaction without its quote: the retry with the same key (after the key's lease) finds the
     * draft by its creation ref and finishes it with the same quote id and prices, so it answers the
     * same quote; without a retry the draft worker finishes it (finishDrafts).
     */
    async create(platformId: string, req: QuoteRequest, idempotencyKey: string): Promise<{ quote: Quote; replayed: boolean }> {
      const key = agentScopedKey(req.agentId, idempotencyKey);
      const request = { op: "CREATE_QUOTE", ...req };
      const r = await deps.idempotent({ platformId, key, request, status: 200, ...codec }, async (complete) => {
        const creationRef = key ? createHash("sha256").update(`${key}\n${requestHash(request)}`).digest("hex") : "";
        const earlier = creationRef ? await store.findCreated(platformId, creationRef, new Date(clock.now().getTime() - IDEMPOTENCY_KEY_TTL_MS)) : undefined;
        if (earlier) return finishCreate(earlier.quote, earlier.confirmed, req.immediatelyExecute, executionClaimant(key), complete);
        // The quote lives on the clock it expires by (a sandbox platform's clock may have been
        // advanced): asked for while the request is prepared, not after (a sandbox platform's
        // clock is an RPC). A failed preparation leaves its answer unread.
        const clockRead = answeredLater(platformNow(platformId));
        const p = await deps.prepare(platformId, req);
        const now = await clockRead;
        const id = newId("Quote");
        const realtime = req.source.sourceType === "REALTIME_FUNDING";
        const destination = {
          destinationType: req.destination.destinationType as "ACCOUNT" | "UMA_ADDRESS",
          accountId: req.destination.destinationType === "ACCOUNT" ? req.destination.accountId : "",
          paymentRail: req.destination.paymentRail,
          umaAddress: p.lookup?.receiverUmaAddress ?? "",
          currency: p.receiving.code,
        };
        const draft: Quote = {
          id,
          platformId,
          status: "PENDING",
          createdAt: now,
          updatedAt: now,
          expiresAt: new Date(now.getTime() + deps.ttlMs),
          source: { sourceType: realtime ? "REALTIME_FUNDING" : "ACCOUNT", accountId: realtime ? "" : req.source.accountId, customerId: p.customerId, currency: p.sending.code },
          destination,
          sendingCurrency: p.sending.code,
          receivingCurrency: p.receiving.code,
          totalSendingAmount: p.pricing.totalSendingAmount,
          totalReceivingAmount: p.pricing.totalReceivingAmount,
          exchangeRate: p.pricing.exchangeRate.toString(),
          feesIncluded: p.pricing.feesIncluded,
          rateDetails: {
            counterpartyMultiplier: p.pricing.rateDetails.counterpartyMultiplier.toString(),
            counterpartyFixedFee: p.pricing.rateDetails.counterpartyFixedFee,
            serviceApiMultiplier: p.pricing.rateDetails.serviceApiMultiplier.toString(),
            serviceApiFixedFee: p.pricing.rateDetails.serviceApiFixedFee,
            serviceApiVariableFeeRate: p.pricing.rateDetails.serviceApiVariableFeeRate.toString(),
            serviceApiVariableFeeAmount: p.pricing.rateDetails.serviceApiVariableFeeAmount,
          },
          lockedCurrencySide: p.side,
          lockedCurrencyAmount: req.lockedCurrencyAmount,
          lookupId: req.lookupId,
          description: req.description,
          purposeOfPayment: req.purposeOfPayment,
          // As prepared: the request's, completed from the destination account's beneficiary.
          counterpartyInformation: p.request.counterpartyInformation,
          senderCustomerInfo: req.senderCustomerInfo,
          transactionId: "",
          payloadToSign: "",
          signatureRequestId: "",
          signatureVerified: false,
          paymentInstructions: realtime ? fundingInstructions(id, p.sending.code, p.pricing.totalSendingAmount, { now, expiresAt: new Date(now.getTime() + deps.ttlMs) }) : [],
          failureReason: "",
          agentId: req.agentId,
        };
        // Strong customer authentication (docs/sca.md): a customer's payment to a destination they
        // have not trusted waits for it. Embedded-wallet sources are signed by the customer's own
        // wallet credential instead. Asked before anything is stored: a refusal leaves nothing behind.
        if (deps.sca && p.customerId && !p.needsSignature) {
          const challenge = await deps.sca.begin({ platformId, customerId: p.customerId, quoteId: id, externalAccountId: destination.destinationType === "ACCOUNT" ? destination.accountId : "" });
          if (challenge) {
            draft.status = "PENDING_AUTHORIZATION";
            draft.scaChallenge = challenge;
            draft.executeOnAuthorization = req.immediatelyExecute;
            // Grid: a realtime-funding quote gets its paymentInstructions once authorized.
            draft.paymentInstructions = [];
          }
        }
        // The challenge first: a failure here leaves nothing behind at the ledger. Its lifetime is
        // auth-sessions' fixed 5 minutes, never shorter than the quote's (TTL ≤ 300 s).
        if (p.needsSignature) {
          const c = await deps.signer.createChallenge(platformId, draft.source.accountId, signingBody(draft));
          draft.payloadToSign = c.payloadToSign;
          draft.signatureRequestId = c.requestId;
        }
        await store.insertDraft(draft, { creationRef, at: clock.now() });
        return finishCreate(draft, false, req.immediatelyExecute, executionClaimant(key), complete);
      });
      return { quote: r.value, replayed: r.replayed };
    },

    /**
     * Worker step: finishes drafts whose creating request is over (older than DRAFT_GRACE_MS): the
     * ledger creates (or answers) the transaction and the quote is confirmed, so a transaction
     * never stays without its quote. A draft the ledger refuses had no transaction and is
     * forgotten; one it cannot answer now (down) is tried again on the next pass.
     */
    async finishDrafts(limit = 100): Promise<{ finished: number; dropped: number; failed: number }> {
      const due = await store.draftsDue(new Date(clock.now().getTime() - DRAFT_GRACE_MS), limit);
      let finished = 0;
      let dropped = 0;
      let failed = 0;
      for (const q of due) {
        try {
          await confirmWithLedger(q);
          finished++;
        } catch (err) {
          if (!isRefusal(err)) {
            failed++;
            continue;
          }
          await store.deleteDraft(q.platformId, q.id).then(
            () => dropped++,
            () => failed++,
          );
        }
      }
      return { finished, dropped, failed };
    },

    /** With `agentId` (agent calls), only a quote that agent created is found. */
    async get(platformId: string, id: string, agentId = ""): Promise<Quote> {
      return expireIfDue(await load(platformId, id, agentId));
    },

    /**
     * GET /quotes: newest first. A listed PENDING quote past its expiry is expired on the way, as
     * GET /quotes/{id} does (the filter saw it as stored; the expiry worker closes that gap).
     */
    async list(filter: QuoteFilter, page: { limit?: number; cursor?: string }) {
      const limit = pageSize(page.limit);
      const pos = decodeKeysetCursor(page.cursor, "timestamp");
      const { rows, total } = await store.list(filter, { limit, before: pos && { at: pos.k, id: pos.id } });
      const current = await Promise.all(rows.map((q) => expireIfDue(q)));
      return toPage(current, limit, (q) => ({ k: q.createdAt.toISOString(), id: q.id }), total);
    },

    /** With `agentId` (agent calls), only a quote that agent created is found. */
    async execute(platformId: string, id: string, opts: { idempotencyKey: string; requestId: string; signature: string; agentId?: string }): Promise<{ quote: Quote; replayed: boolean }> {
      const agentId = opts.agentId ?? "";
      const r = await deps.idempotent({ platformId, key: agentScopedKey(agentId, opts.idempotencyKey), request: { op: EXECUTE_QUOTE, quoteId: id }, status: 200, ...codec }, async (complete) => {
        const claimant = executionClaimant(agentScopedKey(agentId, opts.idempotencyKey));
        const q = await expireIfDue(await load(platformId, id, agentId));
        if (executedUnder(q, claimant)) {
          // This key's first attempt executed the quote but its answer was lost (it failed after
          // the ledger executed, e.g. its database was unavailable) and the ledger's events moved
          // the quote on since: the retry answers the quote as it is now and stores that answer.
          return (await store.advance(platformId, id, { status: q.status, failureReason: q.failureReason, at: clock.now() }, complete)) ?? q;
        }
        refuseUnlessPending(q, claimant);
        if (q.source.sourceType === "REALTIME_FUNDING") {
          throw errors.badRequest("QUOTE_NOT_EXECUTABLE", "A REALTIME_FUNDING quote proceeds when its paymentInstructions are paid (in the sandbox, by a simulated payment)", { id });
        }
        if (q.payloadToSign && !q.signatureVerified) {
          // auth-sessions answers 401 (missing, invalid, used or expired signature); the requestId is
          // single use, so a verified signature is remembered for a retry after a ledger failure.
          await deps.signer.verify(platformId, q.source.accountId, { requestId: opts.requestId || q.signatureRequestId, signature: opts.signature }, signingBody(q));
          await store.markSignatureVerified(platformId, id);
        }
        return execute(q, claimant, complete);
      });
      return { quote: r.value, replayed: r.replayed };
    },

    /**
     * POST /quotes/{id}/authorize: satisfies the quote's SCA challenge (auth-sessions checks the
     * code), then the quote is PENDING with its funding instructions, or executed when it was
     * created with immediatelyExecute (a ledger refusal, e.g. 400 INSUFFICIENT_BALANCE, is the
     * answer and the quote stays PENDING, authorized). 409 SCA_NOT_PENDING when the quote waits
     * for nothing; a retry after a lost answer finds the challenge authorized and goes on.
     */
    async authorize(platformId: string, id: string, code: string): Promise<Quote> {
      const q = await expireIfDue(await load(platformId, id));
      if (q.status === "EXPIRED") throw errors.conflict("QUOTE_EXPIRED", `Quote ${q.id} expired at ${q.expiresAt.toISOString()}`, { id: q.id });
      if (q.status !== "PENDING_AUTHORIZATION" || !deps.sca) {
        throw errors.conflict("SCA_NOT_PENDING", `Quote ${id} has no strong-customer-authentication challenge to satisfy`, { id, status: q.status });
      }
      await deps.sca.authorize(platformId, id, code);
      // The ledger's transaction moves first (PENDING_AUTHORIZATION -> PENDING, idempotent), then
      // the quote: a crash in between leaves the quote waiting, and the retry (the challenge answers
      // authorized again) finds the transaction PENDING and moves the quote. A transaction that
      // ended while the quote waited (expired or cancelled meanwhile) ends the quote the same way.
      const tx = await ledger.authorizeQuoteTransaction(platformId, q.transactionId);
      const txStatus = quoteStatusOf(tx.status);
      if (txStatus && txStatus !== "PENDING" && txStatus !== "PENDING_AUTHORIZATION") {
        const ended = (await store.advance(platformId, id, { status: txStatus, failureReason: tx.failureReason || (txStatus === "EXPIRED" ? "QUOTE_EXPIRED" : ""), at: clock.now() })) ?? q;
        if (ended.status === "EXPIRED") throw errors.conflict("QUOTE_EXPIRED", `Quote ${q.id} expired at ${q.expiresAt.toISOString()}`, { id: q.id });
        throw errors.conflict("SCA_NOT_PENDING", `Quote ${id} has no strong-customer-authentication challenge to satisfy`, { id, status: ended.status });
      }
      const now = await platformNow(platformId);
      const instructions =
        q.source.sourceType === "REALTIME_FUNDING" ? fundingInstructions(q.id, q.sendingCurrency, q.totalSendingAmount, { now, expiresAt: q.expiresAt }) : q.paymentInstructions;
      const authorized = await store.markAuthorized(platformId, id, { paymentInstructions: instructions, at: clock.now() });
      // Authorized meanwhile by a concurrent call (or expired): the quote as it is now.
      if (!authorized) return expireIfDue(await load(platformId, id));
      if (!authorized.executeOnAuthorization || authorized.source.sourceType === "REALTIME_FUNDING") return authorized;
      // No Idempotency-Key here (the SCA code is the request's proof): no claimant to resume under.
      return execute(authorized, undefined, async () => {});
    },

    /** POST /quotes/{id}/authorize/resend: 409 SCA_NOT_PENDING unless the quote waits for SCA. */
    async resendAuthorization(platformId: string, id: string): Promise<void> {
      const q = await expireIfDue(await load(platformId, id));
      if (q.status === "EXPIRED") throw errors.conflict("QUOTE_EXPIRED", `Quote ${q.id} expired at ${q.expiresAt.toISOString()}`, { id: q.id });
      if (q.status !== "PENDING_AUTHORIZATION" || !deps.sca) {
        throw errors.conflict("SCA_NOT_PENDING", `Quote ${id} has no strong-customer-authentication challenge to satisfy`, { id, status: q.status });
      }
      await deps.sca.resend(platformId, id);
    },

    /**
     * POST /sandbox/send. Answers the quote and the transaction as the ledger answered the payment;
     * both are the stored first answer on a replay (decisions §3), not the state at the replay.
     */
    async sendSandboxFunding(platformId: string, id: string, opts: { currencyCode: string; amount: bigint; idempotencyKey: string }): Promise<{ quote: Quote; transaction: unknown; replayed: boolean }> {
      const r = await deps.idempotent<{ quote: Quote; transaction: unknown }>(
        {
          platformId,
          key: opts.idempotencyKey,
          request: { op: "SANDBOX_SEND", quoteId: id, currencyCode: opts.currencyCode, amount: opts.amount },
          status: 200,
          encode: (v) => ({ quote: quoteToJson(v.quote), transaction: v.transaction }),
          decode: (json) => {
            const j = json as { quote: Parameters<typeof quoteFromJson>[0]; transaction: unknown };
            return { quote: quoteFromJson(j.quote), transaction: j.transaction };
          },
        },
        async (complete) => {
          const q = await expireIfDue(await load(platformId, id));
          if (q.source.sourceType !== "REALTIME_FUNDING") throw errors.invalidInput([{ field: "quoteId", reason: "is not a REALTIME_FUNDING quote" }]);
          const claimant = executionClaimant(opts.idempotencyKey);
          refuseUnlessPending(q, claimant);
          if (opts.currencyCode !== q.sendingCurrency) {
            throw new AppError("INVALID", "CURRENCY_MISMATCH", `The quote is paid in ${q.sendingCurrency}, not ${opts.currencyCode}`, { expected: q.sendingCurrency, currencyCode: opts.currencyCode });
          }
          const amount = opts.amount > 0n ? opts.amount : q.totalSendingAmount;
          if (amount !== q.totalSendingAmount) {
            throw new AppError("INVALID", "AMOUNT_MISMATCH", `The quote needs exactly ${formatAmount(q.totalSendingAmount, q.sendingCurrency)}`, { expected: q.totalSendingAmount.toString(), amount: amount.toString() });
          }
          let transaction: unknown = null;
          const quote = await runWithLedger(
            q,
            claimant,
            async () => {
              const funded = await ledger.recordQuoteFunding(platformId, q.transactionId, q.sendingCurrency, amount);
              transaction = funded.snapshot;
              return funded;
            },
            (trx, after) => complete(trx, { quote: after, transaction }),
          );
          return { quote, transaction };
        },
      );
      return { quote: r.value.quote, transaction: r.value.transaction, replayed: r.replayed };
    },

    /** Worker step: expires up to `limit` due quotes; one that fails (ledger down) is retried next time. */
    async expireDue(limit = 100): Promise<{ expired: number; failed: number }> {
      const now = clock.now();
      const due = await store.dueForExpiry(now, limit);
      let expired = 0;
      let failed = 0;
      for (const d of due) {
        try {
          const q = await store.get(d.platformId, d.id);
          if (q && (await expireIfDue(q, now)).status !== "PENDING") expired++;
        } catch {
          failed++;
        }
      }
      return { expired, failed };
    },

    /** Consumer step: a ledger transaction of a quote changed; the quote follows it (forward only). */
    async onTransactionChanged(trx: unknown, e: { platformId: string; transactionId: string; status: string; failureReason: string; at: Date }): Promise<void> {
      const status = quoteStatusMovedTo(e.status);
      if (!status) return;
      await store.followTransaction(trx, e.platformId, e.transactionId, { status, failureReason: e.failureReason, at: e.at });
    },
  };
}

/**
 * An agent's Idempotency-Key is scoped to (platform, agent, key) (docs/agents.md): two agents of one
 * platform may use the same key without meeting. Empty stays empty (no idempotency).
 */
export function agentScopedKey(agentId: string, key: string): string {
  return agentId && key ? `${agentId}/${key}` : key;
}

export type QuoteLifecycle = ReturnType<typeof createQuoteLifecycle>;
