import { AppError, ManualClock } from "@corridor/kit";
import type { PollingWorker } from "@corridor/kit";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { approvalTimeoutWorker } from "../src/workers/approval-timeout.js";
import { createIncomingPayments, type ApprovalReply, type ApprovalStore, type AwaitingApproval, type Decision, type IncomingPorts } from "../src/domain/incoming.js";

type Tx = { id: string; status: string; failureReason?: string };

/** Fakes of the ledger, customers-kyc, notifications and the sandbox clock; an in-memory approval store. */
function world(opts: { onAwaiting?: () => void } = {}) {
  const txs = new Map<string, Tx>();
  const decisions: { id: string; d: Decision }[] = [];
  const state = { reply: "APPROVED" as ApprovalReply | "THROW" | "CRASH", sandboxOffsetMs: 0, asked: 0, n: 0 };
  const asked: string[][] = [];
  const created: { customerId: string; receiverUmaAddress: string }[] = [];
  const clock = new ManualClock(new Date("2026-01-01T00:00:00Z"));
  const ports: IncomingPorts<Tx> = {
    async customerByUma(_p, uma) {
      return uma === "$alice@sandbox.uma.money" ? { id: "Customer:alice" } : undefined;
    },
    async customerById(_p, id) {
      return id === "Customer:alice" ? { id, umaAddress: "$alice@sandbox.uma.money" } : undefined;
    },
    async createIncoming(i) {
      created.push({ customerId: i.customerId, receiverUmaAddress: i.receiverUmaAddress });
      if (i.idempotencyKey && txs.has(`key:${i.idempotencyKey}`)) return { tx: txs.get(txs.get(`key:${i.idempotencyKey}`)!.id)!, replayed: true };
      const tx = { id: `Transaction:${++state.n}`, status: "PENDING" };
      txs.set(tx.id, tx);
      if (i.idempotencyKey) txs.set(`key:${i.idempotencyKey}`, tx);
      return { tx: { ...tx }, replayed: false };
    },
    async resolve(_p, id, d) {
      decisions.push({ id, d });
      const tx = txs.get(id)!;
      if (tx.status !== "PENDING") return { tx: { ...tx }, changed: false };
      tx.status = d.kind === "APPROVE" ? "COMPLETED" : d.kind === "REJECT" ? "REJECTED" : "FAILED";
      if (d.kind === "FAIL") tx.failureReason = d.failureReason;
      return { tx: { ...tx }, changed: true };
    },
    async getTransaction(_p, id) {
      return { ...txs.get(id)! };
    },
    async requestApproval(_p, _tx, fields) {
      asked.push(fields);
      state.asked++;
      if (state.reply === "THROW") throw new Error("notifications unreachable");
      // The process died while the webhook was in flight: no reply is ever handled.
      if (state.reply === "CRASH") return new Promise<never>(() => {});
      return { reply: state.reply, ...(state.reply === "APPROVED" ? { receiverCustomerInfo: { FULL_NAME: "Alice" } } : {}) };
    },
    async sandboxNow() {
      return new Date(clock.now().getTime() + state.sandboxOffsetMs);
    },
  };
  const rows = new Map<string, AwaitingApproval & { done: boolean }>();
  const store: ApprovalStore = {
    async awaiting(p, id) {
      const r = rows.get(id);
      return r && !r.done && r.platformId === p ? r : undefined;
    },
    async add(a) {
      const r = rows.get(a.transactionId);
      if (!r) rows.set(a.transactionId, { ...a, done: false });
      else if (!r.done && r.deadline === null) Object.assign(r, { deadline: a.deadline, requestedFields: a.requestedFields });
    },
    async acknowledge(p, id, deadline) {
      const r = rows.get(id);
      if (r && !r.done && r.platformId === p) Object.assign(r, { acknowledged: true, deadline });
    },
    async done(_p, id) {
      rows.get(id)!.done = true;
    },
    async allAwaiting() {
      return [...rows.values()].filter((r) => !r.done);
    },
  };
  const requested = { fields: [] as string[], incoming: true };
  const incoming = createIncomingPayments({
    ports,
    store,
    clock,
    windowMs: 5_000,
    receivingCurrency: async () => ({ requestedFields: requested.fields, incomingEnabled: requested.incoming }),
    onAwaiting: opts.onAwaiting,
  });
  return { incoming, txs, decisions, state, clock, rows, ports, store, requested, asked, created };
}

const receive = (w: ReturnType<typeof world>, idempotencyKey = "") =>
  w.incoming.receive({ platformId: "Platform:p", senderUmaAddress: "$bob@x.example", receiverUmaAddress: "$alice@sandbox.uma.money", currency: "USD", amount: 100n, idempotencyKey });

async function appError(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error("expected an AppError");
}

describe("incoming UMA payments: the approval exchange", () => {
  let w: ReturnType<typeof world>;
  beforeEach(() => {
    w = world();
  });

  it("APPROVED (200) and NO_ENDPOINT approve at once, passing the receiverCustomerInfo of the reply", async () => {
    expect((await receive(w)).tx.status).toBe("COMPLETED");
    expect(w.decisions[0]!.d).toEqual({ kind: "APPROVE", receiverCustomerInfo: { FULL_NAME: "Alice" } });
    w.state.reply = "NO_ENDPOINT";
    expect((await receive(w)).tx.status).toBe("COMPLETED");
  });

  it("ERROR, and notifications being unreachable, fail with PAYMENT_APPROVAL_WEBHOOK_ERROR", async () => {
    w.state.reply = "ERROR";
    expect((await receive(w)).tx).toMatchObject({ status: "FAILED", failureReason: "PAYMENT_APPROVAL_WEBHOOK_ERROR" });
    w.state.reply = "THROW";
    expect((await receive(w)).tx).toMatchObject({ status: "FAILED", failureReason: "PAYMENT_APPROVAL_WEBHOOK_ERROR" });
  });

  it("ACKNOWLEDGED (202) leaves it PENDING with a deadline 5 s ahead on the platform's sandbox clock", async () => {
    w.state.reply = "ACKNOWLEDGED";
    w.state.sandboxOffsetMs = 3_600_000;
    const { tx } = await receive(w);
    expect(tx.status).toBe("PENDING");
    expect(w.rows.get(tx.id)!.deadline!.getTime()).toBe(w.clock.now().getTime() + 3_600_000 + 5_000);
    expect(w.decisions).toHaveLength(0);
  });

  it("approve and reject within the window decide it once; a second decision → 409 TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL", async () => {
    w.state.reply = "ACKNOWLEDGED";
    const a = (await receive(w)).tx;
    expect((await w.incoming.approve("Platform:p", a.id, { FULL_NAME: "A" })).status).toBe("COMPLETED");
    const again = await appError(w.incoming.approve("Platform:p", a.id));
    expect([again.outcome, again.code, again.shouldNotRetry]).toEqual(["CONFLICT", "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL", true]);
    const b = (await receive(w)).tx;
    expect((await w.incoming.reject("Platform:p", b.id, "no")).status).toBe("REJECTED");
    expect(w.decisions.at(-1)!.d).toEqual({ kind: "REJECT", reason: "no" });
    expect((await appError(w.incoming.reject("Platform:p", b.id, "no"))).outcome).toBe("CONFLICT");
  });

  it("the worker fails it PAYMENT_APPROVAL_TIMED_OUT once the sandbox clock passes the deadline, not before", async () => {
    w.state.reply = "ACKNOWLEDGED";
    const { tx } = await receive(w);
    w.clock.advance(4_999);
    expect(await w.incoming.expireDue()).toEqual({ expired: 0, failed: 0, waiting: 1 });
    expect(w.txs.get(tx.id)!.status).toBe("PENDING");
    w.state.sandboxOffsetMs = 1; // a sandbox clock advance counts
    expect(await w.incoming.expireDue()).toEqual({ expired: 1, failed: 0, waiting: 0 });
    expect(w.txs.get(tx.id)).toMatchObject({ status: "FAILED", failureReason: "PAYMENT_APPROVAL_TIMED_OUT" });
    expect(await w.incoming.expireDue()).toEqual({ expired: 0, failed: 0, waiting: 0 });
  });

  it("an approval arriving after the deadline but before the worker times the payment out and answers 409", async () => {
    w.state.reply = "ACKNOWLEDGED";
    const { tx } = await receive(w);
    w.clock.advance(5_000);
    const err = await appError(w.incoming.approve("Platform:p", tx.id));
    expect([err.outcome, err.details.status]).toEqual(["CONFLICT", "FAILED"]);
    expect(w.txs.get(tx.id)!.failureReason).toBe("PAYMENT_APPROVAL_TIMED_OUT");
  });

  it("an unknown receiver → 404 UMA_NOT_FOUND; a replayed Idempotency-Key runs no second exchange", async () => {
    const err = await appError(w.incoming.receive({ platformId: "Platform:p", senderUmaAddress: "$b@x", receiverUmaAddress: "$nobody@x", currency: "USD", amount: 1n, idempotencyKey: "" }));
    expect([err.outcome, err.code]).toEqual(["NOT_FOUND", "UMA_NOT_FOUND"]);
    const first = await receive(w, "k");
    const second = await receive(w, "k");
    expect(second).toEqual({ tx: first.tx, replayed: true });
    expect(w.state.asked).toBe(1);
  });

  describe("requested receiver fields (the platform's providerRequiredCustomerFields for the currency)", () => {
    beforeEach(() => {
      w.requested.fields = ["FULL_NAME", "BIRTH_DATE"];
    });

    it("are asked in the webhook; a 200 carrying them approves, one lacking any fails PAYMENT_APPROVAL_WEBHOOK_ERROR", async () => {
      w.state.reply = "APPROVED"; // the fake's reply carries FULL_NAME only
      const { tx } = await receive(w);
      expect(w.asked.at(-1)).toEqual(["FULL_NAME", "BIRTH_DATE"]);
      expect(tx).toMatchObject({ status: "FAILED", failureReason: "PAYMENT_APPROVAL_WEBHOOK_ERROR" });
      expect(w.decisions.at(-1)!.d).toMatchObject({ kind: "FAIL", detail: expect.stringContaining("BIRTH_DATE") });
      w.requested.fields = ["FULL_NAME"];
      expect((await receive(w)).tx.status).toBe("COMPLETED");
    });

    it("an approval through the API must carry each of them: 400 naming the missing ones, nothing decided; then it approves", async () => {
      w.state.reply = "ACKNOWLEDGED";
      const { tx } = await receive(w);
      expect(w.rows.get(tx.id)!.requestedFields).toEqual(["FULL_NAME", "BIRTH_DATE"]);
      const err = await appError(w.incoming.approve("Platform:p", tx.id, { FULL_NAME: "Alice", BIRTH_DATE: " " }));
      expect([err.outcome, err.code]).toEqual(["INVALID", "MISSING_MANDATORY_USER_INFO"]);
      expect((err.details.errors as { field: string }[]).map((e) => e.field)).toEqual(["receiverCustomerInfo.BIRTH_DATE"]);
      expect(w.txs.get(tx.id)!.status).toBe("PENDING");
      expect(w.decisions).toHaveLength(0);
      expect((await w.incoming.approve("Platform:p", tx.id, { FULL_NAME: "Alice", BIRTH_DATE: "1990-01-01" })).status).toBe("COMPLETED");
    });

    it("INCOMING not enabled for the currency: 400 TRANSACTION_TYPE_NOT_ENABLED before anything is created or asked", async () => {
      w.requested.incoming = false;
      const err = await appError(receive(w));
      expect([err.outcome, err.code]).toEqual(["INVALID", "TRANSACTION_TYPE_NOT_ENABLED"]);
      expect(w.txs.size).toBe(0);
      expect(w.state.asked).toBe(0);
    });

    it("a reject needs none of them", async () => {
      w.state.reply = "ACKNOWLEDGED";
      const { tx } = await receive(w);
      expect((await w.incoming.reject("Platform:p", tx.id, "no")).status).toBe("REJECTED");
    });
  });

  describe("crash safety: the approval row is recorded before notifications is called", () => {
    it("dying after the ledger created the payment and before any reply: the row (unacknowledged, deadline = sandbox now + webhook timeout + window) was already recorded; the worker fails it PAYMENT_APPROVAL_WEBHOOK_ERROR after timeout + window", async () => {
      w.state.reply = "CRASH";
      void receive(w); // never settles: the service "died" awaiting the reply
      await new Promise((r) => setImmediate(r));
      const [row] = [...w.rows.values()];
      expect(row).toMatchObject({ acknowledged: false, done: false });
      expect(row!.deadline!.getTime()).toBe(w.clock.now().getTime() + 10_000 + 5_000);
      w.clock.advance(14_999);
      expect(await w.incoming.expireDue()).toEqual({ expired: 0, failed: 0, waiting: 1 });
      expect(w.txs.get(row!.transactionId)!.status).toBe("PENDING");
      w.clock.advance(1);
      expect(await w.incoming.expireDue()).toEqual({ expired: 1, failed: 0, waiting: 0 });
      expect(w.txs.get(row!.transactionId)).toMatchObject({ status: "FAILED", failureReason: "PAYMENT_APPROVAL_WEBHOOK_ERROR" });
    });

    it("dying between the ledger's answer and the row: the row the ledger's event recorded (no deadline) gets one on the worker's next pass, and the payment fails PAYMENT_APPROVAL_WEBHOOK_ERROR after timeout + window", async () => {
      w.state.sandboxOffsetMs = 60_000;
      // The request died right after createIncoming: only the consumer of INCOMING_PAYMENT_PENDING recorded a row.
      const created = await w.ports.createIncoming({ platformId: "Platform:p", customerId: "Customer:alice", senderUmaAddress: "$bob@x.example", receiverUmaAddress: "$alice@sandbox.uma.money", currency: "USD", amount: 100n, idempotencyKey: "" });
      await w.store.add({ platformId: "Platform:p", transactionId: created.tx.id, deadline: null, acknowledged: false, requestedFields: [] }, w.clock.now());
      expect(await w.incoming.expireDue()).toEqual({ expired: 0, failed: 0, waiting: 1 });
      expect(w.rows.get(created.tx.id)!.deadline!.getTime()).toBe(w.clock.now().getTime() + 60_000 + 10_000 + 5_000);
      w.clock.advance(14_999);
      expect(await w.incoming.expireDue()).toEqual({ expired: 0, failed: 0, waiting: 1 });
      w.clock.advance(1);
      expect(await w.incoming.expireDue()).toEqual({ expired: 1, failed: 0, waiting: 0 });
      expect(w.txs.get(created.tx.id)).toMatchObject({ status: "FAILED", failureReason: "PAYMENT_APPROVAL_WEBHOOK_ERROR" });
      expect(w.state.asked).toBe(0);
    });

    it("after a 202 the row is acknowledged and times out as PAYMENT_APPROVAL_TIMED_OUT; an immediate decision closes the row", async () => {
      w.state.reply = "ACKNOWLEDGED";
      const a = (await receive(w)).tx;
      expect(w.rows.get(a.id)).toMatchObject({ acknowledged: true, done: false });
      w.state.reply = "APPROVED";
      const b = (await receive(w)).tx;
      expect(w.rows.get(b.id)).toMatchObject({ acknowledged: false, done: true });
      w.clock.advance(5_000);
      expect(await w.incoming.expireDue()).toEqual({ expired: 1, failed: 0, waiting: 0 });
      expect(w.txs.get(a.id)!.failureReason).toBe("PAYMENT_APPROVAL_TIMED_OUT");
      expect(w.txs.get(b.id)!.status).toBe("COMPLETED");
    });

    it("a replay of a PENDING payment whose first request died before recording its row records one (once); replays stay idempotent", async () => {
      w.state.reply = "ACKNOWLEDGED";
      const first = await receive(w, "k-crash");
      w.rows.clear(); // as if the first request died between the ledger call and the row
      const replay = await receive(w, "k-crash");
      expect(replay).toEqual({ tx: first.tx, replayed: true });
      expect(w.rows.get(first.tx.id)).toMatchObject({ acknowledged: false, done: false });
      const deadline = w.rows.get(first.tx.id)!.deadline;
      w.clock.advance(1_000);
      await receive(w, "k-crash");
      expect(w.rows.get(first.tx.id)!.deadline).toEqual(deadline);
      expect(w.state.asked).toBe(1);
      w.clock.advance(14_000);
      await w.incoming.expireDue();
      expect(w.txs.get(first.tx.id)).toMatchObject({ status: "FAILED", failureReason: "PAYMENT_APPROVAL_WEBHOOK_ERROR" });
    });
  });
});

describe("sandbox UMA receive addressed by customerId (issue 10)", () => {
  const base = { platformId: "Platform:p", senderUmaAddress: "$bob@x.example", currency: "USD", amount: 100n, idempotencyKey: "" };

  it("pays the customer named by id, with its UMA address as the receiver", async () => {
    const w = world();
    const r = await w.incoming.receive({ ...base, receiverUmaAddress: "", customerId: "Customer:alice" });
    expect(r.tx.status).toBe("COMPLETED");
    expect(w.created).toEqual([{ customerId: "Customer:alice", receiverUmaAddress: "$alice@sandbox.uma.money" }]);
  });

  it("404s an unknown customer, refuses an address that is not the customer's, and needs one of the two", async () => {
    const w = world();
    expect((await appError(w.incoming.receive({ ...base, receiverUmaAddress: "", customerId: "Customer:nobody" }))).outcome).toBe("NOT_FOUND");
    const mismatch = await appError(w.incoming.receive({ ...base, receiverUmaAddress: "$carol@sandbox.uma.money", customerId: "Customer:alice" }));
    expect(mismatch.code).toBe("INVALID_INPUT");
    expect(JSON.stringify(mismatch.details)).toContain("receiverUmaAddress");
    const neither = await appError(w.incoming.receive({ ...base, receiverUmaAddress: "" }));
    expect(neither.code).toBe("INVALID_INPUT");
    expect(w.created).toEqual([]);
  });
});

describe("the approval-timeout worker", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("rests while nothing awaits, is woken by a payment this process records, and watches it every pollMs until it is decided", async () => {
    let worker: PollingWorker | undefined;
    const w = world({ onAwaiting: () => worker?.wake() });
    let passes = 0;
    const counted = {
      expireDue: async (limit?: number) => {
        passes++;
        return w.incoming.expireDue(limit);
      },
    };
    worker = approvalTimeoutWorker(counted, { warn() {}, debug() {} }, { pollMs: 500, idlePollMs: 10_000 });
    worker.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(9_000);
    expect(passes).toBe(1); // nothing awaits: no pass every 500 ms
    w.state.reply = "ACKNOWLEDGED";
    const { tx } = await receive(w);
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(2); // the row it recorded woke the worker
    await vi.advanceTimersByTimeAsync(500);
    expect(passes).toBe(3); // and it looks every 500 ms while the payment awaits
    w.clock.advance(5_000);
    await vi.advanceTimersByTimeAsync(500);
    expect(w.txs.get(tx.id)).toMatchObject({ status: "FAILED", failureReason: "PAYMENT_APPROVAL_TIMED_OUT" });
    const settled = passes;
    await vi.advanceTimersByTimeAsync(9_000);
    expect(passes).toBe(settled); // decided: resting again
    await vi.advanceTimersByTimeAsync(1_000);
    expect(passes).toBe(settled + 1); // the rest ends after idlePollMs even when nothing wakes it
    await worker.stop();
  });
});
