export { expectRefusal as expectPublicError, fieldsOf } from "@corridor/kit/testing";
import { ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AppError, ManualClock, appErrorInterceptor, errors, newId, type BuiltService, type DatabaseHandle } from "@corridor/kit";
import { WalletAuthService } from "@corridor/proto/corridor/auth_sessions/v1/wallet_auth_service_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { quoteLedgerPort } from "../src/clients/quote-ledger.js";
import { walletSignaturePort } from "../src/clients/wallet-auth.js";
import { QuotesFxService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import { expect } from "vitest";
import type { ExternalAccountView, InternalAccountView, LedgerPort, PlatformFacts, ScaPort } from "../src/domain/ports.js";
import type { RateSource } from "../src/domain/rates.js";
import { buildQuotesFx, service } from "../src/server.js";
import { openServiceTestDatabase } from "@corridor/kit/testing";

/** A quote transaction as the fake ledger keeps it. */
export interface FakeQuoteTransaction {
  id: string;
  platformId: string;
  quoteId: string;
  status: string;
  failureReason: string;
  sourceAccountId: string;
  sendingCurrency: string;
  totalSendingAmount: bigint;
  executions: number;
  fundings: { currencyCode: string; amount: bigint }[];
  /** CreateQuoteTransactionRequest.agent_id as received ("" for platform quotes). */
  agentId: string;
}

/** What the fake ledger does on execute/fund: the status it answers, or an error to throw. */
export interface FakeLedgerBehaviour {
  executeStatus: string;
  executeError?: AppError;
  createError?: AppError;
  /**
   * When set, the next CreateQuoteTransaction commits its transaction and then fails with this
   * error instead of answering: the answer was lost (quotes-fx died, the connection reset).
   */
  createLoseAnswer?: Error;
  /**
   * When set, the next ExecuteQuoteTransaction executes and then never answers: the caller is
   * left where a process killed after the ledger's commit leaves it (its quote claimed, its
   * Idempotency-Key in flight until the lease runs out).
   */
  executeNeverAnswers?: boolean;
  /** When set, the next ExecuteQuoteTransaction executes and then fails with this (its answer lost). */
  executeLoseAnswer?: Error;
}

/** A challenge the fake auth-sessions issued. */
export interface FakeChallenge {
  platformId: string;
  accountId: string;
  operation: string;
  body: string;
  requestId: string;
  used: boolean;
}

export const GOOD_SIGNATURE = "sandbox-valid-signature";

export interface Harness {
  clock: ManualClock;
  db: DatabaseHandle;
  built: BuiltService;
  transactions: Map<string, FakeQuoteTransaction>;
  behaviour: FakeLedgerBehaviour;
  challenges: Map<string, FakeChallenge>;
  client: Client<typeof QuotesFxService>;
  platforms: Map<string, PlatformFacts>;
  internal: Map<string, InternalAccountView & { platformId: string }>;
  external: Map<string, ExternalAccountView & { platformId: string }>;
  /** The operator's rail bindings as the fake ledger knows them: "<platformId> <currency>" has a connector. */
  boundRails: Set<string>;
  /** The fake sandbox clock: each platform's offset (ms) ahead of the service clock, and how often it was read. */
  sandbox: { offsetMs: Map<string, number>; reads: number };
  close(): Promise<void>;
}


export const usdOnly = (over: Partial<PlatformFacts> = {}): PlatformFacts => ({
  environment: "SANDBOX",
  umaDomain: "acme.sandbox.uma.money",
  supportedCurrencies: [
    { currencyCode: "USD", minAmount: 1n, maxAmount: 100_000_000_000n, requiredCounterpartyFields: [] },
    { currencyCode: "EUR", minAmount: 100n, maxAmount: 1_000_000n, requiredCounterpartyFields: [{ name: "FULL_NAME", mandatory: true }] },
  ],
  ...over,
});

/** The service over a real database; auth-sessions and the ledger are maps. */
export async function startHarness(opts: { env?: NodeJS.ProcessEnv; productionRates?: RateSource; sca?: ScaPort } = {}): Promise<Harness> {
  const { db, drop } = await openServiceTestDatabase(service);
  const clock = new ManualClock("2025-10-13T12:00:00.000Z");
  const platforms = new Map<string, PlatformFacts>();
  const internal = new Map<string, InternalAccountView & { platformId: string }>();
  const external = new Map<string, ExternalAccountView & { platformId: string }>();
  const boundRails = new Set<string>();
  const ledger: LedgerPort = {
    // As the ledger answers: a payout no connector carries is refused with its currency and rail.
    async checkPaymentRail(platformId, currency, d) {
      if (!boundRails.has(`${platformId} ${currency}`)) {
        throw errors.badRequest("PAYMENT_RAIL_NOT_AVAILABLE", `No connector is configured for ${currency} payments`, { currency, paymentRail: d.paymentRail || "SEPA" });
      }
    },
    async internalAccount(platformId, id) {
      const a = internal.get(id);
      return a && a.platformId === platformId ? a : undefined;
    },
    async externalAccount(platformId, id) {
      const a = external.get(id);
      return a && a.platformId === platformId ? a : undefined;
    },
  };
  const transactions = new Map<string, FakeQuoteTransaction>();
  const lookupTransactions = new Map<string, string>();
  const behaviour: FakeLedgerBehaviour = { executeStatus: "PROCESSING" };
  const challenges = new Map<string, FakeChallenge>();
  const txMsg = (t: FakeQuoteTransaction) => ({ id: t.id, platformId: t.platformId, status: t.status, failureReason: t.failureReason, quoteId: t.quoteId, agentId: t.agentId });
  const txOf = (platformId: string, id: string) => {
    const t = transactions.get(id);
    if (!t || t.platformId !== platformId) throw errors.notFound("Transaction", id);
    return t;
  };
  // The ledger's quote RPCs, behaving as their proto comments say (idempotent per quote / transaction).
  const ledgerTransport = createRouterTransport(
    (router) =>
      router.service(LedgerService, {
        async createQuoteTransaction(req) {
          if (behaviour.createError) throw behaviour.createError;
          const existing = [...transactions.values()].find((t) => t.quoteId === req.quoteId);
          if (existing) return { transaction: txMsg(existing) };
          const t: FakeQuoteTransaction = {
            id: newId("Transaction"),
            platformId: req.platformId,
            quoteId: req.quoteId,
            status: req.awaitingAuthorization ? "PENDING_AUTHORIZATION" : "PENDING",
            failureReason: "",
            sourceAccountId: req.source?.accountId ?? "",
            sendingCurrency: req.sendingCurrency,
            totalSendingAmount: req.totalSendingAmount,
            executions: 0,
            fundings: [],
            agentId: req.agentId,
          };
          transactions.set(t.id, t);
          const lost = behaviour.createLoseAnswer;
          behaviour.createLoseAnswer = undefined;
          if (lost) throw lost;
          return { transaction: { ...txMsg(t), expiresAt: req.expiresAt ?? timestampFromDate(clock.now()) } };
        },
        // A customer's lookup: its CREATED transaction, one per lookup (adoption is the ledger's, tested there).
        async createLookupTransaction(req) {
          const id = (lookupTransactions.get(req.lookupId) ?? lookupTransactions.set(req.lookupId, newId("Transaction")).get(req.lookupId))!;
          return { transaction: { id, platformId: req.platformId, status: "CREATED" } };
        },
        async authorizeQuoteTransaction(req) {
          const t = txOf(req.platformId, req.transactionId);
          if (t.status !== "PENDING_AUTHORIZATION") return { transaction: txMsg(t), authorized: false };
          t.status = "PENDING";
          return { transaction: txMsg(t), authorized: true };
        },
        async expireQuoteTransaction(req) {
          const t = txOf(req.platformId, req.transactionId);
          if (t.status !== "PENDING" && t.status !== "PENDING_AUTHORIZATION") return { transaction: txMsg(t), expired: false };
          t.status = "EXPIRED";
          t.failureReason = "QUOTE_EXPIRED";
          return { transaction: txMsg(t), expired: true };
        },
        async executeQuoteTransaction(req) {
          const t = txOf(req.platformId, req.transactionId);
          if (t.status !== "PENDING") return { transaction: txMsg(t), alreadyExecuted: true };
          if (behaviour.executeError) throw behaviour.executeError;
          t.status = behaviour.executeStatus;
          t.executions++;
          if (behaviour.executeNeverAnswers) {
            behaviour.executeNeverAnswers = false;
            return new Promise<never>(() => {});
          }
          if (behaviour.executeLoseAnswer) {
            const lost = behaviour.executeLoseAnswer;
            behaviour.executeLoseAnswer = undefined;
            throw lost;
          }
          return { transaction: txMsg(t), alreadyExecuted: false };
        },
        async recordQuoteFunding(req) {
          const t = txOf(req.platformId, req.transactionId);
          if (t.status !== "PENDING") return { transaction: txMsg(t), alreadyExecuted: true };
          t.fundings.push({ currencyCode: req.currencyCode, amount: req.amount });
          t.status = behaviour.executeStatus;
          t.executions++;
          return { transaction: txMsg(t), alreadyExecuted: false };
        },
      }),
    { router: { interceptors: [appErrorInterceptor] } },
  );
  // auth-sessions' signed-retry challenges: the sandbox magic signature verifies; requestIds are single use.
  const walletTransport = createRouterTransport(
    (router) =>
      router.service(WalletAuthService, {
        async createSignedChallenge(req) {
          const requestId = newId("Request");
          const body = new TextDecoder().decode(req.body);
          challenges.set(requestId, { platformId: req.platformId, accountId: req.accountId, operation: req.operation, body, requestId, used: false });
          const expiresAt = new Date(clock.now().getTime() + 5 * 60_000);
          return { challenge: { type: "EMAIL_OTP", requestId, payloadToSign: JSON.stringify({ accountId: req.accountId, body, requestId }), expiresAt: timestampFromDate(expiresAt) } };
        },
        async verifySignedRetry(req) {
          const retry = req.signedRetry;
          if (!retry?.requestId) throw new AppError("UNAUTHENTICATED", "REQUEST_ID_MISSING", "Send Request-Id and Service-Wallet-Signature", { reason: "Missing signed-retry headers" });
          if (!retry.signature) throw new AppError("UNAUTHENTICATED", "WALLET_SIGNATURE_MISSING", "Send Request-Id and Service-Wallet-Signature", { reason: "Missing signed-retry headers" });
          const c = challenges.get(retry.requestId);
          if (!c || c.platformId !== req.platformId || c.accountId !== req.accountId) throw errors.unauthorized("Unknown Request-Id", { reason: "Unknown Request-Id" });
          if (c.used) throw errors.unauthorized("Request-Id already used", { reason: "Request-Id already used" });
          if (c.body !== new TextDecoder().decode(req.body)) throw new AppError("UNAUTHENTICATED", "WALLET_SIGNATURE_BODY_MISMATCH", "body differs");
          if (retry.signature !== GOOD_SIGNATURE) throw errors.unauthorized("Invalid Service-Wallet-Signature", { reason: "Invalid Service-Wallet-Signature" });
          c.used = true;
          return { sessionId: "" };
        },
      }),
    { router: { interceptors: [appErrorInterceptor] } },
  );
  const sandbox = { offsetMs: new Map<string, number>(), reads: 0 };
  const built = buildQuotesFx({
    sandboxNow: async (platformId) => {
      sandbox.reads++;
      return new Date(clock.now().getTime() + (sandbox.offsetMs.get(platformId) ?? 0));
    },
    quoteLedger: quoteLedgerPort(() => ledgerTransport),
    signer: walletSignaturePort(() => walletTransport),
    db,
    clock,
    env: { CORRIDOR_FX_SANDBOX_DRIFT_BPS: "0", ...opts.env },
    productionRates: opts.productionRates,
    sca: opts.sca,
    ledger,
    platforms: {
      async facts(id) {
        const p = platforms.get(id);
        if (!p) throw new Error(`unknown platform ${id}`);
        return p;
      },
    },
  });
  const transport = createRouterTransport(built.routes, { router: { interceptors: [appErrorInterceptor] } });
  return { clock, db, built, transactions, behaviour, challenges, client: createClient(QuotesFxService, transport), platforms, internal, external, boundRails, sandbox, close: drop };
}


