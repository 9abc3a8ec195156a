import { newId } from "@corridor/kit";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { AppError, IDEMPOTENCY_LEASE_MS } from "@corridor/kit";
import { Code, ConnectError } from "@connectrpc/connect";
import { DRAFT_GRACE_MS } from "../src/domain/quote-lifecycle.js";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate, timestampMs } from "@bufbuild/protobuf/wkt";
import { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { sql } from "kysely";
import type { QuotesFxDatabase } from "../src/data/tables.js";
import { dec } from "../src/domain/decimal.js";
import { GOOD_SIGNATURE, expectPublicError, startHarness, usdOnly, type Harness } from "./harness.js";

const PLATFORM = "Platform:life-1";
const OTHER = "Platform:life-2";

describe("quote lifecycle", () => {
  let h: Harness;
  const customerId = newId("Customer");
  const usdAccount = newId("InternalAccount");
  const wallet = newId("InternalAccount");
  const payee = newId("ExternalAccount");

  beforeAll(async () => {
    // A production feed so a PRODUCTION platform can be quoted (expiry by the service clock).
    h = await startHarness({ productionRates: { scope: () => "feed", fetch: async (_p, at) => ({ usdValue: new Map([["USD", dec(1)], ["EUR", dec("1.08")]]), asOf: at }) } });
    h.platforms.set(PLATFORM, usdOnly());
    h.platforms.set(OTHER, usdOnly());
    h.internal.set(usdAccount, { id: usdAccount, platformId: PLATFORM, customerId, type: "INTERNAL_FIAT", currency: "USD", available: 1_000_000n });
    h.internal.set(wallet, { id: wallet, platformId: PLATFORM, customerId, type: "EMBEDDED_WALLET", currency: "USD", available: 1_000_000n });
    h.external.set(payee, { id: payee, platformId: PLATFORM, customerId, status: "ACTIVE", currency: "EUR", accountType: "IBAN" });
  });
  afterAll(async () => h.close());
  beforeEach(() => {
    h.behaviour.executeStatus = "PROCESSING";
    h.behaviour.executeError = undefined;
  });

  const quoteBody = (over: Record<string, unknown> = {}) => ({
    platformId: PLATFORM,
    source: { sourceType: "ACCOUNT", accountId: usdAccount },
    destination: { destinationType: "ACCOUNT", accountId: payee },
    lockedCurrencySide: "SENDING",
    lockedCurrencyAmount: 10_000n,
    counterpartyInformation: { FULL_NAME: "Grace Hopper" },
    ...over,
  });

  it("stores the priced quote with its PENDING transaction, 5 minutes of life, and answers it on GET", async () => {
    const { quote } = await h.client.createQuote(quoteBody());
    // README worked example: 100.00 USD → 91.96 EUR at 1.08216 for 0.48 of fees.
    expect(quote).toMatchObject({
      status: "PENDING",
      totalSendingAmount: 10_000n,
      totalReceivingAmount: 9_196n,
      feesIncluded: 48n,
      exchangeRate: "1.08216",
      payloadToSign: "",
      paymentInstructions: [],
      rateDetails: { counterpartyMultiplier: "1", counterpartyFixedFee: 25n, serviceApiMultiplier: "1.002", serviceApiFixedFee: 10n, serviceApiVariableFeeRate: "0.001", serviceApiVariableFeeAmount: 10n },
    });
    expect(quote!.expiresAt!.seconds - quote!.createdAt!.seconds).toBe(300n);
    expect(h.transactions.get(quote!.transactionId)).toMatchObject({ status: "PENDING", quoteId: quote!.id, totalSendingAmount: 10_000n, sourceAccountId: usdAccount });
    const got = await h.client.getQuote({ platformId: PLATFORM, quoteId: quote!.id });
    expect(got.quote).toEqual(quote);
    await expectPublicError(h.client.getQuote({ platformId: OTHER, quoteId: quote!.id }), "NOT_FOUND", "QUOTE_NOT_FOUND");
  });

  it("executes once from an internal account; a second execute is 409 INVALID_STATE_TRANSITION", async () => {
    const { quote } = await h.client.createQuote(quoteBody());
    const done = await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id });
    expect(done.quote!.status).toBe("PROCESSING");
    expect(h.transactions.get(quote!.transactionId)!.executions).toBe(1);
    const again = await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id }), "CONFLICT", "INVALID_STATE_TRANSITION");
    expect(again.shouldNotRetry).toBe(true);
    expect(h.transactions.get(quote!.transactionId)!.executions).toBe(1);
  });

  it("replays an execute with the same Idempotency-Key instead of answering 409", async () => {
    const { quote } = await h.client.createQuote(quoteBody());
    const first = await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-1" });
    const replay = await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-1" });
    expect(first.replayed).toBe(false);
    expect(replay).toMatchObject({ replayed: true, quote: first.quote });
    const other = (await h.client.createQuote(quoteBody())).quote!;
    await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: other.id, idempotencyKey: "exec-1" }), "UNPROCESSABLE", "IDEMPOTENCY_KEY_REUSED");
  });

  it("a retry under the same Idempotency-Key finishes an execution whose first attempt died after the ledger executed; another key is 409", async () => {
    const { quote } = await h.client.createQuote(quoteBody());
    h.behaviour.executeNeverAnswers = true;
    // The first attempt claims the quote and the ledger executes; then nothing more happens (the
    // process that ran it was killed): the quote stays claimed, the key in flight.
    void h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-died" }).catch(() => {});
    await vi.waitFor(() => expect(h.transactions.get(quote!.transactionId)!.executions).toBe(1));
    // While the key's lease runs, the retry is told to wait.
    await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-died" }), "CONFLICT", "IDEMPOTENCY_KEY_IN_USE");
    h.clock.advance(IDEMPOTENCY_LEASE_MS + 1_000);
    // Another request (another key) finds the quote being executed: 409, as before.
    await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-other" }), "CONFLICT", "INVALID_STATE_TRANSITION");
    // The client's retry of its own request resumes it: the ledger answers the execution it already
    // made, the quote moves on, and the answer is stored for the next retry.
    const resumed = await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-died" });
    expect(resumed).toMatchObject({ replayed: false, quote: { id: quote!.id, status: "PROCESSING" } });
    expect(h.transactions.get(quote!.transactionId)!.executions).toBe(1);
    expect(await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-died" })).toMatchObject({ replayed: true, quote: resumed.quote });
  });

  /** The ledger's event for the quote's transaction in `status`. */
  function ledgerEvent(q: { id: string; transactionId: string }, status: string) {
    return create(LedgerEventSchema, {
      eventId: newId("Event"),
      platformId: PLATFORM,
      occurredAt: timestampFromDate(h.clock.now()),
      eventType: `OUTGOING_PAYMENT_${status}`,
      payload: { case: "transactionChanged", value: { transaction: { id: q.transactionId, platformId: PLATFORM, status, quoteId: q.id } } },
    });
  }

  /** The ledger's event for the quote's transaction in `status`, handled by quotes-fx's consumer. */
  async function ledgerMovedOn(q: { id: string; transactionId: string }, status: string): Promise<void> {
    const [consumer] = h.built.consumers;
    await h.db.forSchema("quotes_fx").transaction().execute((trx) => consumer!.handle(ledgerEvent(q, status), trx));
  }

  it("a retry under the same Idempotency-Key, after the ledger executed and its events moved the quote on, answers the quote (not 409 already executed)", async () => {
    const { quote } = await h.client.createQuote(quoteBody());
    h.behaviour.executeNeverAnswers = true;
    void h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-lost" }).catch(() => {});
    await vi.waitFor(() => expect(h.transactions.get(quote!.transactionId)!.executions).toBe(1));
    // The ledger's PROCESSING event reaches quotes-fx before the client's retry.
    await ledgerMovedOn(quote!, "PROCESSING");
    h.clock.advance(IDEMPOTENCY_LEASE_MS + 1_000);
    await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-other-key" }), "CONFLICT", "INVALID_STATE_TRANSITION");
    const retried = await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-lost" });
    expect(retried).toMatchObject({ replayed: false, quote: { id: quote!.id, status: "PROCESSING" } });
    expect(h.transactions.get(quote!.transactionId)!.executions).toBe(1);
    expect(await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-lost" })).toMatchObject({ replayed: true, quote: retried.quote });
  });

  it("a ledger answer lost after it executed keeps the quote claimed: once the events moved the quote on, the same key's retry answers it, another key is 409", async () => {
    const { quote } = await h.client.createQuote(quoteBody());
    h.behaviour.executeLoseAnswer = new ConnectError("read ECONNRESET", Code.Unavailable);
    const lost = await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-answer-lost" }).catch((err: unknown) => err);
    expect(ConnectError.from(lost).code).toBe(Code.Unavailable);
    expect(h.transactions.get(quote!.transactionId)!.executions).toBe(1);
    await ledgerMovedOn(quote!, "PROCESSING");
    await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-someone-else" }), "CONFLICT", "INVALID_STATE_TRANSITION");
    const retried = await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-answer-lost" });
    expect(retried).toMatchObject({ replayed: false, quote: { id: quote!.id, status: "PROCESSING" } });
    expect(h.transactions.get(quote!.transactionId)!.executions).toBe(1);
  });

  it("on PostgreSQL, a same-key retry whose quote the ledger's events move on between its read and its claim answers the quote (not 409 already executed)", async () => {
    if (h.db.kind !== "postgres") {
      // One session on PGlite: nothing runs between a request's read and its claim.
      expect(h.db.kind).toBe("pglite");
      return;
    }
    const { quote } = await h.client.createQuote(quoteBody());
    // The first attempt claims the quote, the ledger executes, and its answer is lost.
    h.behaviour.executeLoseAnswer = new ConnectError("read ECONNRESET", Code.Unavailable);
    await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-race" }).catch(() => {});
    expect(h.transactions.get(quote!.transactionId)!.executions).toBe(1);
    // The ledger's PROCESSING event is being handled: its transaction holds the quote's row. The
    // retry reads the quote (PENDING, claimed by its key) and then waits on that row to claim it.
    const quotes = h.db.forSchema<QuotesFxDatabase>("quotes_fx");
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    const consumer = h.built.consumers[0]!;
    const holder = quotes.transaction().execute(async (trx) => {
      await trx.selectFrom("quotes").select("id").where("id", "=", quote!.id).forUpdate().execute();
      locked();
      await held;
      await consumer.handle(ledgerEvent(quote!, "PROCESSING"), trx);
    });
    await lockTaken;
    const retry = h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-race" });
    await vi.waitFor(
      async () => {
        const waiting = await sql<{ n: string }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike 'update %"quotes" set%'`.execute(h.db.root);
        expect(Number(waiting.rows[0]!.n)).toBe(1);
      },
      { timeout: 10_000 },
    );
    release();
    await holder;
    expect(await retry).toMatchObject({ replayed: false, quote: { id: quote!.id, status: "PROCESSING" } });
    expect(h.transactions.get(quote!.transactionId)!.executions).toBe(1);
  });

  it("a ledger refusal releases the claim: the quote can be executed again, under any key", async () => {
    const { quote } = await h.client.createQuote(quoteBody());
    h.behaviour.executeError = new AppError("INVALID", "INSUFFICIENT_BALANCE", "not enough");
    await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-refused" }), "INVALID", "INSUFFICIENT_BALANCE");
    h.behaviour.executeError = undefined;
    const other = await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, idempotencyKey: "exec-after-refusal" });
    expect(other.quote!.status).toBe("PROCESSING");
  });

  it("replays a create with the same Idempotency-Key: one quote, one transaction", async () => {
    const before = h.transactions.size;
    const a = await h.client.createQuote({ ...quoteBody(), idempotencyKey: "create-1" });
    const b = await h.client.createQuote({ ...quoteBody(), idempotencyKey: "create-1" });
    expect(b).toMatchObject({ replayed: true, quote: a.quote });
    expect(h.transactions.size).toBe(before + 1);
  });

  describe("a quote and its ledger transaction appear together (issue 23)", () => {
    const lostAnswer = () => new ConnectError("read ECONNRESET", Code.Unavailable);
    const quotesOfTransaction = async (transactionId: string) =>
      h.db.forSchema<QuotesFxDatabase>("quotes_fx").selectFrom("quotes").select(["id", "confirmed"]).where("transaction_id", "=", transactionId).execute();

    it("a retry with the same Idempotency-Key after the ledger's answer was lost answers the same quote, with the transaction the first attempt created (no ghost transaction)", async () => {
      const before = h.transactions.size;
      h.behaviour.createLoseAnswer = lostAnswer();
      const lost = await h.client.createQuote({ ...quoteBody(), idempotencyKey: "ghost-1" }).catch((err: unknown) => err);
      expect(ConnectError.from(lost).code).toBe(Code.Unavailable);
      // The ledger committed its transaction; the quote is a draft nobody can see yet.
      expect(h.transactions.size).toBe(before + 1);
      const orphan = [...h.transactions.values()].at(-1)!;
      // The quote is a draft: not listed (its id was never answered to anyone).
      const listed = await h.client.listQuotes({ platformId: PLATFORM, page: { limit: 100 } });
      expect(listed.quotes.map((q) => q.id)).not.toContain(orphan.quoteId);

      const retried = await h.client.createQuote({ ...quoteBody(), idempotencyKey: "ghost-1" });
      expect(retried.quote).toMatchObject({ id: orphan.quoteId, transactionId: orphan.id, status: "PENDING" });
      expect(h.transactions.size).toBe(before + 1);
      expect((await h.client.getQuote({ platformId: PLATFORM, quoteId: orphan.quoteId })).quote).toEqual(retried.quote);
      // And once more: the stored answer.
      expect(await h.client.createQuote({ ...quoteBody(), idempotencyKey: "ghost-1" })).toMatchObject({ replayed: true, quote: retried.quote });
    });

    it("answers the quote of a transaction whose answer was lost when it is read by id (GET /quotes/{quoteId} of a listed transaction), not 404", async () => {
      h.behaviour.createLoseAnswer = lostAnswer();
      await expect(h.client.createQuote(quoteBody())).rejects.toThrow();
      const orphan = [...h.transactions.values()].at(-1)!;
      const { quote } = await h.client.getQuote({ platformId: PLATFORM, quoteId: orphan.quoteId });
      expect(quote).toMatchObject({ id: orphan.quoteId, transactionId: orphan.id, status: "PENDING" });
      expect(await quotesOfTransaction(orphan.id)).toEqual([{ id: orphan.quoteId, confirmed: true }]);
    });

    it("without a retry or a read, the draft worker finishes the quote of a transaction whose answer was lost, once the request's lease is over", async () => {
      h.behaviour.createLoseAnswer = lostAnswer();
      await expect(h.client.createQuote(quoteBody())).rejects.toThrow();
      const orphan = [...h.transactions.values()].at(-1)!;
      const [worker] = h.built.workers;
      worker!.start();
      await worker!.stop();
      // Still within the creating request's lease: left alone.
      expect(await quotesOfTransaction(orphan.id)).toEqual([]);
      h.clock.advance(DRAFT_GRACE_MS);
      worker!.start();
      await worker!.stop();
      const { quote } = await h.client.getQuote({ platformId: PLATFORM, quoteId: orphan.quoteId });
      expect(quote).toMatchObject({ id: orphan.quoteId, transactionId: orphan.id, status: "PENDING" });
      expect(await quotesOfTransaction(orphan.id)).toEqual([{ id: orphan.quoteId, confirmed: true }]);
    });

    it("forgets the draft when the ledger refuses the transaction, so the corrected retry with the same key prices a new quote", async () => {
      const before = h.transactions.size;
      h.behaviour.createError = new AppError("FORBIDDEN", "USER_NOT_READY", "KYC pending");
      await expectPublicError(h.client.createQuote({ ...quoteBody(), idempotencyKey: "refused-1" }), "FORBIDDEN", "USER_NOT_READY");
      h.behaviour.createError = undefined;
      const drafts = await h.db.forSchema<QuotesFxDatabase>("quotes_fx").selectFrom("quotes").select("id").where("confirmed", "=", false).execute();
      expect(drafts).toEqual([]);
      const { quote } = await h.client.createQuote({ ...quoteBody(), idempotencyKey: "refused-1" });
      expect(h.transactions.size).toBe(before + 1);
      expect(h.transactions.get(quote!.transactionId)!.quoteId).toBe(quote!.id);
    });
  });

  it("leaves the quote executable when the ledger refuses the execution", async () => {
    const { quote } = await h.client.createQuote(quoteBody());
    h.behaviour.executeError = new AppError("INVALID", "INSUFFICIENT_BALANCE", "not enough");
    await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id }), "INVALID", "INSUFFICIENT_BALANCE");
    h.behaviour.executeError = undefined;
    expect((await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id })).quote!.status).toBe("PROCESSING");
  });

  it("executes at creation with immediatelyExecute", async () => {
    h.behaviour.executeStatus = "COMPLETED";
    const { quote } = await h.client.createQuote(quoteBody({ immediatelyExecute: true }));
    expect(quote!.status).toBe("COMPLETED");
    expect(h.transactions.get(quote!.transactionId)).toMatchObject({ status: "COMPLETED", executions: 1 });
  });

  describe("expiry", () => {
    it("expires on read after 5 minutes: quote and transaction EXPIRED with QUOTE_EXPIRED; execute is 409 QUOTE_EXPIRED", async () => {
      const { quote } = await h.client.createQuote(quoteBody());
      h.clock.advance(299_999);
      expect((await h.client.getQuote({ platformId: PLATFORM, quoteId: quote!.id })).quote!.status).toBe("PENDING");
      h.clock.advance(1);
      const got = (await h.client.getQuote({ platformId: PLATFORM, quoteId: quote!.id })).quote!;
      expect(got).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
      expect(h.transactions.get(quote!.transactionId)).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
      const err = await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id }), "CONFLICT", "QUOTE_EXPIRED");
      expect(err.shouldNotRetry).toBe(true);
    });

    it("expires on execute when no read or worker got there first", async () => {
      const { quote } = await h.client.createQuote(quoteBody());
      h.clock.advance(300_000);
      await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id }), "CONFLICT", "QUOTE_EXPIRED");
      expect(h.transactions.get(quote!.transactionId)!.status).toBe("EXPIRED");
    });

    it("the worker expires due PENDING quotes and leaves executed and fresh ones alone", async () => {
      const due = (await h.client.createQuote(quoteBody())).quote!;
      const executed = (await h.client.createQuote(quoteBody())).quote!;
      await h.client.executeQuote({ platformId: PLATFORM, quoteId: executed.id });
      h.clock.advance(300_000);
      const fresh = (await h.client.createQuote(quoteBody())).quote!;
      const [worker] = h.built.workers;
      expect(worker!.name).toBe("quote-expiry");
      worker!.start(); // runs its first pass at once
      await worker!.stop(); // waits for that pass
      expect(h.transactions.get(due.transactionId)!.status).toBe("EXPIRED");
      expect(h.transactions.get(executed.transactionId)!.status).toBe("PROCESSING");
      expect(h.transactions.get(fresh.transactionId)!.status).toBe("PENDING");
      expect((await h.client.getQuote({ platformId: PLATFORM, quoteId: fresh.id })).quote!.status).toBe("PENDING");
    });
  });

  describe("expiry on the platform's sandbox clock", () => {
    const SANDBOX_PLATFORM = "Platform:life-sandbox-clock";
    const PROD_PLATFORM = "Platform:life-prod-clock";
    const quoteOn = (platformId: string, over: Record<string, unknown> = {}) => {
      const account = newId("InternalAccount");
      const payeeOf = newId("ExternalAccount");
      h.internal.set(account, { id: account, platformId, customerId, type: "INTERNAL_FIAT", currency: "USD", available: 1_000_000n });
      h.external.set(payeeOf, { id: payeeOf, platformId, customerId, status: "ACTIVE", currency: "EUR", accountType: "IBAN" });
      return h.client.createQuote({ ...quoteBody({ source: { sourceType: "ACCOUNT", accountId: account }, destination: { destinationType: "ACCOUNT", accountId: payeeOf } }), platformId, ...over });
    };
    beforeAll(() => {
      h.platforms.set(SANDBOX_PLATFORM, usdOnly());
      h.platforms.set(PROD_PLATFORM, usdOnly({ environment: "PRODUCTION" }));
      h.boundRails.add(`${PROD_PLATFORM} EUR`);
    });

    it("refuses a production quote whose payout rail no connector serves with 400 PAYMENT_RAIL_NOT_AVAILABLE, creating nothing", async () => {
      const unbound = "Platform:unbound-prod";
      h.platforms.set(unbound, usdOnly({ environment: "PRODUCTION" }));
      const before = h.transactions.size;
      const err = await expectPublicError(quoteOn(unbound), "INVALID", "PAYMENT_RAIL_NOT_AVAILABLE");
      expect(err.details).toMatchObject({ currency: "EUR", paymentRail: "SEPA" });
      expect(h.transactions.size).toBe(before);
      expect((await h.client.listQuotes({ platformId: unbound })).quotes).toEqual([]);
    });

    it("a sandbox quote expires on read once the platform's sandbox clock passes expiresAt, though the service clock has not", async () => {
      const { quote } = await quoteOn(SANDBOX_PLATFORM);
      h.sandbox.offsetMs.set(SANDBOX_PLATFORM, 299_999);
      expect((await h.client.getQuote({ platformId: SANDBOX_PLATFORM, quoteId: quote!.id })).quote!.status).toBe("PENDING");
      h.sandbox.offsetMs.set(SANDBOX_PLATFORM, 301_000);
      expect((await h.client.getQuote({ platformId: SANDBOX_PLATFORM, quoteId: quote!.id })).quote).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
      expect(h.transactions.get(quote!.transactionId)).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
    });

    it("execute judges expiry by the sandbox clock: 409 QUOTE_EXPIRED and the ledger never executes", async () => {
      h.sandbox.offsetMs.set(SANDBOX_PLATFORM, 0);
      const { quote } = await quoteOn(SANDBOX_PLATFORM);
      h.sandbox.offsetMs.set(SANDBOX_PLATFORM, 301_000);
      const err = await expectPublicError(h.client.executeQuote({ platformId: SANDBOX_PLATFORM, quoteId: quote!.id }), "CONFLICT", "QUOTE_EXPIRED");
      expect(err.shouldNotRetry).toBe(true);
      expect(h.transactions.get(quote!.transactionId)).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED", executions: 0 });
    });

    it("sandbox send judges expiry by the sandbox clock", async () => {
      h.sandbox.offsetMs.set(SANDBOX_PLATFORM, 0);
      const { quote } = await quoteOn(SANDBOX_PLATFORM, { source: { sourceType: "REALTIME_FUNDING", currency: "USD", customerId } });
      h.sandbox.offsetMs.set(SANDBOX_PLATFORM, 301_000);
      await expectPublicError(h.client.sendSandboxFunding({ platformId: SANDBOX_PLATFORM, quoteId: quote!.id, currencyCode: "USD", amount: quote!.totalSendingAmount }), "CONFLICT", "QUOTE_EXPIRED");
      expect(h.transactions.get(quote!.transactionId)).toMatchObject({ status: "EXPIRED", fundings: [] });
    });

    it("a quote created after the sandbox clock was advanced lives 5 minutes of sandbox time", async () => {
      h.sandbox.offsetMs.set(SANDBOX_PLATFORM, 86_400_000);
      const { quote } = await quoteOn(SANDBOX_PLATFORM);
      expect(quote!.createdAt!.seconds).toBe(BigInt(Math.floor((h.clock.now().getTime() + 86_400_000) / 1000)));
      expect(quote!.expiresAt!.seconds - quote!.createdAt!.seconds).toBe(300n);
      const executed = (await h.client.executeQuote({ platformId: SANDBOX_PLATFORM, quoteId: quote!.id })).quote!;
      expect(executed.status).toBe("PROCESSING");
      // Stamped on the service clock, a day behind the sandbox one: never before the creation.
      const row = await h.db.forSchema<QuotesFxDatabase>("quotes_fx").selectFrom("quotes").select(["created_at", "updated_at"]).where("id", "=", quote!.id).executeTakeFirstOrThrow();
      expect(row.updated_at.getTime()).toBe(timestampMs(quote!.createdAt!));
      expect(row.created_at.getTime()).toBe(timestampMs(quote!.createdAt!));
    });

    it("a production quote keeps the service clock: a sandbox offset does not expire it, and the sandbox is not asked", async () => {
      const { quote } = await quoteOn(PROD_PLATFORM);
      h.sandbox.offsetMs.set(PROD_PLATFORM, 3_600_000);
      const reads = h.sandbox.reads;
      expect((await h.client.getQuote({ platformId: PROD_PLATFORM, quoteId: quote!.id })).quote!.status).toBe("PENDING");
      expect(h.sandbox.reads).toBe(reads);
      h.clock.advance(300_000);
      expect((await h.client.getQuote({ platformId: PROD_PLATFORM, quoteId: quote!.id })).quote!.status).toBe("EXPIRED");
    });
  });

  describe("embedded wallet", () => {
    it("returns auth-sessions' payloadToSign; execute without a signature is 401, with one 200, and the requestId is not asked twice", async () => {
      const { quote } = await h.client.createQuote(quoteBody({ source: { sourceType: "ACCOUNT", accountId: wallet } }));
      expect(quote!.payloadToSign).not.toBe("");
      const challenge = h.challenges.get(quote!.signatureRequestId)!;
      expect(challenge).toMatchObject({ accountId: wallet, operation: "EXECUTE_QUOTE" });
      expect(JSON.parse(challenge.body)).toMatchObject({ quoteId: quote!.id, accountId: wallet, totalSendingAmount: 10000 });
      await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id }), "UNAUTHENTICATED", "WALLET_SIGNATURE_MISSING");
      await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, signature: "forged" }), "UNAUTHENTICATED", "UNAUTHORIZED");
      expect(h.transactions.get(quote!.transactionId)!.executions).toBe(0);
      const ok = await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, signature: GOOD_SIGNATURE });
      expect(ok.quote!.status).toBe("PROCESSING");
      expect(challenge.used).toBe(true);
    });

    it("keeps a verified signature when the ledger then fails, so the retry needs no new challenge", async () => {
      const { quote } = await h.client.createQuote(quoteBody({ source: { sourceType: "ACCOUNT", accountId: wallet } }));
      h.behaviour.executeError = new AppError("UNAVAILABLE", "SERVICE_UNAVAILABLE", "ledger down");
      await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, signature: GOOD_SIGNATURE }), "UNAVAILABLE", "SERVICE_UNAVAILABLE");
      h.behaviour.executeError = undefined;
      expect((await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id, signature: GOOD_SIGNATURE })).quote!.status).toBe("PROCESSING");
    });
  });

  describe("real-time funding", () => {
    const realtime = () => quoteBody({ source: { sourceType: "REALTIME_FUNDING", customerId, currency: "USD" } });

    it("carries payment instructions for the exact amount; internal sources carry none", async () => {
      const { quote } = await h.client.createQuote(realtime());
      expect(quote!.paymentInstructions).toHaveLength(1);
      expect(quote!.paymentInstructions[0]).toMatchObject({ accountType: "USD_ACCOUNT", amount: 10_000n, currency: "USD", routingNumber: "021000021" });
      expect(h.transactions.get(quote!.transactionId)!.sourceAccountId).toBe("");
      await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id }), "INVALID", "QUOTE_NOT_EXECUTABLE");
    });

    it("proceeds when paid in the right currency and amount; wrong ones are 400 and move nothing", async () => {
      const { quote } = await h.client.createQuote(realtime());
      await expectPublicError(h.client.sendSandboxFunding({ platformId: PLATFORM, quoteId: quote!.id, currencyCode: "EUR" }), "INVALID", "CURRENCY_MISMATCH");
      await expectPublicError(h.client.sendSandboxFunding({ platformId: PLATFORM, quoteId: quote!.id, currencyCode: "USD", amount: 9_999n }), "INVALID", "AMOUNT_MISMATCH");
      expect(h.transactions.get(quote!.transactionId)!.fundings).toEqual([]);
      const paid = await h.client.sendSandboxFunding({ platformId: PLATFORM, quoteId: quote!.id, currencyCode: "USD", idempotencyKey: "send-1" });
      expect(paid).toMatchObject({ transactionId: quote!.transactionId, replayed: false, quote: { status: "PROCESSING" } });
      expect(h.transactions.get(quote!.transactionId)!.fundings).toEqual([{ currencyCode: "USD", amount: 10_000n }]);
      expect((await h.client.sendSandboxFunding({ platformId: PLATFORM, quoteId: quote!.id, currencyCode: "USD", idempotencyKey: "send-1" })).replayed).toBe(true);
      await expectPublicError(h.client.sendSandboxFunding({ platformId: PLATFORM, quoteId: quote!.id, currencyCode: "USD" }), "CONFLICT", "INVALID_STATE_TRANSITION");
    });

    it("refuses to fund a quote that is not REALTIME_FUNDING", async () => {
      const { quote } = await h.client.createQuote(quoteBody());
      await expectPublicError(h.client.sendSandboxFunding({ platformId: PLATFORM, quoteId: quote!.id, currencyCode: "USD" }), "INVALID", "INVALID_INPUT");
    });
  });

  describe("status follows the ledger's transaction events", () => {
    const event = (platformId: string, transactionId: string, quoteId: string, status: string, failureReason = "") =>
      create(LedgerEventSchema, {
        eventId: newId("Event"),
        platformId,
        occurredAt: timestampFromDate(h.clock.now()),
        eventType: `OUTGOING_PAYMENT_${status}`,
        payload: { case: "transactionChanged", value: { transaction: { id: transactionId, platformId, status, failureReason, quoteId } } },
      });

    it("moves forward only: PROCESSING → COMPLETED, a late PROCESSING changes nothing, a returned payment is FAILED", async () => {
      const { quote } = await h.client.createQuote(quoteBody());
      await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id });
      const [consumer] = h.built.consumers;
      const apply = (status: string, reason = "") => h.db.forSchema("quotes_fx").transaction().execute((trx) => consumer!.handle(event(PLATFORM, quote!.transactionId, quote!.id, status, reason), trx));
      await apply("COMPLETED");
      expect((await h.client.getQuote({ platformId: PLATFORM, quoteId: quote!.id })).quote!.status).toBe("COMPLETED");
      await apply("PROCESSING");
      expect((await h.client.getQuote({ platformId: PLATFORM, quoteId: quote!.id })).quote!.status).toBe("COMPLETED");
      await apply("FAILED", "QUOTE_EXECUTION_FAILED");
      expect((await h.client.getQuote({ platformId: PLATFORM, quoteId: quote!.id })).quote).toMatchObject({ status: "FAILED", failureReason: "QUOTE_EXECUTION_FAILED" });
    });

    it("ignores another platform's event for the same transaction id", async () => {
      const { quote } = await h.client.createQuote(quoteBody());
      const [consumer] = h.built.consumers;
      await h.db.forSchema("quotes_fx").transaction().execute((trx) => consumer!.handle(event(OTHER, quote!.transactionId, quote!.id, "COMPLETED"), trx));
      expect((await h.client.getQuote({ platformId: PLATFORM, quoteId: quote!.id })).quote!.status).toBe("PENDING");
    });
  });
});
