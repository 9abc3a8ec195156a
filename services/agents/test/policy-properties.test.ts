import { ConnectError } from "@connectrpc/connect";
import { PublicErrorSchema, type PublicError } from "@corridor/proto/corridor/common/v1/error_pb.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_PERMISSIONS, expectUsageMatchesLiveActions, startHarness, usageLedger, type Harness } from "./harness.js";

// Issue 29: every limit of a policy binds on its own. Policies with any subset of limits, rules,
// allowed accounts and thresholds; sequences of concurrent transfer-in, transfer-out and quote
// execution submissions, approvals and rejections, across days; against a real database
// (a fresh Postgres database on DATABASE_URL, as CI runs it, with a pool wide enough for the
// submissions to overlap). The oracle below is written from docs/agents.md, not from the code.

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ poolSize: 8 });
});
afterAll(async () => {
  await h?.close();
});

type Mode = "AUTO" | "APPROVAL_REQUIRED";
const WINDOW_LIMITS = ["dailyTransactionLimit", "dailyLimit", "monthlyLimit"] as const;

interface GenRule {
  /** Index into the world's accounts: 0, 1 internal USD; 2, 3 external USD; 4 external EUR (quote destination). */
  account: number;
  executionMode: "" | Mode;
  perTransactionLimit: bigint;
}

interface GenPolicy {
  defaultExecutionMode: Mode;
  spendingLimits: { perTransactionLimit: bigint; dailyLimit: bigint; dailyTransactionLimit: bigint; monthlyLimit: bigint } | null;
  /** Indices of the internal accounts allowed; null: no restriction. */
  allowed: number[] | null;
  rules: GenRule[];
  threshold: bigint | null;
}

type Submit = { kind: "OUT" | "IN"; internal: number; external: number; amount: bigint } | { kind: "QUOTE"; internal: number; amount: bigint };
type Op = Submit | { kind: "APPROVE" | "REJECT"; pick: number };
const isSubmit = (o: Op): o is Submit => o.kind !== "APPROVE" && o.kind !== "REJECT";
/** What the tests read of an answered action. */
type Answer = Promise<{ action?: { id: string; status: string; failureReason: string; failureMessage: string } }>;

interface PWorld {
  platformId: string;
  customerId: string;
  agentId: string;
  accounts: string[];
}

/* ---------- generators ---------- */

const noneOr = (max: bigint) => fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max }));
const mode = fc.constantFrom<Mode>("AUTO", "APPROVAL_REQUIRED");

const genPolicy = (defaultExecutionMode: fc.Arbitrary<Mode> = mode): fc.Arbitrary<GenPolicy> =>
  fc.record({
    defaultExecutionMode,
    spendingLimits: fc.option(
      fc.record({ perTransactionLimit: noneOr(4_000n), dailyLimit: noneOr(12_000n), dailyTransactionLimit: noneOr(6n), monthlyLimit: noneOr(20_000n) }),
      { nil: null },
    ),
    allowed: fc.option(fc.subarray([0, 1]), { nil: null }),
    rules: fc.uniqueArray(fc.record({ account: fc.integer({ min: 0, max: 4 }), executionMode: fc.constantFrom<"" | Mode>("", "AUTO", "APPROVAL_REQUIRED"), perTransactionLimit: noneOr(4_000n) }), {
      selector: (r) => r.account,
      maxLength: 4,
    }),
    threshold: fc.option(fc.bigInt({ min: 0n, max: 4_000n }), { nil: null }),
  });

const amount = fc.bigInt({ min: 1n, max: 5_000n });
const side = fc.integer({ min: 0, max: 1 });
const submission: fc.Arbitrary<Submit> = fc.oneof(
  fc.record({ kind: fc.constantFrom<"OUT" | "IN">("OUT", "IN"), internal: side, external: side, amount }),
  fc.record({ kind: fc.constant<"QUOTE">("QUOTE"), internal: side, amount }),
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: submission, weight: 4 },
  { arbitrary: fc.record({ kind: fc.constantFrom<"APPROVE" | "REJECT">("APPROVE", "REJECT"), pick: fc.nat() }), weight: 2 },
);

/* ---------- the world and the calls ---------- */

function policyInit(p: GenPolicy, accounts: string[]) {
  return {
    permissions: ALL_PERMISSIONS,
    defaultExecutionMode: p.defaultExecutionMode,
    ...(p.spendingLimits ? { spendingLimits: { currency: "USD", ...p.spendingLimits } } : {}),
    accountRestrictions: {
      hasAllowedAccountIds: p.allowed !== null,
      allowedAccountIds: (p.allowed ?? []).map((i) => accounts[i]!),
      accountRules: p.rules.map((r) => ({ accountId: accounts[r.account]!, executionMode: r.executionMode, perTransactionLimit: r.perTransactionLimit })),
    },
    ...(p.threshold !== null ? { approvalThresholds: { currency: "USD", amount: p.threshold } } : {}),
  };
}

/** PATCH replacing every field of the policy (spendingLimits cannot be removed by a patch: all zeros means none). */
function patchTo(p: GenPolicy, accounts: string[]) {
  const l = p.spendingLimits ?? { perTransactionLimit: 0n, dailyLimit: 0n, dailyTransactionLimit: 0n, monthlyLimit: 0n };
  return {
    defaultExecutionMode: p.defaultExecutionMode,
    spendingLimits: { currency: "USD", ...l },
    ...(p.allowed ? { allowedAccountIds: { values: p.allowed.map((i) => accounts[i]!) } } : { clearAllowedAccountIds: true }),
    accountRules: { values: p.rules.map((r) => ({ accountId: accounts[r.account]!, executionMode: r.executionMode, perTransactionLimit: r.perTransactionLimit })) },
    ...(p.threshold !== null ? { approvalThresholds: { currency: "USD", amount: p.threshold } } : { clearApprovalThresholds: true }),
  };
}

async function policyWorld(p: GenPolicy): Promise<PWorld> {
  const platformId = h.newPlatform();
  const customerId = h.newCustomer(platformId);
  const accounts = [
    h.newAccount(platformId, customerId, "INTERNAL"),
    h.newAccount(platformId, customerId, "INTERNAL"),
    h.newAccount(platformId, customerId, "EXTERNAL"),
    h.newAccount(platformId, customerId, "EXTERNAL"),
    h.newAccount(platformId, customerId, "EXTERNAL", "EUR"),
  ];
  const res = await h.client.createAgent({ platformId, customerId, name: "prop", policy: policyInit(p, accounts) });
  return { platformId, customerId, agentId: res.agent!.id, accounts };
}

/** The accounts a submission uses, as docs/agents.md lists them (internal first). */
function accountsOf(w: PWorld, o: Submit): { internal: string; all: string[] } {
  const internal = w.accounts[o.internal]!;
  if (o.kind === "QUOTE") return { internal, all: [internal, w.accounts[4]!] };
  return { internal, all: [internal, w.accounts[2 + o.external]!] };
}

function submit(w: PWorld, o: Submit): Answer {
  const { internal } = accountsOf(w, o);
  if (o.kind === "QUOTE") {
    const quote = h.newQuote(w.platformId, w.agentId, w.customerId, { sourceAccountId: internal, destinationAccountId: w.accounts[4]!, totalSendingAmount: o.amount });
    return h.client.submitQuoteExecution({ platformId: w.platformId, agentId: w.agentId, quoteId: quote.id });
  }
  const external = w.accounts[2 + o.external]!;
  return h.client.submitTransfer({
    platformId: w.platformId,
    agentId: w.agentId,
    direction: o.kind,
    sourceAccountId: o.kind === "OUT" ? internal : external,
    destinationAccountId: o.kind === "OUT" ? external : internal,
    amount: o.amount,
  });
}

type Result<T> = { ok: T } | { refused: PublicError };

/** A call's answer or its public refusal; anything else (an internal failure) fails the test. */
async function outcome<T>(call: Promise<T>): Promise<Result<T>> {
  try {
    return { ok: await call };
  } catch (err) {
    const [detail] = ConnectError.from(err).findDetails(PublicErrorSchema);
    if (!detail) throw err;
    return { refused: detail };
  }
}

/* ---------- the oracle (docs/agents.md "How each limit binds") ---------- */

/** The per-transaction limits that bind an action of `amount` (USD) using `accounts`, with their values. */
function perTransactionLimits(p: GenPolicy, w: PWorld, all: string[]): bigint[] {
  const limits: bigint[] = [];
  if (p.spendingLimits && p.spendingLimits.perTransactionLimit > 0n) limits.push(p.spendingLimits.perTransactionLimit);
  for (const r of p.rules) if (r.perTransactionLimit > 0n && all.includes(w.accounts[r.account]!)) limits.push(r.perTransactionLimit);
  return limits;
}

const isAllowed = (p: GenPolicy, w: PWorld, internal: string) => p.allowed === null || p.allowed.some((i) => w.accounts[i] === internal);

function expectedMode(p: GenPolicy, w: PWorld, all: string[], amount: bigint): Mode {
  if (p.threshold !== null && amount > p.threshold) return "APPROVAL_REQUIRED";
  const ruled = p.rules.filter((r) => r.executionMode !== "" && all.includes(w.accounts[r.account]!)).map((r) => r.executionMode);
  if (ruled.length === 0) return p.defaultExecutionMode;
  return ruled.includes("APPROVAL_REQUIRED") ? "APPROVAL_REQUIRED" : "AUTO";
}

/**
 * Usage equals the live reservations, and each window's live reservations stay within the window
 * limits (only `windows` when given). `countedInFull` lists actions evaluated under spendingLimits
 * (all USD here): each reserved its whole amount.
 */
async function expectDatabaseWithin(w: PWorld, p: GenPolicy, amounts: Map<string, { amount: bigint }>, countedInFull: (id: string) => boolean, windows?: Set<string>) {
  const { usage, live } = await usageLedger(h, w);
  for (const a of live) if (countedInFull(a.id)) expect(a.counted_amount).toBe(amounts.get(a.id)!.amount);
  expectUsageMatchesLiveActions(usage, live);
  const l = p.spendingLimits;
  if (l) {
    const sums = new Map<string, { count: bigint; amount: bigint }>();
    for (const a of live) {
      for (const k of [`DAY/${a.day_key}`, `MONTH/${a.month_key}`]) {
        const s = sums.get(k) ?? { count: 0n, amount: 0n };
        s.count += 1n;
        s.amount += a.counted_amount;
        sums.set(k, s);
      }
    }
    for (const [k, s] of sums) {
      if (windows && !windows.has(k)) continue;
      if (k.startsWith("DAY/")) {
        if (l.dailyTransactionLimit > 0n) expect(s.count <= l.dailyTransactionLimit, `${k} count ${s.count} > ${l.dailyTransactionLimit}`).toBe(true);
        if (l.dailyLimit > 0n) expect(s.amount <= l.dailyLimit, `${k} sum ${s.amount} > ${l.dailyLimit}`).toBe(true);
      } else if (l.monthlyLimit > 0n) {
        expect(s.amount <= l.monthlyLimit, `${k} sum ${s.amount} > ${l.monthlyLimit}`).toBe(true);
      }
    }
  }
  return live;
}

/** Checks one submission's answer against the policy; answers the action when one was recorded. */
function expectSubmissionObeys(p: GenPolicy, w: PWorld, o: Submit, r: Result<{ action?: { id: string; status: string } }>) {
  const { internal, all } = accountsOf(w, o);
  const what = `${o.kind} ${o.amount} via ${all.join(",")}`;
  if (!isAllowed(p, w, internal)) {
    expect("refused" in r && r.refused.code, what).toBe("ACCOUNT_NOT_ALLOWED");
    return undefined;
  }
  const perTx = perTransactionLimits(p, w, all);
  if (perTx.some((limit) => o.amount > limit)) {
    expect("refused" in r && r.refused.code, what).toBe("SPENDING_LIMIT_EXCEEDED");
    expect("refused" in r && r.refused.details?.limit, what).toBe("perTransactionLimit");
    return undefined;
  }
  if ("refused" in r) {
    // Only a window limit the policy sets may refuse an action within every per-transaction limit.
    expect(r.refused.code, `${what}: ${r.refused.message}`).toBe("SPENDING_LIMIT_EXCEEDED");
    const limit = r.refused.details?.limit as (typeof WINDOW_LIMITS)[number];
    expect(WINDOW_LIMITS, what).toContain(limit);
    expect(p.spendingLimits?.[limit] ?? 0n, what).toBeGreaterThan(0n);
    return undefined;
  }
  const action = r.ok.action!;
  expect(action.status, what).toBe(expectedMode(p, w, all, o.amount) === "AUTO" ? "APPROVED" : "PENDING_APPROVAL");
  return action;
}

async function actionRows(w: PWorld): Promise<number> {
  return Number((await h.client.listAgentActions({ platformId: w.platformId, agentId: w.agentId })).pageInfo!.totalCount);
}

/* ---------- the properties ---------- */

describe("every limit of a policy binds on its own", () => {
  it("under any policy, concurrent submissions, approvals and rejections across days: per-transaction limits, allowed accounts, window sums and counts hold; modes and thresholds decide PENDING_APPROVAL; refusals record nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        genPolicy(),
        fc.array(fc.record({ advanceHours: fc.constantFrom(0, 0, 13), ops: fc.array(op, { minLength: 1, maxLength: 8 }) }), { minLength: 1, maxLength: 4 }),
        async (p, batches) => {
          const w = await policyWorld(p);
          const facts = new Map<string, { amount: bigint; internal: string; all: string[] }>();
          let recorded = 0;
          for (const batch of batches) {
            h.clock.advance(batch.advanceHours * 3_600_000);
            const pending = (await usageLedger(h, w)).live.filter((a) => a.status === "PENDING_APPROVAL").map((a) => a.id);
            const results = await Promise.all(
              batch.ops.map(async (o) => {
                if (!isSubmit(o)) {
                  if (pending.length === 0) return;
                  const actionId = pending[o.pick % pending.length]!;
                  const call: Answer = o.kind === "APPROVE" ? h.client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId }) : h.client.rejectAction({ platformId: w.platformId, agentId: w.agentId, actionId });
                  const r = await outcome(call);
                  if ("refused" in r) {
                    // Two ops of a batch may pick the same action: the second finds it decided.
                    expect(r.refused.code).toBe("INVALID_STATE_TRANSITION");
                    return;
                  }
                  const status = r.ok.action!.status;
                  // The policy did not change, so what passed at submission still passes (a quote may have expired meanwhile).
                  if (o.kind === "REJECT") expect(status).toBe("REJECTED");
                  else if (status === "FAILED") expect(r.ok.action!.failureReason).toBe("QUOTE_EXPIRED");
                  else expect(status).toBe("APPROVED");
                  return;
                }
                const r = await outcome(submit(w, o));
                const action = expectSubmissionObeys(p, w, o, r);
                if (action) {
                  recorded++;
                  const { internal, all } = accountsOf(w, o);
                  facts.set(action.id, { amount: o.amount, internal, all });
                }
              }),
            );
            expect(results).toHaveLength(batch.ops.length);
            const live = await expectDatabaseWithin(w, p, facts, () => p.spendingLimits !== null);
            for (const a of live) {
              const f = facts.get(a.id)!;
              expect(perTransactionLimits(p, w, f.all).every((limit) => f.amount <= limit)).toBe(true);
              expect(isAllowed(p, w, f.internal)).toBe(true);
            }
            // Refused submissions recorded no action (and, above, reserved nothing).
            expect(await actionRows(w)).toBe(recorded);
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it("approval evaluates a pending action under the policy as it is then: one approved never passes a limit of that policy, even with concurrent approvals and submissions", async () => {
    await fc.assert(
      fc.asyncProperty(
        genPolicy(fc.constant<Mode>("APPROVAL_REQUIRED")),
        genPolicy(),
        fc.array(submission, { minLength: 1, maxLength: 8 }),
        fc.array(submission, { maxLength: 3 }),
        async (p1, p2, before, during) => {
          const w = await policyWorld(p1);
          const facts = new Map<string, { amount: bigint; internal: string; all: string[] }>();
          for (const o of before) {
            const r = await outcome(submit(w, o));
            if ("ok" in r) facts.set(r.ok.action!.id, { amount: o.amount, ...accountsOf(w, o) });
          }
          const pending = (await usageLedger(h, w)).live.filter((a) => a.status === "PENDING_APPROVAL");
          await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: patchTo(p2, w.accounts) });

          const [approvals, submissions] = await Promise.all([
            Promise.all(pending.map((a) => h.client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId: a.id }))),
            Promise.all(during.map((o) => outcome(submit(w, o)).then((r) => ({ o, r })))),
          ]);
          // After the patch the policy always has spendingLimits (all zeros when p2 has none): the same limits.
          const effective: GenPolicy = { ...p2, spendingLimits: p2.spendingLimits ?? { perTransactionLimit: 0n, dailyLimit: 0n, dailyTransactionLimit: 0n, monthlyLimit: 0n } };
          for (const { o, r } of submissions) {
            const action = expectSubmissionObeys(effective, w, o, r);
            if (action) facts.set(action.id, { amount: o.amount, ...accountsOf(w, o) });
          }
          const approvedWindows = new Set<string>();
          const evaluatedUnderP2 = new Set(submissions.flatMap(({ r }) => ("ok" in r ? [r.ok.action!.id] : [])));
          for (const { action } of approvals) {
            const f = facts.get(action!.id)!;
            const violates = !isAllowed(p2, w, f.internal) || perTransactionLimits(p2, w, f.all).some((limit) => f.amount > limit);
            if (action!.status === "APPROVED") {
              expect(violates, `approved ${f.amount} via ${f.all.join(",")}`).toBe(false);
              const row = pending.find((a) => a.id === action!.id)!;
              approvedWindows.add(`DAY/${row.day_key}`).add(`MONTH/${row.month_key}`);
              evaluatedUnderP2.add(row.id);
            } else {
              expect(action).toMatchObject({ status: "FAILED", failureReason: "POLICY_DENIED" });
              // Denied within every per-transaction limit and allowed account: only a window limit can say no.
              if (!violates) expect(action!.failureMessage).toMatch(/dailyTransactionLimit|dailyLimit|monthlyLimit/);
            }
          }
          // The windows of every approved action are within the new policy's limits (usage matches the live reservations).
          await expectDatabaseWithin(w, effective, facts, (id) => evaluatedUnderP2.has(id) || p1.spendingLimits !== null, approvedWindows);
        },
      ),
      { numRuns: 25 },
    );
  });
});
