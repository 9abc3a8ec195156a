import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId, sql } from "@corridor/kit";
import { seededRandom } from "@corridor/kit/testing";
import { RailOutcomeSchema, type RailOutcome } from "@corridor/proto/corridor/ledger/v1/rails_pb.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { transitionFor, type RailStatus, type TransactionType } from "../src/domain/transactions.js";
import type { Ledger } from "../src/domain/ledger.js";
import { ledgerConsumers } from "../src/events/consumers.js";
import { service } from "../src/server.js";
import { balanceSums, quoteTransactionInput, quoteWorld, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

/**
 * Issue 28 item 2: rail outcomes of a fetched batch are applied together, their accounts locked up
 * front in one order. Two appliers (two ledger replicas) deliver random batches of outcomes —
 * PROCESSING before COMPLETED of one transaction in one batch, returns, late and repeated outcomes,
 * outcomes from a connector the transaction was not routed to, duplicates within a batch, a batch
 * delivered again, and "ghost" batches: a copy of the other applier's batch in flight, stretched
 * over its next outcomes, as a partition handed over between replicas redelivers it — while
 * transfer-outs of the same accounts run beside them. On PostgreSQL the appliers really run at
 * once (on PGlite, one session, they interleave). Asserted: no batch fails (a deadlock would fail
 * one: the harness's deliverMany has no one-by-one fallback), each outcome is recorded once and
 * applied once in its transaction's order (each transaction's events are exactly those of its
 * outcomes folded in order), every balance and hold is what the outcomes make of it, the postings
 * and holds tables agree with the accounts, and each platform's balances sum to zero.
 */

type Direction = "OUT" | "IN";
interface Tx {
  id: string;
  platformId: string;
  account: string;
  direction: Direction;
  amount: bigint;
  outcomes: RailOutcome[];
}

const OUT_SEQUENCES: RailStatus[][] = [
  ["PROCESSING", "COMPLETED"],
  ["COMPLETED"],
  ["PROCESSING", "FAILED"],
  ["REJECTED"],
  ["PROCESSING", "COMPLETED", "RETURNED"],
  ["COMPLETED", "RETURNED"],
  ["PROCESSING"],
  ["RETURNED"],
  ["COMPLETED", "FAILED"],
  ["PROCESSING", "PROCESSING", "COMPLETED", "COMPLETED"],
  [],
];
const IN_SEQUENCES: RailStatus[][] = [["PROCESSING", "COMPLETED"], ["COMPLETED"], ["COMPLETED", "RETURNED"], ["FAILED"], ["PROCESSING"], []];
const FUNDED = 100_000n;

describe("rail outcomes applied in batches by two appliers beside transfer-outs", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  async function world() {
    const platforms: { platformId: string; accounts: { id: string; ext: string; customerId: string }[] }[] = [];
    for (let p = 0; p < 2; p++) {
      const platformId = await h.newPlatform();
      const accounts: { id: string; ext: string; customerId: string }[] = [];
      const own = (await h.ledger.listInternalAccounts({ platformId, owner: "PLATFORM", currency: "USD" })).accounts[0]!;
      accounts.push({ id: own.id, ext: (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo("100200300") })).account!.id, customerId: "" });
      for (let c = 0; c < 2; c++) {
        const customerId = await h.newCustomer(platformId);
        const account = (await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId, currency: "USD" })).accounts.find((a) => a.type === "INTERNAL_FIAT")!;
        const ext = (await h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "USD", accountInfo: usdInfo(`50060070${c}`) })).account!.id;
        accounts.push({ id: account.id, ext, customerId });
      }
      for (const a of accounts) await h.ledger.fundInternalAccount({ platformId, accountId: a.id, amount: FUNDED });
      platforms.push({ platformId, accounts });
    }
    return platforms;
  }

  const message = (platformId: string, transactionId: string, status: string, reason = "") =>
    create(RailOutcomeSchema, { eventId: newId("Event"), occurredAt: timestampFromDate(h.clock.now()), platformId, transactionId, status, reason });

  it("applies quote payouts' outcomes (a refund, an execution failure) in a batch with a transfer's, with the accounts locked up front", async () => {
    const w = await quoteWorld(h, { fund: 5000n });
    const execute = async () => {
      const created = (await h.ledger.createQuoteTransaction(quoteTransactionInput(h, w, { quoteId: newId("Quote") }))).transaction!;
      return (await h.ledger.executeQuoteTransaction({ platformId: w.platformId, transactionId: created.id })).transaction!.id;
    };
    const q1 = await execute();
    const q2 = await execute();
    const ext = (await h.ledger.createExternalAccount({ platformId: w.platformId, owner: "CUSTOMER", customerId: w.customerId, currency: "USD", accountInfo: usdInfo() })).account!.id;
    const t = (await h.ledger.transferOut({ transfer: { platformId: w.platformId, sourceAccountId: w.usd.id, destinationAccountId: ext, amount: 700n, idempotencyKey: "quote-batch", customerId: w.customerId } })).result!.transaction!.id;
    await h.deliverMany("rail-outcomes", [
      message(w.platformId, q1, "FAILED", "COUNTERPARTY_DELIVERY_FAILED"),
      message(w.platformId, t, "PROCESSING"),
      message(w.platformId, q1, "REFUND_COMPLETED"),
      message(w.platformId, q2, "FAILED", "EXECUTION_FAILED"),
      message(w.platformId, t, "COMPLETED"),
    ]);
    const get = async (id: string) => (await h.ledger.getTransaction({ platformId: w.platformId, transactionId: id })).transaction!;
    expect(await get(q1)).toMatchObject({ status: "FAILED", refund: { status: "COMPLETED" } });
    expect(await get(q2)).toMatchObject({ status: "FAILED", failureReason: "QUOTE_EXECUTION_FAILED" });
    expect((await get(t)).status).toBe("COMPLETED");
    const usd = (await h.ledger.listInternalAccounts({ platformId: w.platformId, owner: "CUSTOMER", customerId: w.customerId, currency: "USD" })).accounts.find((a) => a.id === w.usd.id)!;
    // Both quotes' 1,000 back with the payer; the transfer's 700 gone.
    expect({ balance: usd.balance, available: usd.available }).toEqual({ balance: 4300n, available: 4300n });
    for (const [, sum] of await balanceSums(h.db, w.platformId)) expect(sum).toBe(0n);
  });

  it("hands a batch with an outcome that names no transaction back to be applied one by one (nothing of it applied), which then goes through", async () => {
    const [p] = await world();
    const a = p!.accounts[1]!;
    const t = (await h.ledger.transferOut({ transfer: { platformId: p!.platformId, sourceAccountId: a.id, destinationAccountId: a.ext, amount: 300n, idempotencyKey: "unknown-batch", customerId: a.customerId } })).result!.transaction!.id;
    const batch = [message(p!.platformId, t, "COMPLETED"), message(p!.platformId, newId("Transaction"), "COMPLETED")];
    await expect(h.deliverMany("rail-outcomes", batch)).rejects.toMatchObject({ name: "OutcomeBatchOrderError" });
    expect((await h.ledger.getTransaction({ platformId: p!.platformId, transactionId: t })).transaction!.status).toBe("PENDING");
    for (const m of batch) await h.deliver("rail-outcomes", m);
    expect((await h.ledger.getTransaction({ platformId: p!.platformId, transactionId: t })).transaction!.status).toBe("COMPLETED");
  });

  for (const seed of [11, 12, 13]) {
    it(`seed ${seed}: every outcome once, in order, balances and holds as the outcomes make them, no batch failing`, async () => {
      const random = seededRandom(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
      const platforms = await world();
      const outcome = (tx: { id: string; platformId: string }, status: string, connector = "") =>
        create(RailOutcomeSchema, { eventId: newId("Event"), occurredAt: timestampFromDate(h.clock.now()), platformId: tx.platformId, transactionId: tx.id, status, reason: "", connector });

      // The transfers the outcomes are about.
      const txs: Tx[] = [];
      for (let i = 0; i < 30; i++) {
        const p = pick(platforms);
        const a = pick(p.accounts);
        const direction: Direction = random() < 0.7 ? "OUT" : "IN";
        const amount = BigInt(1 + Math.floor(random() * 3000));
        const transfer = {
          platformId: p.platformId,
          sourceAccountId: direction === "OUT" ? a.id : a.ext,
          destinationAccountId: direction === "OUT" ? a.ext : a.id,
          amount,
          idempotencyKey: `seed-${seed}-${i}`,
          customerId: a.customerId,
        };
        const res = direction === "OUT" ? await h.ledger.transferOut({ transfer }) : await h.ledger.transferIn({ transfer });
        const id = res.result!.transaction!.id;
        const tx: Tx = { id, platformId: p.platformId, account: a.id, direction, amount, outcomes: [] };
        for (const status of pick(direction === "OUT" ? OUT_SEQUENCES : IN_SEQUENCES)) {
          // Now and then a connector the transaction was not routed to speaks first: ignored.
          if (random() < 0.1) tx.outcomes.push(outcome(tx, pick(["COMPLETED", "FAILED", "RETURNED"]), "lead-bank"));
          tx.outcomes.push(outcome(tx, status));
        }
        txs.push(tx);
      }

      // Two streams (partitions), each its transactions' outcomes merged in a random order that
      // keeps each transaction's own order.
      const streams: RailOutcome[][] = [[], []];
      const queues = txs.map((tx) => ({ stream: random() < 0.5 ? 0 : 1, rest: [...tx.outcomes] }));
      for (;;) {
        const open = queues.filter((q) => q.rest.length > 0);
        if (open.length === 0) break;
        const q = pick(open);
        streams[q.stream]!.push(q.rest.shift()!);
      }

      const failures: unknown[] = [];
      const delivered = new Set<string>();
      const deliver = async (batch: RailOutcome[]) => {
        try {
          await h.deliverMany("rail-outcomes", batch);
          for (const m of batch) delivered.add(m.eventId);
        } catch (err) {
          failures.push(err);
        }
      };
      // Each loop its own generator: the batches do not depend on how the loops interleave.
      const applier = async (mine: number) => {
        const random = seededRandom(seed * 10 + mine + 1);
        const stream = streams[mine]!;
        const ghosts: Promise<void>[] = [];
        let at = 0;
        let previous: RailOutcome[] | undefined;
        while (at < stream.length) {
          const size = 1 + Math.floor(random() * 6);
          const batch = stream.slice(at, at + size);
          // A duplicate within the batch now and then (a producer's retry: after the original).
          if (random() < 0.15) {
            const i = Math.floor(random() * batch.length);
            batch.splice(i + 1 + Math.floor(random() * (batch.length - i)), 0, batch[i]!);
          }
          at += size;
          // The other replica takes this partition over while the batch is in flight: it delivers
          // the same batch and the outcomes after it, at the same time.
          if (random() < 0.25) ghosts.push(deliver([...batch, ...stream.slice(at, at + Math.floor(random() * 3))]));
          await deliver(batch);
          // A batch delivered again (its offsets not committed before a restart).
          if (previous && random() < 0.2) await deliver(previous);
          previous = batch;
        }
        await Promise.all(ghosts);
      };
      // Transfer-outs of the same accounts beside the appliers: they hold money and lock the
      // accounts the outcomes settle.
      const beside: { account: string; amount: bigint }[] = [];
      const transfersBeside = async () => {
        const random = seededRandom(seed * 10 + 3);
        const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
        for (let i = 0; i < 12; i++) {
          const p = pick(platforms);
          const a = pick(p.accounts);
          const amount = BigInt(1 + Math.floor(random() * 500));
          try {
            await h.ledger.transferOut({ transfer: { platformId: p.platformId, sourceAccountId: a.id, destinationAccountId: a.ext, amount, idempotencyKey: `seed-${seed}-beside-${i}`, customerId: a.customerId } });
            beside.push({ account: a.id, amount });
          } catch (err) {
            failures.push(err);
          }
        }
      };
      await Promise.all([applier(0), applier(1), transfersBeside()]);
      expect(failures).toEqual([]);

      // Every outcome recorded once in the inbox.
      const all = txs.flatMap((tx) => tx.outcomes.map((o) => o.eventId));
      expect(delivered.size).toBe(new Set(all).size);
      const inbox = (await h.db
        .forSchema<any>(service.schema)
        .selectFrom("inbox")
        .select(sql<string>`count(*)`.as("n"))
        .where("consumer", "=", "rail-outcomes")
        .where("event_id", "in", all)
        .executeTakeFirstOrThrow()) as { n: string };
      expect(Number(inbox.n)).toBe(all.length);

      // The model: each transaction's outcomes folded in order, as one applier alone would.
      const expectedBalance = new Map<string, bigint>();
      const expectedHeld = new Map<string, bigint>();
      const add = (m: Map<string, bigint>, k: string, v: bigint) => m.set(k, (m.get(k) ?? 0n) + v);
      const events = await h.ledgerEvents();
      for (const tx of txs) {
        const type: TransactionType = tx.direction === "OUT" ? "OUTGOING" : "INCOMING";
        let status = "PENDING";
        const types = [tx.direction === "OUT" ? "OUTGOING_PAYMENT_PENDING" : "INCOMING_PAYMENT_PENDING"];
        let held = tx.direction === "OUT";
        for (const o of tx.outcomes) {
          if (o.connector) continue;
          const t = transitionFor(type, status, o.status as RailStatus, o.reason);
          if (!t) continue;
          status = t.to;
          if (t.eventType) types.push(t.eventType);
          if (t.money === "capture-hold") {
            add(expectedBalance, tx.account, -tx.amount);
            held = false;
          } else if (t.money === "release-hold") held = false;
          else if (t.money === "reverse-payout") add(expectedBalance, tx.account, tx.amount);
          else if (t.money === "credit") add(expectedBalance, tx.account, tx.amount);
          // Funded far above what is taken: a returned pull is taken from the account whole.
          else if (t.money === "reverse-pull") add(expectedBalance, tx.account, -tx.amount);
        }
        if (held) add(expectedHeld, tx.account, tx.amount);
        const got = (await h.ledger.getTransaction({ platformId: tx.platformId, transactionId: tx.id })).transaction!;
        expect(got.status, `${tx.id} after ${tx.outcomes.map((o) => o.status + (o.connector ? "@" + o.connector : "")).join(",")}`).toBe(status);
        const emitted = events.filter((e) => e.payload.case === "transactionChanged" && e.payload.value.transaction!.id === tx.id).map((e) => e.eventType);
        expect(emitted, tx.id).toEqual(types);
      }
      for (const b of beside) add(expectedHeld, b.account, b.amount);

      const db = h.db.forSchema<any>(service.schema);
      for (const p of platforms) {
        for (const a of p.accounts) {
          const row = (await db.selectFrom("accounts").select(["balance", "held"]).where("id", "=", a.id).executeTakeFirstOrThrow()) as { balance: bigint; held: bigint };
          expect({ balance: row.balance, held: row.held }, a.id).toEqual({ balance: FUNDED + (expectedBalance.get(a.id) ?? 0n), held: expectedHeld.get(a.id) ?? 0n });
        }
        // The postings and the holds agree with every account; the platform's money sums to zero.
        const postings = (await db
          .selectFrom("accounts")
          .leftJoin("postings", "postings.account_id", "accounts.id")
          .select(["accounts.id", "accounts.balance", sql<string>`coalesce(sum(postings.amount), 0)`.as("posted")])
          .where("accounts.platform_id", "=", p.platformId)
          .groupBy(["accounts.id", "accounts.balance"])
          .execute()) as { id: string; balance: bigint; posted: string }[];
        for (const r of postings) expect(BigInt(r.posted), r.id).toBe(BigInt(r.balance));
        const holds = (await db
          .selectFrom("accounts")
          .leftJoin("holds", (j: any) => j.onRef("holds.account_id", "=", "accounts.id").on("holds.status", "=", "ACTIVE"))
          .select(["accounts.id", "accounts.held", sql<string>`coalesce(sum(holds.amount), 0)`.as("active")])
          .where("accounts.platform_id", "=", p.platformId)
          .groupBy(["accounts.id", "accounts.held"])
          .execute()) as { id: string; held: bigint; active: string }[];
        for (const r of holds) expect(BigInt(r.active), r.id).toBe(BigInt(r.held));
        expect((await balanceSums(h.db, p.platformId)).get("USD")).toBe(0n);
      }
    }, 120_000);
  }
});

describe("the rail-outcomes consumer", () => {
  it("hands a batch's outcomes to the ledger together, and logs the ones from a connector the transaction was not routed to", async () => {
    const applyRailOutcomes = vi.fn(async (_trx: unknown, os: readonly { transactionId: string }[]) => os.map((o) => (o.transactionId === "Transaction:b" ? ("not-addressed" as const) : ("applied" as const))));
    const log = { error: vi.fn(), warn: vi.fn() };
    const def = ledgerConsumers({ applyRailOutcomes } as unknown as Ledger, log).find((c) => c.name === "rail-outcomes")!;
    expect(def.batch).toBe(true);
    const m = (transactionId: string, status: string) => create(RailOutcomeSchema, { eventId: `Event:${transactionId}`, platformId: "Platform:p", transactionId, status, connector: "lead-bank" });
    await def.handleMany!([m("Transaction:a", "COMPLETED"), m("Transaction:b", "FAILED"), m("Transaction:c", "NOT_A_STATUS")], {} as never);
    expect(applyRailOutcomes).toHaveBeenCalledTimes(1);
    expect(applyRailOutcomes.mock.calls[0]![1].map((o) => o.transactionId)).toEqual(["Transaction:a", "Transaction:b"]);
    expect(log.error).toHaveBeenCalledTimes(1);
    expect(log.error.mock.calls[0]![0]).toMatchObject({ event_id: "Event:Transaction:b", transaction_id: "Transaction:b", connector: "lead-bank" });
    // One alone goes the same way.
    await def.handle(m("Transaction:b", "COMPLETED"), {} as never);
    expect(log.error).toHaveBeenCalledTimes(2);
  });
});
