import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { SandboxEventSchema } from "@corridor/proto/corridor/sandbox/v1/events_pb.js";
import { newId, type BackgroundWorker, type DatabaseHandle } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildLedger } from "../src/server.js";
import { DEFAULT_QUOTE_EXPIRY_POLL_MS, quoteExpiryPollMs } from "../src/config.js";
import type { QuoteExpiryWorker } from "../src/workers/quote-expiry.js";
import { quoteTransactionInput, quoteWorld, startLedgerHarness, walletSignaturesNotUsed, type LedgerHarness } from "./harness.js";

/** Expiry never asks other services: a directory that refuses proves it. */
const refusingDirectory = {
  environment: async () => {
    throw new Error("the expiry worker must not ask the directory");
  },
  customer: async () => {
    throw new Error("the expiry worker must not ask the directory");
  },
  transactionTypes: async () => {
    throw new Error("the expiry worker must not ask the directory");
  },
};

/**
 * The ledger's quote-transaction expiry worker: a quote transaction nobody expires (quotes-fx
 * failed after CreateQuoteTransaction) must not stay PENDING forever. Time is the harness's
 * ManualClock; the worker under test is the one buildLedger registers.
 */
describe("ledger quote-transaction expiry worker", () => {
  let h: LedgerHarness;
  let worker: QuoteExpiryWorker;

  beforeAll(async () => {
    h = await startLedgerHarness();
    const built = buildLedger({ db: h.db, clock: h.clock, directory: refusingDirectory, env: { LEDGER_QUOTE_EXPIRY_POLL_MS: "60000" }, walletSignatures: walletSignaturesNotUsed });
    const found = built.workers.find((w: BackgroundWorker) => w.name === "quote-transaction-expiry");
    expect(found, "buildLedger registers the worker").toBeDefined();
    worker = found as QuoteExpiryWorker;
  });
  afterAll(async () => {
    await worker?.stop();
    await h?.close();
  });

  /** An approved customer's funded USD account and EUR payee on a fresh platform. */
  const world = () => quoteWorld(h, { fund: 10_000n });

  /** A PENDING quote transaction expiring `ttlMs` after the clock's now. */
  async function pendingQuote(w: Awaited<ReturnType<typeof world>>, ttlMs = 5 * 60_000) {
    const res = await h.ledger.createQuoteTransaction(quoteTransactionInput(h, w, { description: "orphan", expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + ttlMs)) }));
    return res.transaction!;
  }

  const statusOf = async (platformId: string, id: string) => (await h.ledger.getTransaction({ platformId, transactionId: id })).transaction!;
  const eventsOf = async (id: string) =>
    (await h.ledgerEvents()).filter((e) => e.payload.case === "transactionChanged" && e.payload.value.transaction?.id === id).map((e) => e.eventType);

  it("reads its poll interval from LEDGER_QUOTE_EXPIRY_POLL_MS, 5 s by default", () => {
    expect(DEFAULT_QUOTE_EXPIRY_POLL_MS).toBe(5_000);
    expect(quoteExpiryPollMs({})).toBe(5_000);
    expect(quoteExpiryPollMs({ LEDGER_QUOTE_EXPIRY_POLL_MS: "250" })).toBe(250);
    expect(quoteExpiryPollMs({ LEDGER_QUOTE_EXPIRY_POLL_MS: "soon" })).toBe(5_000);
    expect(quoteExpiryPollMs({ LEDGER_QUOTE_EXPIRY_POLL_MS: "0" })).toBe(5_000);
  });

  it("leaves a PENDING quote transaction alone until its expires_at has passed on the ledger's clock", async () => {
    const w = await world();
    const tx = await pendingQuote(w);
    h.clock.advance(5 * 60_000); // exactly expires_at: still executable
    await worker.runOnce();
    expect((await statusOf(w.platformId, tx.id)).status).toBe("PENDING");
    h.clock.advance(1);
    await worker.runOnce();
    expect(await statusOf(w.platformId, tx.id)).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
  });

  it("expires an orphaned quote transaction once: EXPIRED, QUOTE_EXPIRED, one OUTGOING_PAYMENT_EXPIRED, no money moved", async () => {
    const w = await world();
    const tx = await pendingQuote(w);
    h.clock.advance(5 * 60_000 + 1);
    expect(await worker.runOnce()).toBeGreaterThanOrEqual(1);
    expect(await statusOf(w.platformId, tx.id)).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
    // Another pass, and quotes-fx's own ExpireQuoteTransaction arriving late, change nothing.
    await worker.runOnce();
    const late = await h.ledger.expireQuoteTransaction({ platformId: w.platformId, transactionId: tx.id });
    expect(late.expired).toBe(false);
    expect(await eventsOf(tx.id)).toEqual(["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_EXPIRED"]);
    expect((await h.ledger.getInternalAccount({ platformId: w.platformId, accountId: w.usd.id })).account!.available).toBe(10_000n);
    // An expired quote can no longer be executed.
    await expect(h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: tx.id })).rejects.toThrow(/expired/i);
  });

  it("expires a quote transaction that waits for strong customer authentication (PENDING_AUTHORIZATION) like a PENDING one", async () => {
    const w = await world();
    const res = await h.ledger.createQuoteTransaction(quoteTransactionInput(h, w, { description: "waiting", awaitingAuthorization: true }));
    const tx = res.transaction!;
    expect(tx.status).toBe("PENDING_AUTHORIZATION");
    h.clock.advance(5 * 60_000);
    await worker.runOnce();
    expect((await statusOf(w.platformId, tx.id)).status).toBe("PENDING_AUTHORIZATION");
    h.clock.advance(1);
    await worker.runOnce();
    expect(await statusOf(w.platformId, tx.id)).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
    // Announced once, when it ended (its creation in PENDING_AUTHORIZATION sends no event).
    expect(await eventsOf(tx.id)).toEqual(["OUTGOING_PAYMENT_EXPIRED"]);
    expect((await h.ledger.getInternalAccount({ platformId: w.platformId, accountId: w.usd.id })).account!.available).toBe(10_000n);
  });

  /** A receiver lookup of the EUR payee made for the customer: its CREATED transaction. */
  async function lookupTransaction(w: Awaited<ReturnType<typeof world>>, ttlMs = 5 * 60_000) {
    const lookupId = newId("Lookup");
    const res = await h.ledger.createLookupTransaction({
      platformId: w.platformId,
      lookupId,
      customerId: w.customerId,
      destination: { type: "EXTERNAL_ACCOUNT", accountId: w.eurExt.id },
      sendingCurrency: "USD",
      receivingCurrency: "EUR",
      expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + ttlMs)),
    });
    return { lookupId, tx: res.transaction! };
  }

  it("a customer's lookup opens one CREATED transaction (idempotent per lookup) that a quote from it adopts: CREATED -> PENDING, same id", async () => {
    const w = await world();
    const { lookupId, tx } = await lookupTransaction(w);
    expect(tx).toMatchObject({ status: "CREATED", customerId: w.customerId, amount: 0n });
    const again = await h.ledger.createLookupTransaction({
      platformId: w.platformId,
      lookupId,
      customerId: w.customerId,
      destination: { type: "EXTERNAL_ACCOUNT", accountId: w.eurExt.id },
      sendingCurrency: "USD",
      receivingCurrency: "EUR",
      expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + 60_000)),
    });
    expect(again.transaction!.id).toBe(tx.id);
    const listed = await h.ledger.listTransactions({ platformId: w.platformId, status: "CREATED" });
    expect(listed.transactions.map((t) => t.id)).toEqual([tx.id]);
    expect(await eventsOf(tx.id)).toEqual([]);

    const quoted = await h.ledger.createQuoteTransaction({
      platformId: w.platformId,
      quoteId: newId("Quote"),
      customerId: w.customerId,
      source: { type: "INTERNAL_ACCOUNT", accountId: w.usd.id },
      destination: { type: "EXTERNAL_ACCOUNT", accountId: w.eurExt.id, paymentRail: "SEPA" },
      sendingCurrency: "USD",
      totalSendingAmount: 1000n,
      receivingCurrency: "EUR",
      totalReceivingAmount: 850n,
      feesIncluded: 50n,
      exchangeRate: "1.11764705",
      description: "from a lookup",
      counterpartyInformation: {},
      expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + 5 * 60_000)),
      lookupId,
    });
    expect(quoted.transaction).toMatchObject({ id: tx.id, status: "PENDING", amount: 850n });
    expect((await h.ledger.listTransactions({ platformId: w.platformId })).transactions.map((t) => t.id)).toEqual([tx.id]);
    expect(await eventsOf(tx.id)).toEqual(["OUTGOING_PAYMENT_PENDING"]);
    // Adopted, it is no longer the lookup's to expire: its quote's expiry applies.
    h.clock.advance(5 * 60_000 + 1);
    await worker.runOnce();
    expect(await statusOf(w.platformId, tx.id)).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
  });

  it("a lookup never quoted ends EXPIRED when the lookup expires: no failure reason, no event, no money; a later quote from it opens a new transaction", async () => {
    const w = await world();
    const { lookupId, tx } = await lookupTransaction(w);
    h.clock.advance(5 * 60_000);
    await worker.runOnce();
    expect((await statusOf(w.platformId, tx.id)).status).toBe("CREATED");
    h.clock.advance(1);
    expect(await worker.runOnce()).toBeGreaterThanOrEqual(1);
    expect(await statusOf(w.platformId, tx.id)).toMatchObject({ status: "EXPIRED", failureReason: "" });
    expect(await eventsOf(tx.id)).toEqual([]);
    expect((await h.ledger.getInternalAccount({ platformId: w.platformId, accountId: w.usd.id })).account!.available).toBe(10_000n);
    const quoted = await h.ledger.createQuoteTransaction({
      platformId: w.platformId,
      quoteId: newId("Quote"),
      customerId: w.customerId,
      source: { type: "INTERNAL_ACCOUNT", accountId: w.usd.id },
      destination: { type: "EXTERNAL_ACCOUNT", accountId: w.eurExt.id, paymentRail: "SEPA" },
      sendingCurrency: "USD",
      totalSendingAmount: 1000n,
      receivingCurrency: "EUR",
      totalReceivingAmount: 850n,
      feesIncluded: 50n,
      exchangeRate: "1.11764705",
      description: "late",
      counterpartyInformation: {},
      expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + 5 * 60_000)),
      lookupId,
    });
    expect(quoted.transaction!.id).not.toBe(tx.id);
    expect(quoted.transaction!.status).toBe("PENDING");
    expect((await statusOf(w.platformId, tx.id)).status).toBe("EXPIRED");
  });

  it("a lookup transaction the scan found due but a quote adopted before the worker locked it stays PENDING (judged again under the lock)", async () => {
    const w = await world();
    const { lookupId, tx } = await lookupTransaction(w, 60_000);
    h.clock.advance(60_001); // the lookup is due...
    let adopted = false;
    // ...and a quote adopts its transaction between the worker's scan and the worker's row lock:
    // the scan's answer comes back only after the adoption has committed.
    const interleaving: DatabaseHandle = {
      ...h.db,
      forSchema: <DB,>(schema: string) =>
        h.db.forSchema<DB>(schema).withPlugin({
          transformQuery: (a) => a.node,
          transformResult: async (a) => {
            const rows = (a.result.rows ?? []) as Array<Record<string, unknown>>;
            if (!adopted && rows.some((r) => r.id === tx.id && "expires_at" in r && Object.keys(r).length === 3)) {
              adopted = true;
              await h.ledger.createQuoteTransaction(quoteTransactionInput(h, w, { description: "adopts", lookupId, expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + 5 * 60_000)) }));
            }
            return a.result;
          },
        }),
    };
    const racing = buildLedger({ db: interleaving, clock: h.clock, directory: refusingDirectory, env: { LEDGER_QUOTE_EXPIRY_POLL_MS: "60000" }, walletSignatures: walletSignaturesNotUsed });
    const racingWorker = racing.workers.find((x: BackgroundWorker) => x.name === "quote-transaction-expiry") as QuoteExpiryWorker;
    await racingWorker.runOnce();
    expect(adopted, "the scan saw the lookup's transaction due").toBe(true);
    expect(await statusOf(w.platformId, tx.id)).toMatchObject({ status: "PENDING", failureReason: "" });
    expect(await eventsOf(tx.id)).toEqual(["OUTGOING_PAYMENT_PENDING"]);
    // The quote's own expiry still applies.
    h.clock.advance(5 * 60_000 + 1);
    await worker.runOnce();
    expect(await statusOf(w.platformId, tx.id)).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
  });

  it("refuses a lookup transaction without a customer, and one for an unknown customer", async () => {
    const w = await world();
    const base = {
      platformId: w.platformId,
      lookupId: newId("Lookup"),
      destination: { type: "EXTERNAL_ACCOUNT", accountId: w.eurExt.id },
      sendingCurrency: "USD",
      receivingCurrency: "EUR",
      expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + 60_000)),
    };
    await expect(h.ledger.createLookupTransaction({ ...base, customerId: "" })).rejects.toThrow(/customerId/);
    await expect(h.ledger.createLookupTransaction({ ...base, customerId: newId("Customer") })).rejects.toThrow();
    expect((await h.ledger.listTransactions({ platformId: w.platformId, status: "CREATED" })).transactions).toEqual([]);
  });

  it("does not touch executed quote transactions, nor PENDING ones not yet due", async () => {
    const w = await world();
    const executed = await pendingQuote(w);
    await h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: executed.id });
    const later = await pendingQuote(w, 60 * 60_000);
    h.clock.advance(5 * 60_000 + 1);
    await worker.runOnce();
    expect((await statusOf(w.platformId, executed.id)).status).toBe("PROCESSING");
    expect((await statusOf(w.platformId, later.id)).status).toBe("PENDING");
    expect(await eventsOf(executed.id)).not.toContain("OUTGOING_PAYMENT_EXPIRED");
  });

  /** What the sandbox publishes when a platform's clock is advanced (corridor.sandbox.v1). */
  async function clockAdvanced(platformId: string, totalOffsetMs: number) {
    await h.deliver(
      "sandbox-clock",
      create(SandboxEventSchema, {
        eventId: newId("Event"),
        occurredAt: timestampFromDate(h.clock.now()),
        platformId,
        payload: {
          case: "clockAdvanced",
          value: { now: timestampFromDate(new Date(h.clock.now().getTime() + totalOffsetMs)), offsetMs: BigInt(totalOffsetMs), realAt: timestampFromDate(h.clock.now()) },
        },
      }),
    );
  }

  it("expires a platform's due quote transactions as soon as its sandbox clock is advanced past expires_at, without any read", async () => {
    const w = await world();
    const other = await world();
    const due = await pendingQuote(w);
    const notYet = await pendingQuote(w, 60 * 60_000);
    const othersQuote = await pendingQuote(other);
    await clockAdvanced(w.platformId, 301_000);
    expect(await statusOf(w.platformId, due.id)).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
    expect(await eventsOf(due.id)).toEqual(["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_EXPIRED"]);
    expect((await statusOf(w.platformId, notYet.id)).status).toBe("PENDING");
    // Another platform's clock did not move.
    expect((await statusOf(other.platformId, othersQuote.id)).status).toBe("PENDING");
    // The same event again (redelivery) changes nothing.
    await clockAdvanced(w.platformId, 301_000);
    expect(await eventsOf(due.id)).toEqual(["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_EXPIRED"]);
  });

  it("on an advanced clock, expires quotes as real time passes, and refuses to execute them, by the platform's time", async () => {
    const w = await world();
    await clockAdvanced(w.platformId, 3_600_000); // one hour ahead
    const tx = await pendingQuote(w); // expires 5 min after the ledger's clock, i.e. 55 min ago in sandbox time
    const fresh = await h.ledger.createQuoteTransaction({
      platformId: w.platformId,
      quoteId: newId("Quote"),
      customerId: w.customerId,
      source: { type: "INTERNAL_ACCOUNT", accountId: w.usd.id },
      destination: { type: "EXTERNAL_ACCOUNT", accountId: w.eurExt.id, paymentRail: "SEPA" },
      sendingCurrency: "USD",
      totalSendingAmount: 1000n,
      receivingCurrency: "EUR",
      totalReceivingAmount: 850n,
      feesIncluded: 50n,
      exchangeRate: "1.11764705",
      description: "sandbox time",
      counterpartyInformation: {},
      // Created on the platform's (sandbox) clock, as quotes-fx does.
      expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + 3_600_000 + 5 * 60_000)),
    });
    await expect(h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: tx.id })).rejects.toThrow(/expired/i);
    await worker.runOnce();
    expect((await statusOf(w.platformId, tx.id)).status).toBe("EXPIRED");
    expect((await statusOf(w.platformId, fresh.transaction!.id)).status).toBe("PENDING");
    h.clock.advance(5 * 60_000 + 1); // real time passes: due on the sandbox clock
    await worker.runOnce();
    expect((await statusOf(w.platformId, fresh.transaction!.id)).status).toBe("EXPIRED");
  });

  it("sweeps every platform, beyond one batch, on its first pass at start", async () => {
    const a = await world();
    const b = await world();
    const txs = [];
    for (let i = 0; i < 105; i++) txs.push({ platformId: a.platformId, tx: await pendingQuote(a) });
    txs.push({ platformId: b.platformId, tx: await pendingQuote(b) });
    h.clock.advance(5 * 60_000 + 1);
    worker.start(); // the first pass runs at once; stop waits for it
    await worker.stop();
    for (const { platformId, tx } of txs) expect((await statusOf(platformId, tx.id)).status, tx.id).toBe("EXPIRED");
  });
});
