import { createClient } from "@connectrpc/connect";
import { SERVICE_NAMES, createServiceTransport, type ServiceName } from "@corridor/kit";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { CarefulClient, WebhookReceiver, type Observation } from "../chaos/client.js";
import { acknowledgedTransactions, cycle, expectedUsdBalance, type Acknowledged, type ChaosCustomer, type Refusal } from "../chaos/workload.js";
import type { startSplitSystem } from "../infra/split-system.js";
import { iban } from "../support/bank-ids.js";
import { until } from "../support/until.js";

// Issue 28's conservation run with replicas, shared by the suite (test/replicas/kill-conserve.test.ts,
// a short run inside `npm test`) and the long documented run (test/replicas/conserve-run.ts,
// `npm run conserve:replicas`, 20,000 operations by default). The chaos suite's money workload
// runs against a split system with two processes of every service; once a given number of writes
// has been acknowledged, one replica of every service is killed with SIGKILL at once, and the
// workload carries on through the survivors while the launcher restarts the killed. Then the books
// are read back: every acknowledged write kept and final, announced by webhook once per state,
// each customer's balance exactly what its acknowledged writes imply, the trial balance exact.

type SplitSystem = Awaited<ReturnType<typeof startSplitSystem>>;

/** Money writes one workload cycle makes: fund, transfer-out, transfer-in, quote, execute. */
export const WRITES_PER_CYCLE = 5;

export interface ConservationOptions {
  customers: number;
  cyclesPerCustomer: number;
  /** Kill one replica of every service once this many writes were acknowledged. */
  killAfterAcknowledged: number;
  /** How long the final checks may wait for every transaction to be final and announced. */
  settleTimeoutMs: number;
  /** Progress lines (the long run prints them). */
  progress?: (line: string) => void;
  /**
   * How long a write is retried under its key before the client gives up (default the careful
   * client's 90 s). The long run waits longer, as an integrator's queue would: a database out of
   * connections answers 503 and 409 IDEMPOTENCY_KEY_IN_USE for as long as it lasts.
   */
  clientDeadlineMs?: number;
}

export interface ConservationReport {
  customers: number;
  cycles: number;
  /** Money writes sent (each under one Idempotency-Key, however many tries it took). */
  operations: number;
  acknowledged: number;
  refused: Refusal[];
  /** Answers 500 (never expected: a 500 is recorded even when a retry then succeeded). */
  answers500: string[];
  /** HTTP attempts in all (retries included) and how many got no answer (connection refused/reset, timeout). */
  attempts: number;
  attemptsWithoutAnswer: number;
  killed: string[];
  acknowledgedAtKill: number;
  /** Writes acknowledged after the kill, while the killed replicas were down or restarting. */
  acknowledgedAfterKill: number;
  /** The transactions the acknowledged writes created (transfers and executed quotes). */
  transactions: number;
  /** Seconds from the first write to the last answer, and from then to the books settling. */
  workloadSeconds: number;
  settleSeconds: number;
  /** Each kind of money write's attempts (path with ids elided): count, p50, p99 and max in ms. */
  latency: Record<string, { attempts: number; p50: number; p99: number; max: number }>;
  webhooks: number;
  unverifiedWebhooks: number;
  /** Everything that broke a guarantee; empty when the run conserved. */
  problems: string[];
}

/** A sandbox platform on the system, its webhook endpoint the receiver, and its customers with accounts. */
export async function setUpConservation(system: SplitSystem, receiver: WebhookReceiver, customerCount: number) {
  const hookUrl = await receiver.start();
  const admin = createClient(PlatformAdminService, createServiceTransport({ baseUrl: system.info.serviceUrls["auth-sessions"] }));
  const created = await admin.createPlatform({ name: "replicas", environment: Environment.SANDBOX, isRegulatedFinancialInstitution: false });
  const platformId = created.platform!.id;
  const client = CarefulClient.basic(`${system.info.url}/2025-10-13`, created.token!.clientId, created.clientSecret);
  const expectOk = (what: string, res: { status: number; body: any }, status: number) => {
    if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  };

  const base = (await client.call("GET", "/config")).body.supportedCurrencies[0];
  const supportedCurrencies = ["USD", "EUR"].map((currencyCode) => ({ ...base, currencyCode }));
  expectOk("PATCH /config", await client.call("PATCH", "/config", { supportedCurrencies, webhookEndpoint: hookUrl }), 200);
  receiver.useSecret((await client.call("GET", "/config/webhook-secret")).body.secret);
  await until("the webhook endpoint is in use", 30_000, async () => (await client.call("POST", "/sandbox/webhooks/test")).body?.response_status === 200);

  const customers: ChaosCustomer[] = [];
  // A few at a time: the set-up is not what the run measures.
  for (let from = 0; from < customerCount; from += 8) {
    const batch = Array.from({ length: Math.min(8, customerCount - from) }, (_, k) => from + k);
    await Promise.all(
      batch.map(async (i) => {
        const made = await client.call("POST", "/customers", {
          customerType: "INDIVIDUAL",
          platformCustomerId: `replicas-${i}`,
          fullName: "Ada Lovelace",
          birthDate: "1990-04-01",
          nationality: "US",
          address: { line1: "1 Main St", postalCode: "94105", country: "US", city: "San Francisco" },
          region: "US",
          email: `replicas-${i}@example.com`,
        });
        expectOk(`customer ${i}`, made, 201);
        const id: string = made.body.id;
        if (made.body.kycStatus !== "APPROVED") {
          const verified = await client.call("POST", "/verifications", { customerId: id });
          if (verified.status >= 300) throw new Error(`verification of customer ${i}: ${verified.status} ${JSON.stringify(verified.body)}`);
        }
        let usd = "";
        await until(`customer ${i}'s USD account`, 30_000, async () => {
          const res = await client.call("GET", `/customers/internal-accounts?customerId=${id}`);
          usd = (res.body?.data ?? []).find((a: any) => a.type === "INTERNAL_FIAT" && a.balance.currency.code === "USD")?.id ?? "";
          return usd !== "";
        });
        const digits = String(i).padStart(4, "0");
        const bank = await client.call("POST", "/customers/external-accounts", {
          customerId: id,
          currency: "USD",
          accountInfo: {
            accountType: "USD_ACCOUNT",
            // Suffix 000: the sandbox completes transfers to it.
            accountNumber: `8812${digits}000`,
            routingNumber: "021000021",
            bankAccountType: "CHECKING",
            bankName: "Test Bank",
            beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace" },
          },
        });
        expectOk(`customer ${i}'s bank account`, bank, 201);
        const payee = await client.call("POST", "/customers/external-accounts", {
          customerId: id,
          currency: "EUR",
          accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", `37040044053${digits}000`) },
        });
        expectOk(`customer ${i}'s payee`, payee, 201);
        customers.push({ id, usd, bank: bank.body.id, payee: payee.body.id });
      }),
    );
  }
  return { client, platformId, customers };
}

/**
 * Runs the workload (each customer its cycles one after another, the customers at once), kills one
 * replica of every service mid-run, and reads the books back. Never throws for a broken guarantee:
 * the report lists it in `problems`.
 */
export async function runConservation(
  system: SplitSystem,
  receiver: WebhookReceiver,
  setUp: Awaited<ReturnType<typeof setUpConservation>>,
  opts: ConservationOptions,
): Promise<ConservationReport> {
  const { platformId, customers } = setUp;
  const client = opts.clientDeadlineMs ? setUp.client.withOptions({ deadlineMs: opts.clientDeadlineMs, attemptTimeoutMs: 15_000 }) : setUp.client;
  const acked: Acknowledged[] = [];
  const refused: Refusal[] = [];
  const problems: string[] = [];
  const say = opts.progress ?? (() => {});
  const attemptsBefore = client.observations.length;
  let sent = 0;
  // Writes acknowledged: each entry of `acked` is one, and an executed quote's execute one more.
  let executions = 0;
  const acknowledged = () => acked.length + executions;

  const started = Date.now();
  const traffic = Promise.all(
    customers.map(async (c) => {
      for (let n = 0; n < opts.cyclesPerCustomer; n++) {
        const before = acked.length;
        await cycle(client, c, acked, refused);
        executions += acked.slice(before).filter((a) => a.customer === c.id && a.kind === "quote" && a.executed).length;
        sent += WRITES_PER_CYCLE;
      }
    }),
  );
  let refusalsSaid = 0;
  const ticker = setInterval(() => {
    say(`${acknowledged()} writes acknowledged, ${refused.length} refused, ${((Date.now() - started) / 1000).toFixed(0)} s`);
    for (; refusalsSaid < refused.length; refusalsSaid++) say(`refused: ${JSON.stringify(refused[refusalsSaid])}`);
  }, 15_000);
  let killed: { name: `${ServiceName}#1`; pid: number }[] = [];
  let ackedAtKill = 0;
  try {
    await Promise.race([
      until("the kill point of the run", 3_600_000, async () => acknowledged() >= opts.killAfterAcknowledged),
      // A workload that fails before the kill point is reported, not waited for.
      traffic.then(() => {
        if (acknowledged() < opts.killAfterAcknowledged) throw new Error(`the workload ended with ${acknowledged()} writes acknowledged, before the kill point`);
      }),
    ]);
    killed = SERVICE_NAMES.map((s) => ({ name: `${s}#1` as const, pid: system.pidOf(`${s}#1`) }));
    ackedAtKill = acknowledged();
    say(`killing ${killed.map((k) => k.name).join(", ")} with SIGKILL after ${ackedAtKill} acknowledged writes`);
    for (const k of killed) process.kill(k.pid, "SIGKILL");
    await traffic;
  } finally {
    clearInterval(ticker);
  }
  const workloadSeconds = (Date.now() - started) / 1000;
  say(`workload done: ${acknowledged()} writes acknowledged in ${workloadSeconds.toFixed(0)} s; waiting for the killed replicas' restart`);
  // The launcher brings them back; the books are checked whether or not, but a run that ends with
  // a service down would hide it, so a missing restart is a problem.
  await Promise.all(
    killed.map((k) => system.nextStart(k.name, k.pid, 120_000).catch((err) => void problems.push(`${k.name} not restarted: ${String(err)}`))),
  );

  const observations = client.observations.slice(attemptsBefore);
  const answers500 = observations.filter((o) => o.status === 500).map((o) => `${o.method} ${o.path} → 500 ${o.code ?? ""}`);
  if (refused.length > 0) problems.push(`${refused.length} money requests refused, e.g. ${JSON.stringify(refused.slice(0, 3))}`);
  if (answers500.length > 0) problems.push(`${answers500.length} answers 500, e.g. ${answers500.slice(0, 3).join("; ")}`);
  if (acknowledged() <= ackedAtKill) problems.push("no write acknowledged after the kill: the surviving replicas did not serve");

  // Every acknowledged transaction final, COMPLETED, and announced with that state.
  say("reading back every acknowledged transaction and its webhooks");
  const settleStart = Date.now();
  const txs = acknowledgedTransactions(acked);
  const finals = new Map<string, string>();
  const announced = new Map<string, Set<string>>();
  let indexed = 0;
  let waitingFor = "";
  /** Adds the webhooks received since the last call to `announced`. */
  const indexArrivals = () => {
    for (; indexed < receiver.envelopes.length; indexed++) {
      const e = receiver.envelopes[indexed]!;
      if (typeof e.data?.status !== "string" || typeof e.data?.id !== "string") continue;
      const set = announced.get(e.data.id) ?? new Set<string>();
      announced.set(e.data.id, set.add(e.data.status));
    }
  };
  const settled = await until("every acknowledged transaction final and announced by webhook", opts.settleTimeoutMs, async () => {
    const open = txs.filter((t) => !finals.has(t.id));
    // Read the open ones a few at a time; stop at the first not yet final (it is polled again).
    for (let i = 0; i < open.length; i += 16) {
      const answers = await Promise.all(open.slice(i, i + 16).map(async (t) => ({ t, res: await client.call("GET", `/transactions/${t.id}`) })));
      for (const { t, res } of answers) {
        if (res.status === 200 && ["COMPLETED", "FAILED", "REJECTED", "REFUNDED", "EXPIRED"].includes(res.body.status)) finals.set(t.id, res.body.status);
        else waitingFor = `${t.kind} ${t.id}: ${res.status} ${res.body?.status ?? JSON.stringify(res.body)}`;
      }
      if (answers.some(({ t }) => !finals.has(t.id))) return false;
    }
    // The webhooks are indexed after the reads, which take minutes for 12,000 transactions: a
    // webhook that arrived during them counts (indexed before them, the last write's COMPLETED
    // webhook, delivered a moment after the workload ended, was missed by a pass that outlasted
    // the settle timeout, and reported as never sent).
    indexArrivals();
    const unannounced = txs.find((t) => !announced.get(t.id)?.has(finals.get(t.id)!));
    if (unannounced) waitingFor = `${unannounced.kind} ${unannounced.id} (${finals.get(unannounced.id)}): no webhook with that state`;
    return !unannounced;
  }).then(
    () => true,
    (err) => {
      problems.push(`${String(err)}: ${waitingFor}`);
      return false;
    },
  );
  const notCompleted = txs.filter((t) => finals.has(t.id) && finals.get(t.id) !== "COMPLETED");
  if (notCompleted.length > 0) problems.push(`${notCompleted.length} acknowledged transactions not COMPLETED, e.g. ${notCompleted.slice(0, 3).map((t) => `${t.kind} ${t.id}: ${finals.get(t.id)}`).join("; ")}`);
  if (receiver.unverified > 0) problems.push(`${receiver.unverified} webhooks whose signature did not verify`);

  // No doubled effect in the webhooks: one event (one webhook id) per transaction, type and state;
  // a redelivered copy carries the same id. (Transactions only: an account's balance webhooks all
  // carry its status, ACTIVE.)
  const txIds = new Set(txs.map((t) => t.id));
  const perState = new Map<string, Set<string>>();
  for (const e of receiver.envelopes) {
    if (typeof e.data?.status !== "string" || !txIds.has(e.data.id)) continue;
    const k = `${e.data.id} ${e.type} ${e.data.status}`;
    perState.set(k, (perState.get(k) ?? new Set()).add(e.id));
  }
  const doubled = [...perState].filter(([, ids]) => ids.size > 1).map(([k, ids]) => `${k}: ${ids.size} events`);
  if (doubled.length > 0) problems.push(`${doubled.length} transaction states announced by two events, e.g. ${doubled.slice(0, 3).join("; ")}`);

  // No lost or doubled money: each customer's balance is exactly its acknowledged writes (once
  // the transactions are final), and the whole ledger's trial balance is exact.
  say("reading back the customers' balances and the trial balance");
  if (settled) {
    for (const c of customers) {
      const res = await client.call("GET", `/customers/internal-accounts?customerId=${c.id}`);
      const balance = res.body?.data?.find((a: any) => a.id === c.usd)?.balance?.amount;
      const expected = expectedUsdBalance(c.id, acked);
      if (balance !== expected) problems.push(`customer ${c.id}'s USD balance ${balance}, the acknowledged writes imply ${expected}`);
    }
  }
  const ledger = createClient(LedgerAdminService, createServiceTransport({ baseUrl: system.info.serviceUrls.ledger }));
  for (const scope of ["", platformId]) {
    // A bound on the call: a long run once hung here after every other check had passed, on an
    // HTTP/2 session through the launcher's former balancer to a replica that had been killed.
    const tb = await ledger.getTrialBalance({ platformId: scope }, { timeoutMs: 60_000 });
    if (tb.currencies.length === 0) problems.push(`${scope || "ledger"}: the trial balance has no currency`);
    for (const c of tb.currencies) {
      const where = `${scope || "ledger"} ${c.currency}`;
      if (c.balanceSum !== 0n) problems.push(`${where}: the balances sum to ${c.balanceSum}`);
      if (c.postingSum !== 0n) problems.push(`${where}: the postings sum to ${c.postingSum}`);
      if (c.mismatchedAccountCount !== 0n) problems.push(`${where}: ${c.mismatchedAccountCount} accounts whose balance is not their postings`);
    }
  }

  return {
    customers: customers.length,
    cycles: customers.length * opts.cyclesPerCustomer,
    operations: sent,
    acknowledged: acknowledged(),
    refused,
    answers500,
    attempts: observations.length,
    attemptsWithoutAnswer: observations.filter((o) => o.status === 0).length,
    killed: killed.map((k) => k.name),
    acknowledgedAtKill: ackedAtKill,
    acknowledgedAfterKill: acknowledged() - ackedAtKill,
    transactions: txs.length,
    workloadSeconds,
    settleSeconds: (Date.now() - settleStart) / 1000,
    latency: latencyByKind(observations.filter((o) => o.method === "POST")),
    webhooks: receiver.envelopes.length,
    unverifiedWebhooks: receiver.unverified,
    problems,
  };
}

/** Attempts grouped by path with ids elided (`/quotes/{id}/execute`): count and percentiles of their duration. */
function latencyByKind(observations: readonly Observation[]): ConservationReport["latency"] {
  const kinds = new Map<string, number[]>();
  for (const o of observations) {
    const kind = o.path.replace(/[A-Za-z]+:[0-9a-f-]{36}/g, "{id}");
    (kinds.get(kind) ?? kinds.set(kind, []).get(kind)!).push(o.ms);
  }
  const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return Object.fromEntries(
    [...kinds].map(([kind, ms]) => {
      const sorted = ms.sort((a, b) => a - b);
      return [kind, { attempts: sorted.length, p50: at(sorted, 0.5), p99: at(sorted, 0.99), max: sorted[sorted.length - 1]! }];
    }),
  );
}
