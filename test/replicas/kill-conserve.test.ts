import { appendFileSync } from "node:fs";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SERVICE_NAMES } from "@corridor/kit";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CarefulClient, WebhookReceiver } from "../chaos/client.js";
import { acknowledgedTransactions, cycle, expectedUsdBalance, type Acknowledged, type ChaosCustomer, type Refusal } from "../chaos/workload.js";
import { splitDist } from "../infra/split-dist.js";
import { startSplitSystem } from "../infra/split-system.js";

// Issue 28: replicas that share the work. The split system with two processes of every service
// (`start:split --replicas 2`, each service's port a balancer in front of both; their consumers
// sharing each topic's partitions), under the chaos suite's money workload. Mid-run one replica of
// every service is killed with SIGKILL at once: the other replica takes over its partitions and
// its connections while the launcher restarts it. Then: every acknowledged write kept and final,
// announced by webhook once per state (no lost, no doubled effect), each customer's balance exactly
// what the acknowledged writes imply, the trial balance exact, no HTTP 500.

const missing = ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS"].filter((k) => !process.env[k]);
const CUSTOMERS = 3;
/** Cycles each customer runs: some before the kill, the rest through it and after. */
const CYCLES = 4;

describe.skipIf(missing.length > 0)("replicas: one replica of every service killed mid-run; the other carries on, nothing lost or doubled", () => {
  let system: Awaited<ReturnType<typeof startSplitSystem>> | undefined;
  let receiver: WebhookReceiver;
  let client: CarefulClient;
  let platformId = "";
  const customers: ChaosCustomer[] = [];
  const acked: Acknowledged[] = [];
  const refused: Refusal[] = [];

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    const hookUrl = await receiver.start();
    system = await startSplitSystem(
      { DATABASE_URL: process.env.DATABASE_URL!, REDIS_URL: process.env.REDIS_URL!, KAFKA_BROKERS: process.env.KAFKA_BROKERS! },
      {
        CORRIDOR_SPLIT_REPLICAS: "2",
        ...(await splitDist("replicas")),
        CORRIDOR_FX_SANDBOX_DRIFT_BPS: "0",
        NOTIFICATIONS_DELIVERY_POLL_MS: "200",
        CORRIDOR_SPLIT_RESTART_LIMIT: "3",
        CORRIDOR_SPLIT_RESTART_BACKOFF_MS: "500",
        CORRIDOR_SPLIT_RESTART_BACKOFF_MAX_MS: "5000",
      },
      // CORRIDOR_REPLICAS_LOG names a file for every line the processes write (diagnosing a failure).
      process.env.CORRIDOR_REPLICAS_LOG ? (line) => appendFileSync(process.env.CORRIDOR_REPLICAS_LOG!, `${new Date().toISOString()} ${line}\n`) : undefined,
    );
    const admin = createClient(PlatformAdminService, createGrpcTransport({ baseUrl: system.info.serviceUrls["auth-sessions"] }));
    const created = await admin.createPlatform({ name: "replicas", environment: Environment.SANDBOX, isRegulatedFinancialInstitution: false });
    platformId = created.platform!.id;
    client = CarefulClient.basic(`${system.info.url}/2025-10-13`, created.token!.clientId, created.clientSecret);
    await setUpPlatform(hookUrl);
  }, 660_000);

  afterAll(async () => {
    await system?.stop().catch(() => {});
    await receiver?.stop();
  }, 120_000);

  async function setUpPlatform(hookUrl: string) {
    const base = (await client.call("GET", "/config")).body.supportedCurrencies[0];
    const supportedCurrencies = ["USD", "EUR"].map((currencyCode) => ({ ...base, currencyCode }));
    const patched = await client.call("PATCH", "/config", { supportedCurrencies, webhookEndpoint: hookUrl });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    receiver.useSecret((await client.call("GET", "/config/webhook-secret")).body.secret);
    await until("the webhook endpoint is in use", 30_000, async () => (await client.call("POST", "/sandbox/webhooks/test")).body?.response_status === 200);
    await Promise.all(
      Array.from({ length: CUSTOMERS }, async (_, i) => {
        const created = await client.call("POST", "/customers", {
          customerType: "INDIVIDUAL",
          platformCustomerId: `replicas-${i}`,
          fullName: "Ada Lovelace",
          birthDate: "1990-04-01",
          nationality: "US",
          address: { line1: "1 Main St", postalCode: "94105", country: "US", city: "San Francisco" },
          region: "US",
          email: `replicas-${i}@example.com`,
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const id: string = created.body.id;
        if (created.body.kycStatus !== "APPROVED") expect((await client.call("POST", "/verifications", { customerId: id })).status).toBeLessThan(300);
        let usd = "";
        await until(`customer ${i}'s USD account`, 30_000, async () => {
          const res = await client.call("GET", `/customers/internal-accounts?customerId=${id}`);
          usd = (res.body?.data ?? []).find((a: any) => a.type === "INTERNAL_FIAT" && a.balance.currency.code === "USD")?.id ?? "";
          return usd !== "";
        });
        const bank = await client.call("POST", "/customers/external-accounts", {
          customerId: id,
          currency: "USD",
          accountInfo: {
            accountType: "USD_ACCOUNT",
            accountNumber: `88123450${i}000`,
            routingNumber: "021000021",
            bankAccountType: "CHECKING",
            bankName: "Test Bank",
            beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace" },
          },
        });
        expect(bank.status, JSON.stringify(bank.body)).toBe(201);
        const payee = await client.call("POST", "/customers/external-accounts", {
          customerId: id,
          currency: "EUR",
          accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", `37040044053201${i}000`) },
        });
        expect(payee.status, JSON.stringify(payee.body)).toBe(201);
        customers.push({ id, usd, bank: bank.body.id, payee: payee.body.id });
      }),
    );
  }

  it("keeps every acknowledged write exactly once through the kill, and the books balance", async () => {
    const traffic = Promise.all(customers.map(async (c) => {
      for (let n = 0; n < CYCLES; n++) await cycle(client, c, acked, refused);
    }));
    await until("the workload's first acknowledged writes", 60_000, async () => acked.length >= CUSTOMERS * 2);

    // One replica of every service at once, mid-run.
    const killed = SERVICE_NAMES.map((s) => ({ name: `${s}#1` as const, pid: system!.pidOf(`${s}#1`) }));
    if (process.env.CORRIDOR_REPLICAS_LOG) appendFileSync(process.env.CORRIDOR_REPLICAS_LOG, `${new Date().toISOString()} [replicas] killing ${killed.map((k) => k.name).join(", ")}\n`);
    for (const k of killed) process.kill(k.pid, "SIGKILL");
    const ackedAtKill = acked.length;
    await traffic;
    // The launcher brings them back; the suite does not wait for that to check the books, only to stop cleanly.
    await Promise.all(killed.map((k) => system!.nextStart(k.name, k.pid, 60_000)));
    expect(acked.length, "writes acknowledged after the kill (the surviving replicas served)").toBeGreaterThan(ackedAtKill);

    // Every request got a definitive answer, never a 500.
    expect(refused, "money requests the platform refused").toEqual([]);
    expect(client.observations.filter((o) => o.status === 500).map((o) => `${o.method} ${o.path} → 500 ${o.code ?? ""}`), "answers 500").toEqual([]);

    // Every acknowledged transaction final, COMPLETED, and announced with that state.
    const txs = acknowledgedTransactions(acked);
    const finals = new Map<string, string>();
    let problem = "";
    await until("every acknowledged transaction is final and announced by webhook", 90_000, async () => {
      for (const t of txs) {
        if (!finals.has(t.id)) {
          const res = await client.call("GET", `/transactions/${t.id}`);
          if (res.status !== 200 || !["COMPLETED", "FAILED", "REJECTED", "REFUNDED", "EXPIRED"].includes(res.body.status)) {
            problem = `${t.kind} ${t.id}: ${res.status} ${res.body?.status ?? JSON.stringify(res.body)}`;
            return false;
          }
          finals.set(t.id, res.body.status);
        }
        if (!receiver.statusesOf(t.id).includes(finals.get(t.id)!)) {
          problem = `${t.kind} ${t.id} (${finals.get(t.id)}): no webhook with that state`;
          return false;
        }
      }
      return true;
    }).catch((err) => {
      throw new Error(`${String(err)}: ${problem}`);
    });
    expect(txs.filter((t) => finals.get(t.id) !== "COMPLETED").map((t) => `${t.kind} ${t.id}: ${finals.get(t.id)}`)).toEqual([]);
    expect(receiver.unverified).toBe(0);

    // No doubled effect in the webhooks: one event (one webhook id) per transaction, type and
    // state; a redelivered copy carries the same id.
    // (Transactions only: an account's balance webhooks all carry its status, ACTIVE.)
    const txIds = new Set(txs.map((t) => t.id));
    const perState = new Map<string, Set<string>>();
    for (const e of receiver.envelopes) {
      if (typeof e.data?.status !== "string" || !txIds.has(e.data.id)) continue;
      const k = `${e.data.id} ${e.type} ${e.data.status}`;
      perState.set(k, (perState.get(k) ?? new Set()).add(e.id));
    }
    expect([...perState].filter(([, ids]) => ids.size > 1).map(([k, ids]) => `${k}: ${ids.size} events`), "a transaction state announced by two events").toEqual([]);

    // No lost or doubled money: each customer's balance is exactly its acknowledged writes, and the
    // whole ledger's trial balance is exact.
    for (const c of customers) {
      const res = await client.call("GET", `/customers/internal-accounts?customerId=${c.id}`);
      expect(res.status).toBe(200);
      expect(res.body.data.find((a: any) => a.id === c.usd).balance.amount, `customer ${c.id}'s USD balance`).toBe(expectedUsdBalance(c.id, acked));
    }
    const ledger = createClient(LedgerAdminService, createGrpcTransport({ baseUrl: system!.info.serviceUrls.ledger }));
    for (const scope of ["", platformId]) {
      const tb = await ledger.getTrialBalance({ platformId: scope });
      expect(tb.currencies.length).toBeGreaterThan(0);
      for (const c of tb.currencies) {
        expect(c.balanceSum, `${scope || "ledger"}: sum of the ${c.currency} balances`).toBe(0n);
        expect(c.postingSum, `${scope || "ledger"}: sum of the ${c.currency} postings`).toBe(0n);
        expect(c.mismatchedAccountCount, `${scope || "ledger"}: ${c.currency} accounts whose balance is not their postings`).toBe(0n);
      }
    }
  }, 240_000);
});

/** Polls `check` until it answers true, failing after `ms`. */
async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms${last ? ` (${String(last)})` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** IBAN with valid check digits for a country and BBAN. */
function iban(country: string, bban: string): string {
  const numeric = (x: string) => [...x].map((ch) => (/[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch)).join("");
  const rem = (x: string) => [...x].reduce((r, d) => (r * 10 + Number(d)) % 97, 0);
  const check = 98 - rem(numeric(`${bban}${country}00`));
  return `${country}${String(check).padStart(2, "0")}${bban}`;
}
