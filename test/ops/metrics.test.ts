import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SERVICE_NAMES } from "@corridor/kit";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePortBlock, startSplitSystem } from "../infra/split-system.js";
import { prometheusSkipReason, startPrometheus, valueOf, type PromSample, type RunningPrometheus } from "./prometheus.js";

const root = resolve(import.meta.dirname, "../..");
const RULES = resolve(root, "deploy/prometheus/rules.yml");
const DASHBOARD = resolve(root, "deploy/prometheus/dashboard.json");

/** Every PromQL expression of the Grafana dashboard, with its variables as Grafana would expand them for "All". */
function dashboardQueries(): { panel: string; expr: string }[] {
  const dash = JSON.parse(readFileSync(DASHBOARD, "utf8")) as { panels: { title: string; targets?: { expr: string }[] }[] };
  return dash.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr.replaceAll("$__rate_interval", "1m").replaceAll("$job", ".*").replaceAll("$gateway", ".*") })));
}

const missingInfra = ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS"].filter((k) => !process.env[k]);
const skipReason = missingInfra.length ? `the split system needs ${missingInfra.join(", ")}` : prometheusSkipReason();
if (skipReason) console.warn(`[ops] metrics suite skipped: ${skipReason}`);

/**
 * A split system (one process per service and the gateway, each with its own METRICS_PORT) scraped
 * every second by a real Prometheus, under a short money workload: the metrics arrive, with
 * sensible values, under the names and labels the rules and the dashboard use.
 */
describe.skipIf(!!skipReason)("metrics of a split system scraped by Prometheus", () => {
  let system: Awaited<ReturnType<typeof startSplitSystem>>;
  let prom: RunningPrometheus;
  let receiver: Server;
  let received = 0;
  let usdAccountId: string | undefined;
  let call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: any }>;

  beforeAll(async () => {
    // The platform's webhook endpoint: answers 204 to every POST.
    receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        received++;
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const metricsBase = await freePortBlock(8);
    system = await startSplitSystem(
      { DATABASE_URL: process.env.DATABASE_URL!, REDIS_URL: process.env.REDIS_URL!, KAFKA_BROKERS: process.env.KAFKA_BROKERS! },
      { CORRIDOR_SPLIT_METRICS_PORT_BASE: String(metricsBase), CORRIDOR_FX_SANDBOX_DRIFT_BPS: "0", NOTIFICATIONS_DELIVERY_POLL_MS: "200" },
    );
    const jobs = [{ job: "gateway", target: `127.0.0.1:${metricsBase}` }, ...SERVICE_NAMES.map((s, i) => ({ job: s, target: `127.0.0.1:${metricsBase + 1 + i}` }))];
    prom = await startPrometheus(jobs, [RULES]);
    const admin = createClient(PlatformAdminService, createGrpcTransport({ baseUrl: system.info.serviceUrls["auth-sessions"] }));
    const created = await admin.createPlatform({ name: "metrics platform", environment: Environment.SANDBOX, isRegulatedFinancialInstitution: false });
    const auth = `Basic ${Buffer.from(`${created.token!.clientId}:${created.clientSecret}`).toString("base64")}`;
    call = async (method, path, body, headers = {}) => {
      const res = await fetch(`${system.info.url}/2025-10-13${path}`, {
        method,
        body: body === undefined ? undefined : JSON.stringify(body),
        headers: { authorization: auth, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
  }, Math.max(240_000, (Number(process.env.CORRIDOR_READY_TIMEOUT_MS) || 0) + 90_000));

  afterAll(async () => {
    await prom?.stop();
    await system?.stop();
    receiver?.close();
  });

  it("every process is scraped", async () => {
    const up = await prom.waitFor("up", (r) => r.length === 8 && r.every((s) => s.value[1] === "1"), 30_000);
    expect(up.map((s) => s.metric.job).sort()).toEqual(["gateway", ...SERVICE_NAMES].sort());
  });

  it("a money workload shows in http, rpc, inbox and outbox metrics, and the outbox drains back to 0", async () => {
    // The platform's USD account appears once the ledger consumed the platform's creation event.
    let usd: { id: string } | undefined;
    for (const end = Date.now() + 30_000; !usd && Date.now() < end; await new Promise((r) => setTimeout(r, 250))) {
      const res = await call("GET", "/platform/internal-accounts?currency=USD");
      usd = res.status === 200 ? res.body.data[0] : undefined;
    }
    expect(usd, "platform USD account").toBeDefined();
    usdAccountId = usd!.id;
    // Webhooks go to the receiver; notifications learns the endpoint asynchronously: a delivered TEST proves it has it.
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    expect((await call("PATCH", "/config", { webhookEndpoint: endpoint })).status).toBe(200);
    for (let delivered = false, end = Date.now() + 30_000; !delivered; await new Promise((r) => setTimeout(r, 250))) {
      expect(Date.now() < end, "the TEST webhook is delivered within 30 s").toBe(true);
      const res = await call("POST", "/sandbox/webhooks/test");
      // The receiver answers 204: any 2xx is a delivery.
      delivered = res.status === 200 && res.body.response_status >= 200 && res.body.response_status < 300;
    }
    const ext = await call("POST", "/platform/external-accounts", {
      currency: "USD",
      accountInfo: { accountType: "USD_ACCOUNT", accountNumber: "881234500000", routingNumber: "021000021", bankAccountType: "CHECKING", bankName: "Test Bank", beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace" } },
    });
    expect(ext.status, JSON.stringify(ext.body)).toBe(201);
    expect((await call("POST", `/sandbox/internal-accounts/${usd!.id}/fund`, { amount: 100_000 })).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const out = await call("POST", "/transfer-out", { source: { accountId: usd!.id }, destination: { accountId: ext.body.id }, amount: 1_000 + i }, { "idempotency-key": randomUUID() });
      expect(out.status, JSON.stringify(out.body)).toBeLessThan(300);
    }
    // A client error is counted in its class, not as a server error.
    expect((await call("GET", "/transactions/Transaction:0190f0f0-0000-7000-8000-000000000000")).status).toBe(404);

    const positive = (r: PromSample[]) => r.length > 0 && r.every((s) => Number(s.value[1]) > 0);
    const transfers = await prom.waitFor('sum(http_server_request_duration_count{job="gateway",http_route=~".*transfer-out",http_request_method="POST",http_response_status_class="2xx"})', (r) => valueOf(r) >= 5);
    expect(valueOf(transfers)).toBeGreaterThanOrEqual(5);
    await prom.waitFor('sum(http_server_request_duration_count{job="gateway",http_response_status_class="4xx"})', positive);
    // No raw path (ids) in any route label.
    expect(await prom.query('http_server_request_duration_count{http_route=~".*(Transaction|InternalAccount|ExternalAccount):.*"}')).toEqual([]);
    // The gateway's calls to the ledger, seen from both sides.
    await prom.waitFor('sum(rpc_client_duration_count{job="gateway",rpc_grpc_status_code="0"})', positive);
    await prom.waitFor('sum by (rpc_method) (rpc_server_duration_count{job="ledger",rpc_grpc_status_code="0"})', positive);
    // Events consumed through the inbox.
    await prom.waitFor("sum(messaging_process_duration_count)", positive);
    // Every service's outbox is observed, and drains back to 0.
    await prom.waitFor("count(corridor_outbox_backlog)", (r) => valueOf(r) >= SERVICE_NAMES.length);
    await prom.waitFor("max(corridor_outbox_backlog)", (r) => valueOf(r) === 0);
    await prom.waitFor("max(corridor_outbox_oldest_age)", (r) => valueOf(r) === 0);
    // Webhooks of the transfers were delivered: attempts, event-to-2xx latency, and the queue drains to 0.
    await prom.waitFor('sum(corridor_webhook_attempts_total{corridor_webhook_outcome="delivered"})', (r) => valueOf(r) >= 2);
    expect(received).toBeGreaterThanOrEqual(2);
    await prom.waitFor("sum(corridor_webhook_delivery_duration_count)", positive);
    await prom.waitFor("max(corridor_webhook_queue_depth)", (r) => valueOf(r) === 0);
    // Every consumer group's lag is observed per partition, and returns to 0 once the events are handled.
    await prom.waitFor("count(messaging_kafka_consumer_lag)", (r) => valueOf(r) > 0);
    await prom.waitFor("max(messaging_kafka_consumer_lag)", (r) => valueOf(r) === 0);
    // Money moved: the 5 transfers completed (the simulator settles suffix 000 at once), counted per currency and direction.
    const completed = await prom.waitFor(
      'sum(corridor_ledger_transactions_completed_total{job="ledger",corridor_currency="USD",corridor_transaction_direction="OUTGOING",corridor_transaction_kind="transfer",corridor_environment="SANDBOX"})',
      (r) => valueOf(r) >= 5,
    );
    expect(valueOf(completed)).toBeLessThan(20);
    // No id in any of its labels: currency, direction and kind only (plus the scrape's own).
    const moneyLabels = new Set((await prom.query("corridor_ledger_transactions_completed_total")).flatMap((s) => Object.keys(s.metric)));
    expect([...moneyLabels].filter((l) => !["__name__", "job", "instance", "otel_scope_name", "otel_scope_version", "corridor_currency", "corridor_transaction_direction", "corridor_transaction_kind", "corridor_environment"].includes(l))).toEqual([]);
    // A workload of a few dozen requests and their events, each step waited for: minutes on a shared, busy machine.
  }, 300_000);

  it("rail instructions waiting per connector rise while the simulator holds a payment, and drain back to 0", async () => {
    expect(usdAccountId, "the workload test ran first").toBeDefined();
    // Both statuses of the simulator are reported, at 0 once the workload's transfers settled.
    await prom.waitFor('corridor_rail_instructions_waiting{job="ledger",corridor_rail_connector="sandbox"}', (r) => r.length === 2 && r.every((s) => s.value[1] === "0"));
    // Suffix 005: the sandbox rail accepts the payout (PROCESSING) and fails it 30 s of sandbox time later.
    const ext = await call("POST", "/platform/external-accounts", {
      currency: "USD",
      accountInfo: { accountType: "USD_ACCOUNT", accountNumber: "881234500005", routingNumber: "021000021", bankAccountType: "CHECKING", bankName: "Test Bank", beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Grace Hopper" } },
    });
    expect(ext.status, JSON.stringify(ext.body)).toBe(201);
    const out = await call("POST", "/transfer-out", { source: { accountId: usdAccountId }, destination: { accountId: ext.body.id }, amount: 700 }, { "idempotency-key": randomUUID() });
    expect(out.status, JSON.stringify(out.body)).toBeLessThan(300);
    const waiting = await prom.waitFor('sum(corridor_rail_instructions_waiting{job="ledger",corridor_rail_connector="sandbox"})', (r) => valueOf(r) === 1, 30_000);
    expect(valueOf(waiting)).toBe(1);
    // The oldest's age grows from when the instruction was sent: positive, and well under a minute here.
    const age = await prom.waitFor('max(corridor_rail_instructions_oldest_age{job="ledger",corridor_rail_connector="sandbox"})', (r) => valueOf(r) > 0, 30_000);
    expect(valueOf(age)).toBeLessThan(60);
    // The failure comes due: the instruction has its final outcome and the backlog drains.
    expect((await call("POST", "/sandbox/clock/advance", { seconds: 60 })).status).toBe(200);
    await prom.waitFor('max(corridor_rail_instructions_waiting{job="ledger",corridor_rail_connector="sandbox"})', (r) => valueOf(r) === 0, 30_000);
    await prom.waitFor('max(corridor_rail_instructions_oldest_age{job="ledger",corridor_rail_connector="sandbox"})', (r) => valueOf(r) === 0, 30_000);
  }, 180_000);

  it("database pools and the Node runtime are observed in every process", async () => {
    const services = (r: PromSample[]) => new Set(r.map((s) => s.metric.job)).size === SERVICE_NAMES.length;
    const used = await prom.waitFor('db_client_connection_count{db_client_connection_state="idle"}', services);
    expect(used.every((s) => Number(s.value[1]) >= 0)).toBe(true);
    await prom.waitFor("db_client_connection_pending_requests", services);
    const heap = await prom.waitFor("v8js_memory_heap_used", (r) => r.length === 8);
    // Each process's heap, in bytes: more than 1 MiB, less than its limit.
    expect(heap.every((s) => Number(s.value[1]) > 1 << 20)).toBe(true);
    await prom.waitFor('nodejs_eventloop_delay{nodejs_eventloop_delay_percentile="p99"}', (r) => r.length === 8);
    // GC pauses are observed (the ledger did the workload's work: it collected garbage).
    await prom.waitFor('sum(v8js_gc_duration_count{job="ledger"})', (r) => valueOf(r) > 0);
  });

  it("the database transactions of every service the workload drove are timed, and the ledger's took sensible times", async () => {
    // A histogram's series appear with its first transaction: the services the workload made work
    // (platform creation, money, its events and webhooks). Agents and quotes-fx may have had none
    // (they skip events that are not theirs before opening a transaction).
    const driven = ["auth-sessions", "ledger", "notifications", "sandbox"];
    const byJob = await prom.waitFor('sum by (job) (corridor_db_transaction_duration_count{corridor_db_transaction_outcome="commit"})', (r) =>
      driven.every((j) => r.some((s) => s.metric.job === j && Number(s.value[1]) > 0)),
    );
    // Only Corridor's processes, each once: the gateway has no database.
    expect(byJob.map((s) => s.metric.job).every((j) => (SERVICE_NAMES as readonly string[]).includes(j!))).toBe(true);
    // The ledger's money transactions: at least the workload's transfers, each well under 5 s on average.
    const count = await prom.waitFor('sum(corridor_db_transaction_duration_count{job="ledger",corridor_db_transaction_outcome="commit"})', (r) => valueOf(r) >= 6);
    const sum = await prom.query('sum(corridor_db_transaction_duration_sum{job="ledger",corridor_db_transaction_outcome="commit"})');
    const mean = valueOf(sum) / valueOf(count);
    expect(mean).toBeGreaterThan(0);
    expect(mean).toBeLessThan(5);
  });

  it("every metric the rules and the dashboard name is one the system exports", async () => {
    const text = readFileSync(RULES, "utf8") + readFileSync(DASHBOARD, "utf8");
    const named = new Set([...text.matchAll(/(?<![:\w])((?:http_server|rpc_server|rpc_client|db_client|corridor_outbox|corridor_inbox|corridor_webhook|corridor_rail|corridor_ledger|corridor_db|messaging|nodejs|v8js|process)_[a-z0-9_]*)/g)].map((m) => m[1]!));
    const exported = new Set(((await (await fetch(`${prom.url}/api/v1/label/__name__/values`)).json()) as { data: string[] }).data);
    // Counted only when a handling fails (packages/kit/test/telemetry-metrics.test.ts scrapes it).
    const onlyOnFailure = new Set(["corridor_inbox_failures_total"]);
    // Label names share the prefixes (messaging_consumer_group_name, db_client_connection_state…).
    const labels = new Set(((await (await fetch(`${prom.url}/api/v1/labels`)).json()) as { data: string[] }).data);
    const missing = [...named].filter((n) => !exported.has(n) && !labels.has(n) && !onlyOnFailure.has(n));
    expect(missing).toEqual([]);
    expect(named.size).toBeGreaterThan(10);
  });

  it("every rule of deploy/prometheus/rules.yml evaluates without error against the scraped system", async () => {
    const body = (await (await fetch(`${prom.url}/api/v1/rules`)).json()) as { data: { groups: { rules: { name: string; health: string; lastError?: string; lastEvaluation: string }[] }[] } };
    const rules = body.data.groups.flatMap((g) => g.rules);
    expect(rules.length).toBeGreaterThan(10);
    // Evaluated at least once since the workload (evaluation every second).
    await prom.waitFor("up", () => true);
    const bad = rules.filter((r) => r.health !== "ok").map((r) => `${r.name}: ${r.health} ${r.lastError ?? ""}`);
    expect(bad).toEqual([]);
    // The recorded ratios are there and read a number: no server error (the workload caused none),
    // and never NaN, even for a window whose requests moved no rate (docs/operations.md, "Why the
    // recorded ratios are never NaN"; rules.test.yml has the quiet cases).
    const ratio = await prom.waitFor("corridor:http_server_errors:ratio_rate5m", (r) => r.length === 1, 30_000);
    expect(valueOf(ratio)).toBe(0);
    for (const w of ["5m", "30m", "1h", "2h", "6h", "1d", "3d"]) {
      const r = await prom.query(`corridor:http_server_errors:ratio_rate${w}`);
      expect(r.map((s) => s.value[1]), w).toEqual(["0"]);
    }
    for (const w of ["5m", "30m", "1h", "2h", "6h"]) {
      const r = await prom.query(`corridor:http_server_slow:ratio_rate${w}`);
      expect(r.length, w).toBe(1);
      const v = Number(r[0]!.value[1]);
      expect(v >= 0 && v <= 1, `${w}: ${v}`).toBe(true);
    }
  });

  it("every PromQL expression of the Grafana dashboard evaluates without error, and the golden-signal panels have data", async () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(20);
    const failures: string[] = [];
    const empty: string[] = [];
    for (const q of queries) {
      try {
        if ((await prom.query(q.expr)).length === 0) empty.push(q.panel);
      } catch (err) {
        failures.push(`${q.panel}: ${(err as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
    // Panels that must show something after the workload (failures and waits may rightly be empty).
    for (const panel of [
      "Requests per second by status class",
      "Calls served per second by service",
      "Outbox backlog per schema",
      "Heap used",
      "Pool connections in use / idle",
      "Rail instructions waiting per connector",
      "Oldest waiting rail instruction per connector",
      "Database transaction p99 by service",
      "Database transactions per second by outcome",
    ]) {
      if (!empty.includes(panel)) continue;
      // Empty at that instant: one slow scrape (over the 1 s timeout on a busy machine) marks a
      // process's series stale until the next. The panel must show data again within 30 s.
      const expr = queries.find((q) => q.panel === panel)!.expr;
      const again = await prom.waitFor(expr, (r) => r.length > 0, 30_000).catch(() => []);
      expect(again.length, `${panel} has data`).toBeGreaterThan(0);
    }
  });
});

