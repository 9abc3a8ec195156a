import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationTransition, type AuthorizationEvent } from "../src/domain/transactions.js";
import { publicError, quoteTransactionInput, quoteWorld, startLedgerHarness, type LedgerHarness } from "./harness.js";

/**
 * PENDING_AUTHORIZATION (issue 27, docs/sca.md): the ledger's transaction of a quote that waits for
 * strong customer authentication. It starts in that status, moves to PENDING on authorization,
 * to EXPIRED or FAILED when its quote expires or is cancelled, and never to PROCESSING directly.
 */
describe("PENDING_AUTHORIZATION state machine", () => {
  const events: AuthorizationEvent[] = ["AUTHORIZED", "EXPIRED", "CANCELLED", "EXECUTE"];

  it("moves a waiting transaction to PENDING on authorization, EXPIRED on expiry, FAILED on cancellation, and refuses execution", () => {
    expect(events.map((e) => authorizationTransition("PENDING_AUTHORIZATION", e))).toEqual(["PENDING", "EXPIRED", "FAILED", "REFUSED"]);
  });

  it("never answers PROCESSING (execution is refused, not a transition)", () => {
    for (const e of events) expect(authorizationTransition("PENDING_AUTHORIZATION", e)).not.toBe("PROCESSING");
  });

  it("moves nothing from any other status (a repeated authorization, an authorization after expiry, a transaction stored PENDING)", () => {
    for (const status of ["CREATED", "PENDING", "PROCESSING", "COMPLETED", "REJECTED", "FAILED", "REFUNDED", "EXPIRED"]) {
      for (const e of events) expect(authorizationTransition(status, e), `${status} ${e}`).toBeUndefined();
    }
  });
});

describe("ledger quote transactions waiting for strong customer authentication", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  /** An approved customer with a funded USD account (5000) and a EUR payee. */
  const world = () => quoteWorld(h, { fund: 5000n });
  type World = Awaited<ReturnType<typeof world>>;

  const quote = (w: World, awaitingAuthorization: boolean, over: Record<string, unknown> = {}) => quoteTransactionInput(h, w, { description: "sca", awaitingAuthorization, ...over });

  const account = async (w: World) => (await h.ledger.getInternalAccount({ platformId: w.platformId, accountId: w.usd.id })).account!;
  const eventsOf = async (id: string) =>
    (await h.ledgerEvents()).flatMap((e) => (e.payload.case === "transactionChanged" && e.payload.value.transaction?.id === id ? [[e.eventType, e.payload.value.transaction.status]] : []));
  const authorize = (w: World, transactionId: string) => h.ledger.authorizeQuoteTransaction({ platformId: w.platformId, transactionId });

  it("creates the transaction PENDING_AUTHORIZATION, holding and announcing nothing, once per quote", async () => {
    const w = await world();
    const req = quote(w, true);
    const tx = (await h.ledger.createQuoteTransaction(req)).transaction!;
    expect(tx).toMatchObject({ status: "PENDING_AUTHORIZATION", type: "OUTGOING", quoteId: req.quoteId, amount: 850n, sentAmount: 1000n });
    expect((await h.ledger.createQuoteTransaction(req)).transaction!.id).toBe(tx.id);
    expect(await eventsOf(tx.id)).toEqual([]);
    // Exactly what a PENDING quote transaction holds: nothing (the money moves at execution).
    expect(await account(w)).toMatchObject({ balance: 5000n, available: 5000n });
    const pendingTx = (await h.ledger.createQuoteTransaction(quote(w, false))).transaction!;
    expect(pendingTx.status).toBe("PENDING");
    expect(await account(w)).toMatchObject({ balance: 5000n, available: 5000n });
    expect((await h.ledger.getTransaction({ platformId: w.platformId, transactionId: tx.id })).transaction!.status).toBe("PENDING_AUTHORIZATION");
  });

  it("lists it under status=PENDING_AUTHORIZATION only, with every other filter", async () => {
    const w = await world();
    const waiting = (await h.ledger.createQuoteTransaction(quote(w, true))).transaction!;
    const pending = (await h.ledger.createQuoteTransaction(quote(w, false))).transaction!;
    const ids = async (f: Record<string, unknown>) => (await h.ledger.listTransactions({ platformId: w.platformId, ...f })).transactions.map((t) => t.id);
    expect(await ids({ status: "PENDING_AUTHORIZATION" })).toEqual([waiting.id]);
    expect(await ids({ status: "PENDING" })).toEqual([pending.id]);
    expect(await ids({ status: "PENDING_AUTHORIZATION", customerId: w.customerId, ascending: true, type: "OUTGOING" })).toEqual([waiting.id]);
    expect(await ids({ status: "PENDING_AUTHORIZATION", reference: waiting.reference })).toEqual([waiting.id]);
    expect(await ids({ status: "PENDING_AUTHORIZATION", type: "INCOMING" })).toEqual([]);
  });

  it("refuses execution while it waits (409 QUOTE_PENDING_AUTHORIZATION, nothing moved), then authorization moves it to PENDING once and it executes", async () => {
    const w = await world();
    const tx = (await h.ledger.createQuoteTransaction(quote(w, true))).transaction!;
    const early = await publicError(h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: tx.id }));
    expect(early).toMatchObject({ outcome: "CONFLICT", code: "QUOTE_PENDING_AUTHORIZATION" });
    expect(await account(w)).toMatchObject({ balance: 5000n, available: 5000n });

    const first = await authorize(w, tx.id);
    expect(first).toMatchObject({ authorized: true, transaction: { id: tx.id, status: "PENDING" } });
    const again = await authorize(w, tx.id);
    expect(again).toMatchObject({ authorized: false, transaction: { status: "PENDING" } });
    expect(await eventsOf(tx.id)).toEqual([["OUTGOING_PAYMENT_PENDING", "PENDING"]]);

    const executed = await h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: tx.id });
    expect(executed).toMatchObject({ alreadyExecuted: false, transaction: { status: "PROCESSING" } });
    expect((await authorize(w, tx.id)).transaction!.status).toBe("PROCESSING");
    expect(await account(w)).toMatchObject({ balance: 4000n });
  });

  it("refuses real-time funding while it waits", async () => {
    const w = await world();
    const tx = (await h.ledger.createQuoteTransaction(quote(w, true, { source: { type: "REALTIME_FUNDING", accountId: "" } }))).transaction!;
    expect(tx.status).toBe("PENDING_AUTHORIZATION");
    const err = await publicError(h.ledger.recordQuoteFunding({ platformId: w.platformId, transactionId: tx.id, currencyCode: "USD", amount: 1000n }));
    expect(err.code).toBe("QUOTE_PENDING_AUTHORIZATION");
    expect((await authorize(w, tx.id)).transaction!.status).toBe("PENDING");
    const funded = await h.ledger.recordQuoteFunding({ platformId: w.platformId, transactionId: tx.id, currencyCode: "USD", amount: 1000n });
    expect(funded.transaction!.status).toBe("PROCESSING");
  });

  it("expires while it waits (EXPIRED, QUOTE_EXPIRED, one event); authorizing it then answers EXPIRED and moves nothing", async () => {
    const w = await world();
    const tx = (await h.ledger.createQuoteTransaction(quote(w, true))).transaction!;
    const r = await h.ledger.expireQuoteTransaction({ platformId: w.platformId, transactionId: tx.id });
    expect(r).toMatchObject({ expired: true, transaction: { status: "EXPIRED", failureReason: "QUOTE_EXPIRED" } });
    expect(await authorize(w, tx.id)).toMatchObject({ authorized: false, transaction: { status: "EXPIRED" } });
    expect(await eventsOf(tx.id)).toEqual([["OUTGOING_PAYMENT_EXPIRED", "EXPIRED"]]);
  });

  it("is cancelled while it waits (FAILED, CANCELLED, nothing released because nothing was held)", async () => {
    const w = await world();
    const tx = (await h.ledger.createQuoteTransaction(quote(w, true))).transaction!;
    const cancelled = (await h.ledger.cancelTransaction({ platformId: w.platformId, transactionId: tx.id })).transaction!;
    expect(cancelled).toMatchObject({ status: "FAILED", failureReason: "QUOTE_EXECUTION_FAILED", failureDetail: "CANCELLED" });
    expect(await eventsOf(tx.id)).toEqual([["OUTGOING_PAYMENT_FAILED", "FAILED"]]);
    expect(await authorize(w, tx.id)).toMatchObject({ authorized: false, transaction: { status: "FAILED" } });
    expect(await account(w)).toMatchObject({ balance: 5000n, available: 5000n });
  });

  it("answers a quote transaction stored PENDING (before this version) as it is: authorization changes nothing", async () => {
    const w = await world();
    const tx = (await h.ledger.createQuoteTransaction(quote(w, false))).transaction!;
    expect(await authorize(w, tx.id)).toMatchObject({ authorized: false, transaction: { status: "PENDING" } });
    expect(await eventsOf(tx.id)).toEqual([["OUTGOING_PAYMENT_PENDING", "PENDING"]]);
  });

  it("authorizes once under concurrent calls (one event)", async () => {
    const w = await world();
    const tx = (await h.ledger.createQuoteTransaction(quote(w, true))).transaction!;
    const results = await Promise.all(Array.from({ length: 5 }, () => authorize(w, tx.id)));
    expect(results.filter((r) => r.authorized)).toHaveLength(1);
    expect(results.every((r) => r.transaction!.status === "PENDING")).toBe(true);
    expect(await eventsOf(tx.id)).toEqual([["OUTGOING_PAYMENT_PENDING", "PENDING"]]);
  });

  it("counts a waiting transaction as in flight: its customer is not closed", async () => {
    const w = await world();
    const tx = (await h.ledger.createQuoteTransaction(quote(w, true))).transaction!;
    const holdings = await h.ledger.getCustomerHoldings({ platformId: w.platformId, customerId: w.customerId });
    expect(holdings.inFlightTransactions).toEqual([expect.objectContaining({ transactionId: tx.id, status: "PENDING_AUTHORIZATION" })]);
  });

  it("answers 404 for another platform's transaction", async () => {
    const w = await world();
    const tx = (await h.ledger.createQuoteTransaction(quote(w, true))).transaction!;
    const other = await h.newPlatform({ currencies: ["USD"] });
    const err = await publicError(h.ledger.authorizeQuoteTransaction({ platformId: other, transactionId: tx.id }));
    expect(err.outcome).toBe("NOT_FOUND");
  });
});
