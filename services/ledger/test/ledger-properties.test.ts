import { newId, sql } from "@corridor/kit";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { service } from "../src/server.js";
import { balanceSums, publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

/**
 * Properties of the journal under many concurrent transfers, retries, cross-currency quote
 * executions (from internal accounts and real-time funding) and rail outcomes (in any order,
 * repeated, including quote failures, returns and refunds): per currency all balances sum to zero,
 * no customer or platform balance goes below zero or below its holds, holds and balances agree with
 * the holds and postings tables, each Idempotency-Key moves money at most once, and a refund never
 * gives back more than was debited.
 */

type Op =
  | { kind: "fund"; account: number; amount: number }
  | { kind: "out" | "in"; account: number; amount: number; key: number | null }
  | { kind: "outcome"; tx: number; status: "PROCESSING" | "COMPLETED" | "FAILED" | "REJECTED"; replay: boolean }
  | { kind: "quote"; route: number; total: number; fee: number; receive: number; execute: boolean }
  | { kind: "quoteOutcome"; quote: number; status: QuoteStatus; cause: string };

type QuoteStatus = "PROCESSING" | "COMPLETED" | "FAILED" | "RETURNED" | "REFUND_COMPLETED" | "REFUND_FAILED";
const QUOTE_CAUSES = ["EXECUTION_FAILED", "COUNTERPARTY_DELIVERY_FAILED", "USER_CANCELLED", "PAYOUT_FAILED", "RETURNED_BY_RECEIVING_BANK"];

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("fund" as const), account: fc.nat(3), amount: fc.integer({ min: 1, max: 1000 }) }),
  fc.record({ kind: fc.constantFrom("out" as const, "in" as const), account: fc.nat(3), amount: fc.integer({ min: 1, max: 1500 }), key: fc.option(fc.nat(4), { nil: null }) }),
  fc.record({ kind: fc.constant("outcome" as const), tx: fc.nat(50), status: fc.constantFrom("PROCESSING" as const, "COMPLETED" as const, "FAILED" as const, "REJECTED" as const), replay: fc.boolean() }),
  {
    weight: 3,
    arbitrary: fc
      .record({ kind: fc.constant("quote" as const), route: fc.nat(3), total: fc.integer({ min: 1, max: 1500 }), fee: fc.nat(100), receive: fc.integer({ min: 1, max: 2000 }), execute: fc.boolean() })
      .map((q) => ({ ...q, fee: q.fee % q.total })),
  },
  {
    // Few quote indexes, so outcomes pile up on the same quotes (repeated, late, out of order).
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("quoteOutcome" as const),
      quote: fc.nat(4),
      status: fc.constantFrom<QuoteStatus>("PROCESSING", "COMPLETED", "FAILED", "RETURNED", "REFUND_COMPLETED", "REFUND_FAILED"),
      cause: fc.constantFrom(...QUOTE_CAUSES),
    }),
  },
);

const EXPECTED_CODES = new Set(["INSUFFICIENT_BALANCE", "IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED", "TRANSFER_IN_NOT_SUPPORTED"]);
const eurInfo = { accountType: "EUR_ACCOUNT", iban: "DE89370400440532013000" };

describe("ledger properties", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  async function world() {
    const platformId = await h.newPlatform({ currencies: ["USD", "EUR"] });
    const c1 = await h.newCustomer(platformId);
    const c2 = await h.newCustomer(platformId);
    const list = async (owner: string, customerId = "") => (await h.ledger.listInternalAccounts({ platformId, owner, customerId })).accounts;
    const platformAccounts = await list("PLATFORM");
    const usd = platformAccounts.find((a) => a.currency?.code === "USD")!;
    const eur = platformAccounts.find((a) => a.currency?.code === "EUR")!;
    const cust = async (c: string) => (await list("CUSTOMER", c)).find((a) => a.type === "INTERNAL_FIAT")!;
    const ext = async (owner: string, customerId: string, currency: string, info: unknown) =>
      (await h.ledger.createExternalAccount({ platformId, owner, customerId, currency, accountInfo: info as never })).account!.id;
    const accounts = [
      { id: usd.id, ext: await ext("PLATFORM", "", "USD", usdInfo("100200300")) },
      { id: eur.id, ext: await ext("PLATFORM", "", "EUR", eurInfo) },
      { id: (await cust(c1)).id, ext: await ext("CUSTOMER", c1, "USD", usdInfo("500600700")) },
      { id: (await cust(c2)).id, ext: await ext("CUSTOMER", c2, "USD", usdInfo("800900100")) },
    ];
    // Quote routes: USD -> EUR and EUR -> USD for the platform, USD -> EUR for a customer, and a
    // real-time-funded USD -> EUR quote of the other customer.
    const routes = [
      { customerId: "", source: accounts[0]!.id, sending: "USD", receiving: "EUR", dest: accounts[1]!.ext },
      { customerId: "", source: accounts[1]!.id, sending: "EUR", receiving: "USD", dest: accounts[0]!.ext },
      { customerId: c1, source: accounts[2]!.id, sending: "USD", receiving: "EUR", dest: await ext("CUSTOMER", c1, "EUR", eurInfo) },
      { customerId: c2, source: "", sending: "USD", receiving: "EUR", dest: await ext("CUSTOMER", c2, "EUR", eurInfo) },
    ];
    return { platformId, accounts, routes };
  }

  async function checkInvariants(platformId: string) {
    const db = h.db.forSchema<any>(service.schema);
    for (const [currency, sum] of await balanceSums(h.db, platformId)) expect(sum, `sum of ${currency}`).toBe(0n);
    const accounts = await db.selectFrom("accounts").selectAll().where("platform_id", "=", platformId).execute();
    for (const a of accounts) {
      const postings = (await db.selectFrom("postings").select(sql<string>`coalesce(sum(amount), 0)`.as("s")).where("account_id", "=", a.id).executeTakeFirstOrThrow()) as { s: string };
      expect(BigInt(postings.s), `postings of ${a.id}`).toBe(a.balance);
      const holds = (await db.selectFrom("holds").select(sql<string>`coalesce(sum(amount), 0)`.as("s")).where("account_id", "=", a.id).where("status", "=", "ACTIVE").executeTakeFirstOrThrow()) as { s: string };
      expect(BigInt(holds.s), `holds of ${a.id}`).toBe(a.held);
      if (a.owner_kind !== "SYSTEM") {
        expect(a.balance >= 0n).toBe(true);
        expect(a.balance - a.held >= 0n).toBe(true);
      }
    }
    // Money moved at most once per transaction, and only in the states that say so.
    const txs = await db.selectFrom("transactions").selectAll().where("platform_id", "=", platformId).execute();
    for (const t of txs) {
      const entries = await db.selectFrom("journal_entries").select(["id", "kind"]).where("transaction_id", "=", t.id).execute();
      if (t.quote_id) {
        checkQuoteEntries(t, entries.map((e: { kind: string }) => e.kind));
        // A refund never gives the payer back more than the execution took.
        const payer = (await db
          .selectFrom("postings")
          .innerJoin("journal_entries as e", "e.id", "postings.entry_id")
          .innerJoin("accounts as a", "a.id", "postings.account_id")
          .select([sql<string>`coalesce(sum(case when postings.amount < 0 then -postings.amount else 0 end), 0)`.as("debited"), sql<string>`coalesce(sum(case when postings.amount > 0 then postings.amount else 0 end), 0)`.as("credited")])
          .where("e.transaction_id", "=", t.id)
          .where((eb: any) => (t.internal_account_id ? eb("postings.account_id", "=", t.internal_account_id) : eb("a.type", "=", "SANDBOX_FUNDING")))
          .executeTakeFirstOrThrow()) as { debited: string; credited: string };
        expect(BigInt(payer.credited) <= BigInt(payer.debited), `refund of ${t.id}`).toBe(true);
        continue;
      }
      expect(entries.length, `entries of ${t.id} (${t.type} ${t.status})`).toBe(t.status === "COMPLETED" ? 1 : 0);
      // A bank's rejection ends a transfer FAILED (decisions §5: OUTGOING has no REJECTED).
      expect(t.status, `status of transfer ${t.id}`).not.toBe("REJECTED");
      // A failed payout is an off-ramp failure; a failed pull a collection failure.
      if (t.status === "FAILED") expect(t.failure_reason).toBe(t.type === "OUTGOING" ? "OFFRAMP_FAILED" : "COLLECTION_FAILED");
      if (t.type === "OUTGOING") {
        const hold = await db.selectFrom("holds").select("status").where("transaction_id", "=", t.id).executeTakeFirst();
        const expected = t.status === "COMPLETED" ? "CAPTURED" : t.status === "FAILED" ? "RELEASED" : "ACTIVE";
        expect(hold?.status).toBe(expected);
      }
    }
    return txs;
  }

  /** Which entries a quote transaction has, by its state: an execution once executed, one reversal or refund, one suspense. */
  function checkQuoteEntries(t: any, kinds: string[]) {
    const count = (k: string) => kinds.filter((x) => x === k).length;
    const executed = t.status !== "PENDING" && t.status !== "EXPIRED";
    expect(count("QUOTE_EXECUTION"), `execution of ${t.id} (${t.status})`).toBe(executed ? 1 : 0);
    const reversed = t.failure_reason === "QUOTE_EXECUTION_FAILED" || t.refund_status === "COMPLETED";
    expect(count("QUOTE_REVERSAL") + count("QUOTE_REFUND"), `reversal of ${t.id}`).toBe(reversed ? 1 : 0);
    expect(count("QUOTE_REFUND_SUSPENSE"), `suspense of ${t.id}`).toBe(t.refund_status === "FAILED" ? 1 : 0);
    expect(kinds.length).toBe(count("QUOTE_EXECUTION") + count("QUOTE_REVERSAL") + count("QUOTE_REFUND") + count("QUOTE_REFUND_SUSPENSE"));
  }

  it("conserves money, never overdraws and moves money at most once per Idempotency-Key", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 40 }), fc.integer({ min: 1, max: 6 }), async (ops, parallelism) => {
        const { platformId, accounts, routes } = await world();
        const created: string[] = [];
        const quotes: string[] = [];
        const byKey = new Map<string, Set<string>>();
        const delivered: { tx: string; status: string; eventId: string }[] = [];

        const run = async (op: Op) => {
          try {
            if (op.kind === "quote") {
              const r = routes[op.route]!;
              const tx = (
                await h.ledger.createQuoteTransaction({
                  platformId,
                  quoteId: newId("Quote"),
                  customerId: r.customerId,
                  source: r.source ? { type: "INTERNAL_ACCOUNT", accountId: r.source } : { type: "REALTIME_FUNDING" },
                  destination: { type: "EXTERNAL_ACCOUNT", accountId: r.dest },
                  sendingCurrency: r.sending,
                  totalSendingAmount: BigInt(op.total),
                  receivingCurrency: r.receiving,
                  totalReceivingAmount: BigInt(op.receive),
                  feesIncluded: BigInt(op.fee),
                  exchangeRate: "1.1",
                })
              ).transaction!;
              created.push(tx.id);
              quotes.push(tx.id);
              if (!op.execute) return;
              if (r.source) await h.ledger.executeQuoteTransaction({ platformId, transactionId: tx.id });
              else await h.ledger.recordQuoteFunding({ platformId, transactionId: tx.id, currencyCode: r.sending, amount: BigInt(op.total) });
            } else if (op.kind === "quoteOutcome") {
              const tx = quotes[op.quote % Math.max(quotes.length, 1)];
              if (tx) await h.outcome(platformId, tx, op.status, op.status === "FAILED" || op.status === "RETURNED" ? op.cause : "");
            } else if (op.kind === "fund") {
              await h.ledger.fundInternalAccount({ platformId, accountId: accounts[op.account]!.id, amount: BigInt(op.amount) });
            } else if (op.kind === "outcome") {
              // A replay redelivers an earlier outcome event as is (the bus delivers at least once).
              const earlier = op.replay && delivered.length ? delivered[op.tx % delivered.length]! : undefined;
              const tx = earlier?.tx ?? created[op.tx % Math.max(created.length, 1)];
              if (!tx) return;
              const d = earlier ?? { tx, status: op.status, eventId: newId("Event") };
              delivered.push(d);
              await h.outcome(platformId, d.tx, d.status, d.status === "FAILED" ? "TIMED_OUT" : "", d.eventId);
            } else {
              const a = accounts[op.account]!;
              const key = op.key === null ? "" : `key-${op.key}`;
              const transfer =
                op.kind === "out"
                  ? { platformId, sourceAccountId: a.id, destinationAccountId: a.ext, amount: BigInt(op.amount), idempotencyKey: key }
                  : { platformId, sourceAccountId: a.ext, destinationAccountId: a.id, amount: BigInt(op.amount), idempotencyKey: key };
              const res = op.kind === "out" ? await h.ledger.transferOut({ transfer }) : await h.ledger.transferIn({ transfer });
              const id = res.result!.transaction!.id;
              if (!res.result!.replayed) created.push(id);
              if (key) byKey.set(key, (byKey.get(key) ?? new Set()).add(id));
            }
          } catch (err) {
            const e = await publicError(Promise.reject(err));
            if (!EXPECTED_CODES.has(e.code)) throw err;
          }
        };

        for (let i = 0; i < ops.length; i += parallelism) await Promise.all(ops.slice(i, i + parallelism).map(run));
        let txs = await checkInvariants(platformId);
        expect(txs.length).toBe(created.length);
        expect(new Set(created).size).toBe(created.length);
        for (const [key, ids] of byKey) expect(ids.size, `transactions of ${key}`).toBe(1);

        // Settle whatever is still in flight: every hold ends, every refund ends, and the invariants still hold.
        await Promise.all(
          txs.filter((t: any) => !t.quote_id && (t.status === "PENDING" || t.status === "PROCESSING")).map((t: any, i: number) => h.outcome(platformId, t.id, i % 2 ? "COMPLETED" : "FAILED")),
        );
        await Promise.all(txs.filter((t: any) => t.quote_id && t.status === "PROCESSING").map((t: any, i: number) => h.outcome(platformId, t.id, i % 2 ? "COMPLETED" : "FAILED", "USER_CANCELLED")));
        txs = await checkInvariants(platformId);
        await Promise.all(txs.filter((t: any) => t.refund_status === "PENDING").map((t: any, i: number) => h.outcome(platformId, t.id, i % 3 ? "REFUND_COMPLETED" : "REFUND_FAILED")));
        txs = await checkInvariants(platformId);
        expect(txs.filter((t: any) => t.status === "PROCESSING" || t.refund_status === "PENDING")).toEqual([]);
        // Late and repeated outcomes on settled quotes change nothing (RETURNED is left out: a
        // completed payment may legitimately come back).
        for (const status of ["REFUND_COMPLETED", "REFUND_FAILED", "FAILED", "COMPLETED", "PROCESSING"]) {
          await Promise.all(txs.filter((t: any) => t.quote_id).map((t: any) => h.outcome(platformId, t.id, status, "USER_CANCELLED")));
        }
        const settled = await checkInvariants(platformId);
        expect(settled.map((t: any) => [t.id, t.status, t.refund_status])).toEqual(txs.map((t: any) => [t.id, t.status, t.refund_status]));
        const held = await h.db.forSchema<any>(service.schema).selectFrom("accounts").select("held").where("platform_id", "=", platformId).where("held", "<>", 0n).execute();
        expect(held).toEqual([]);
      }),
      { numRuns: Number(process.env.LEDGER_PROPERTY_RUNS ?? 25) },
    );
  }, 180_000);
});
