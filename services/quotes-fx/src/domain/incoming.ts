import { AppError, errors, type Clock } from "@corridor/kit";

/**
 * Incoming UMA payments and the platform approval exchange (decisions §8). The ledger holds the
 * transaction (PENDING until decided, then COMPLETED, REJECTED or FAILED), notifications posts
 * INCOMING_PAYMENT_PENDING and classifies the reply; this module decides what follows and owns the
 * approval window of a 202. No call here runs inside a DB transaction.
 */

/** The transaction as the ledger answers it; opaque here apart from id and status. */
export interface TxLike {
  id: string;
  status: string;
}

export type ApprovalReply = "APPROVED" | "ACKNOWLEDGED" | "ERROR" | "NO_ENDPOINT";
export type Decision = { kind: "APPROVE"; receiverCustomerInfo?: Record<string, unknown> } | { kind: "REJECT"; reason: string } | { kind: "FAIL"; failureReason: string; detail: string };

export const WEBHOOK_ERROR = "PAYMENT_APPROVAL_WEBHOOK_ERROR";
export const TIMED_OUT = "PAYMENT_APPROVAL_TIMED_OUT";

export interface IncomingPorts<T extends TxLike> {
  /** The platform's customer with this UMA address (not deleted), or undefined. */
  customerByUma(platformId: string, umaAddress: string): Promise<{ id: string } | undefined>;
  /** The platform's customer with this id (not deleted) and its UMA address ("" when it has none), or undefined. */
  customerById(platformId: string, customerId: string): Promise<{ id: string; umaAddress: string } | undefined>;
  createIncoming(i: { platformId: string; customerId: string; senderUmaAddress: string; receiverUmaAddress: string; currency: string; amount: bigint; idempotencyKey: string }): Promise<{ tx: T; replayed: boolean }>;
  resolve(platformId: string, transactionId: string, d: Decision): Promise<{ tx: T; changed: boolean }>;
  getTransaction(platformId: string, transactionId: string): Promise<T>;
  /** Posts INCOMING_PAYMENT_PENDING and answers the reply class (throws only when notifications is unreachable). */
  requestApproval(platformId: string, tx: T, requestedFields: string[]): Promise<{ reply: ApprovalReply; receiverCustomerInfo?: Record<string, unknown> }>;
  /** The platform's sandbox clock (real time + its offset): the approval window runs on it. */
  sandboxNow(platformId: string): Promise<Date>;
}

export interface AwaitingApproval {
  transactionId: string;
  platformId: string;
  /**
   * When the worker fails the payment, on the platform's sandbox clock. Null for a row recorded from
   * the ledger's INCOMING_PAYMENT_PENDING event (no RPC may run inside that consumer's
   * transaction, so it cannot read the sandbox clock): the request path or the worker fills it in.
   */
  deadline: Date | null;
  /** True once the platform answered 202; before that the row only guards against a lost exchange. */
  acknowledged: boolean;
  /**
   * Receiver fields asked for in the INCOMING_PAYMENT_PENDING webhook
   * (requestedReceiverCustomerInfoFields): an approval must carry each of them.
   */
  requestedFields: string[];
}

export interface ApprovalStore {
  awaiting(platformId: string, transactionId: string): Promise<AwaitingApproval | undefined>;
  /**
   * Inserts the row unless one exists for the transaction. An existing row only gains the deadline
   * when it had none; anything else about it stays as it is.
   */
  add(a: AwaitingApproval, now: Date): Promise<void>;
  /** The platform answered 202: the row becomes acknowledged with the approval window's deadline. */
  acknowledge(platformId: string, transactionId: string, deadline: Date, now: Date): Promise<void>;
  done(platformId: string, transactionId: string, now: Date): Promise<void>;
  allAwaiting(limit: number): Promise<AwaitingApproval[]>;
}

export function notAwaitingApproval(tx: TxLike): AppError {
  return new AppError("CONFLICT", "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL", `The transaction is not awaiting approval (status ${tx.status})`, { transactionId: tx.id, status: tx.status }, { shouldNotRetry: true });
}

export function createIncomingPayments<T extends TxLike>(deps: {
  ports: IncomingPorts<T>;
  store: ApprovalStore;
  clock: Clock;
  windowMs: number;
  /**
   * How long notifications may wait for the webhook's reply (its NOTIFICATIONS_WEBHOOK_TIMEOUT_MS):
   * the row recorded before the exchange gives it that long plus the window.
   */
  webhookTimeoutMs?: number;
  log?: { warn(obj: object, msg: string): void };
  /**
   * The platform's configuration of the receiving currency: the receiver fields to ask for (its
   * providerRequiredCustomerFields) and whether INCOMING is enabled (a 400 before anything is
   * created when not). Absent currency: nothing asked, nothing refused.
   */
  receivingCurrency?: (platformId: string, currency: string) => Promise<{ requestedFields: string[]; incomingEnabled: boolean }>;
  /** Called once a payment's approval row (with its deadline) is committed: wakes the timeout worker. */
  onAwaiting?: () => void;
}) {
  const { ports, store, clock } = deps;
  const webhookTimeoutMs = deps.webhookTimeoutMs ?? 10_000;

  /**
   * Records the approval row (unacknowledged) before the exchange starts, so a crash of this
   * service mid-exchange still ends in FAILED: the worker fails it when the deadline passes.
   */
  async function guard(platformId: string, transactionId: string, requestedFields: string[]) {
    const deadline = new Date((await ports.sandboxNow(platformId)).getTime() + webhookTimeoutMs + deps.windowMs);
    await store.add({ transactionId, platformId, deadline, acknowledged: false, requestedFields }, clock.now());
    // Committed: the approval-timeout worker, resting while nothing awaited, starts watching it.
    deps.onAwaiting?.();
  }

  /** The requested fields an approval's receiverCustomerInfo lacks (absent, null or empty). */
  function missingFields(requested: string[], info: Record<string, unknown> | undefined): string[] {
    return requested.filter((f) => {
      const v = info?.[f];
      return v === undefined || v === null || (typeof v === "string" && v.trim() === "");
    });
  }

  async function failTimedOut(a: AwaitingApproval) {
    const r = await ports.resolve(
      a.platformId,
      a.transactionId,
      a.acknowledged
        ? { kind: "FAIL", failureReason: TIMED_OUT, detail: "no approval within the approval window" }
        : { kind: "FAIL", failureReason: WEBHOOK_ERROR, detail: "no reply to the approval webhook was recorded before the deadline" },
    );
    await store.done(a.platformId, a.transactionId, clock.now());
    return r;
  }

  /** Expires the approval when its window has passed on the sandbox clock; true when it did. */
  async function expireIfDue(a: AwaitingApproval | undefined): Promise<boolean> {
    if (!a || !a.deadline) return false;
    if ((await ports.sandboxNow(a.platformId)) < a.deadline) return false;
    await failTimedOut(a);
    return true;
  }

  async function decide(platformId: string, transactionId: string, d: Decision): Promise<T> {
    if (!transactionId) throw errors.invalidInput([{ field: "transactionId", reason: "is required" }]);
    const awaiting = await store.awaiting(platformId, transactionId);
    if (await expireIfDue(awaiting)) throw notAwaitingApproval(await ports.getTransaction(platformId, transactionId));
    if (awaiting && d.kind === "APPROVE") {
      const missing = missingFields(awaiting.requestedFields, d.receiverCustomerInfo);
      if (missing.length) {
        const { message, details } = errors.invalidInput(missing.map((f) => ({ field: `receiverCustomerInfo.${f}`, reason: "was requested in requestedReceiverCustomerInfoFields and is required to approve" })));
        throw new AppError("INVALID", "MISSING_MANDATORY_USER_INFO", message, details);
      }
    }
    const r = await ports.resolve(platformId, transactionId, d);
    if (awaiting) await store.done(platformId, transactionId, clock.now());
    if (!r.changed) throw notAwaitingApproval(r.tx);
    return r.tx;
  }

  return {
    /** POST /sandbox/uma/receive: the PENDING transaction, then the exchange; answers the transaction after it. */
    async receive(i: {
      platformId: string;
      senderUmaAddress: string;
      receiverUmaAddress: string;
      /** The receiver by id (Grid's alternative to receiverUmaAddress); "" when addressed by UMA. */
      customerId?: string;
      currency: string;
      amount: bigint;
      idempotencyKey: string;
    }): Promise<{ tx: T; replayed: boolean }> {
      const missing = [];
      if (!i.senderUmaAddress) missing.push({ field: "senderUmaAddress", reason: "is required" });
      if (!i.receiverUmaAddress && !i.customerId) missing.push({ field: "receiverUmaAddress", reason: "is required (or customerId)" });
      if (!i.currency) missing.push({ field: "receivingCurrencyCode", reason: "is required" });
      if (missing.length) throw errors.invalidInput(missing);
      let customer: { id: string } | undefined;
      let receiverUmaAddress = i.receiverUmaAddress;
      if (i.customerId) {
        const byId = await ports.customerById(i.platformId, i.customerId);
        if (!byId) throw errors.notFound("Customer", i.customerId);
        if (i.receiverUmaAddress && i.receiverUmaAddress !== byId.umaAddress) {
          throw errors.invalidInput([{ field: "receiverUmaAddress", reason: `is not the UMA address of customer ${i.customerId}` }]);
        }
        customer = byId;
        receiverUmaAddress = byId.umaAddress;
      } else {
        customer = await ports.customerByUma(i.platformId, i.receiverUmaAddress);
        if (!customer) {
          throw new AppError("NOT_FOUND", "UMA_NOT_FOUND", `No customer of this platform has the UMA address ${i.receiverUmaAddress}`, { receiverUmaAddress: i.receiverUmaAddress });
        }
      }
      const receiving = deps.receivingCurrency ? await deps.receivingCurrency(i.platformId, i.currency) : { requestedFields: [], incomingEnabled: true };
      if (!receiving.incomingEnabled) {
        throw new AppError(
          "INVALID",
          "TRANSACTION_TYPE_NOT_ENABLED",
          `INCOMING payments in ${i.currency} are not enabled in the platform's configuration (supportedCurrencies[].enabledTransactionTypes)`,
          { currency: i.currency, transactionType: "INCOMING" },
        );
      }
      const requestedFields = receiving.requestedFields;
      const created = await ports.createIncoming({ ...i, receiverUmaAddress, customerId: customer.id });
      // A replay answers the payment as it stands now; the exchange ran (or runs) for the first request only.
      if (created.replayed) {
        const now = await ports.getTransaction(i.platformId, created.tx.id);
        // The first request may have died before recording its row: a PENDING payment gets one
        // (a no-op when it exists), so it cannot stay PENDING forever.
        if (now.status === "PENDING") await guard(i.platformId, now.id, requestedFields);
        return { tx: now, replayed: true };
      }
      const tx = created.tx;
      await guard(i.platformId, tx.id, requestedFields);
      let answer: Awaited<ReturnType<IncomingPorts<T>["requestApproval"]>>;
      try {
        answer = await ports.requestApproval(i.platformId, tx, requestedFields);
      } catch (err) {
        deps.log?.warn({ err, transactionId: tx.id }, "approval request could not be sent");
        answer = { reply: "ERROR" };
      }
      if (answer.reply === "ACKNOWLEDGED") {
        const deadline = new Date((await ports.sandboxNow(i.platformId)).getTime() + deps.windowMs);
        await store.acknowledge(i.platformId, tx.id, deadline, clock.now());
        return { tx: await ports.getTransaction(i.platformId, tx.id), replayed: false };
      }
      // A 200 must carry every requested field, as an approval through the API must.
      const lacking = answer.reply === "APPROVED" ? missingFields(requestedFields, answer.receiverCustomerInfo) : [];
      const decision: Decision =
        answer.reply === "ERROR"
          ? { kind: "FAIL", failureReason: WEBHOOK_ERROR, detail: "the approval webhook failed or answered neither 200 nor 202" }
          : lacking.length
            ? { kind: "FAIL", failureReason: WEBHOOK_ERROR, detail: `the approval webhook answered 200 without the requested receiverCustomerInfo fields ${lacking.join(", ")}` }
            : { kind: "APPROVE", receiverCustomerInfo: answer.receiverCustomerInfo };
      // Not changed: the platform decided through the API while its webhook call was still open.
      const r = await ports.resolve(i.platformId, tx.id, decision);
      await store.done(i.platformId, tx.id, clock.now());
      return { tx: r.tx, replayed: false };
    },

    approve: (platformId: string, transactionId: string, receiverCustomerInfo?: Record<string, unknown>) =>
      decide(platformId, transactionId, { kind: "APPROVE", receiverCustomerInfo }),

    reject: (platformId: string, transactionId: string, reason: string) => decide(platformId, transactionId, { kind: "REJECT", reason }),

    /**
     * The approval-timeout worker's pass: payments whose deadline passed → FAILED (TIMED_OUT after a
     * 202, WEBHOOK_ERROR when no reply was recorded); rows still without a deadline get one.
     */
    async expireDue(limit = 100): Promise<{ expired: number; failed: number; waiting: number }> {
      const nowByPlatform = new Map<string, Date>();
      let expired = 0;
      let failed = 0;
      const awaiting = await store.allAwaiting(limit);
      for (const a of awaiting) {
        try {
          // Recorded from the ledger's event with no request to finish the exchange (this service
          // died between the ledger's answer and its own row): the deadline starts now.
          if (!a.deadline) {
            await guard(a.platformId, a.transactionId, a.requestedFields);
            continue;
          }
          let now = nowByPlatform.get(a.platformId);
          if (!now) nowByPlatform.set(a.platformId, (now = await ports.sandboxNow(a.platformId)));
          if (now < a.deadline) continue;
          await failTimedOut(a);
          expired++;
        } catch (err) {
          failed++;
          deps.log?.warn({ err, transactionId: a.transactionId }, "could not time out an incoming payment (retried next tick)");
        }
      }
      // Still awaiting after this pass (a guard row given its deadline just now included).
      return { expired, failed, waiting: awaiting.length - expired };
    },
  };
}

export type IncomingPayments<T extends TxLike = TxLike> = ReturnType<typeof createIncomingPayments<T>>;
