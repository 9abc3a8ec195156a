import { startMetrics, type Metrics } from "@corridor/kit";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

/** The value of one sample of the scrape whose name and labels match, or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}

// Issue 26: the ledger's rail backlog gauges (instructions waiting per connector and status, the
// oldest's age) and its count of money moved, as its Prometheus scrape shows them.
describe("ledger metrics: rail instructions waiting, money moved", () => {
  let m: Metrics;
  let h: LedgerHarness;
  const ACH = { connector: "ach-test", environment: "PRODUCTION" };
  const scrape = async () => (await fetch(`http://127.0.0.1:${m.port}/metrics`)).text();
  const waiting = (text: string, connector: string, status: string) => sample(text, "corridor_rail_instructions_waiting", { corridor_rail_connector: connector, corridor_rail_status: status });
  const age = (text: string, connector: string, status: string) => sample(text, "corridor_rail_instructions_oldest_age", { corridor_rail_connector: connector, corridor_rail_status: status });
  const completed = (text: string, direction: string, environment = "PRODUCTION") =>
    sample(text, "corridor_ledger_transactions_completed_total", { corridor_currency: "USD", corridor_transaction_direction: direction, corridor_transaction_kind: "transfer", corridor_environment: environment }) ?? 0;

  beforeAll(async () => {
    // Before the ledger is built: its gauges register on the provider this starts.
    m = await startMetrics({ serviceName: "ledger-metrics-test", port: 0, host: "127.0.0.1", env: {}, runtime: false });
    h = await startLedgerHarness();
  });
  afterAll(async () => {
    await h?.close();
    await m?.shutdown();
  });

  async function platform(environment: Environment) {
    const platformId = await h.newPlatform({ environment });
    const { accounts } = await h.ledger.listInternalAccounts({ platformId, owner: "PLATFORM", currency: "USD" });
    const ext = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo() })).account!;
    return { platformId, account: accounts[0]!.id, ext: ext.id };
  }
  const out = async (platformId: string, source: string, destination: string, amount: bigint) =>
    (await h.ledger.transferOut({ transfer: { platformId, sourceAccountId: source, destinationAccountId: destination, amount } })).result!.transaction!;

  it("reports the simulator at 0 before anything was sent, and a bound connector once bound", async () => {
    let text = await scrape();
    expect(waiting(text, "sandbox", "PENDING")).toBe(0);
    expect(waiting(text, "sandbox", "PROCESSING")).toBe(0);
    expect(age(text, "sandbox", "PENDING")).toBe(0);
    expect(waiting(text, "ach-test", "PENDING")).toBeUndefined();
    const p = await platform(Environment.PRODUCTION);
    await h.admin.bindPlatformRail({ platformId: p.platformId, currency: "USD", paymentRail: "ACH", connector: "ach-test" });
    text = await scrape();
    expect(waiting(text, "ach-test", "PENDING")).toBe(0);
    expect(waiting(text, "ach-test", "PROCESSING")).toBe(0);
  });

  it("follows an instruction from PENDING to PROCESSING to its final outcome per connector, and counts the money moved once it committed", async () => {
    const p = await platform(Environment.PRODUCTION);
    await h.admin.bindPlatformRail({ platformId: p.platformId, currency: "USD", paymentRail: "ACH", connector: "ach-test" });
    const before = await scrape();
    const inBefore = completed(before, "INCOMING");
    const outBefore = completed(before, "OUTGOING");

    // A pull (transfer-in) by ACH: PENDING at the connector until it reports.
    const pull = (await h.ledger.transferIn({ transfer: { platformId: p.platformId, sourceAccountId: p.ext, destinationAccountId: p.account, amount: 1_000n } })).result!.transaction!;
    let text = await scrape();
    expect(waiting(text, "ach-test", "PENDING")).toBe(1);
    // Its age runs from the transaction's creation (the harness's clock is 2026-01-01: far in the past).
    expect(age(text, "ach-test", "PENDING")).toBeGreaterThan(0);
    await h.outcome(p.platformId, pull.id, "COMPLETED", "", undefined, ACH);
    text = await scrape();
    expect(waiting(text, "ach-test", "PENDING")).toBe(0);
    expect(age(text, "ach-test", "PENDING")).toBe(0);
    expect(completed(text, "INCOMING")).toBe(inBefore + 1);

    const payout = await out(p.platformId, p.account, p.ext, 400n);
    expect(waiting(await scrape(), "ach-test", "PENDING")).toBe(1);
    await h.outcome(p.platformId, payout.id, "PROCESSING", "", undefined, ACH);
    text = await scrape();
    expect(waiting(text, "ach-test", "PENDING")).toBe(0);
    expect(waiting(text, "ach-test", "PROCESSING")).toBe(1);
    expect(age(text, "ach-test", "PROCESSING")).toBeGreaterThan(0);
    // An outcome from a connector the payment was not routed to changes nothing, counts nothing.
    await h.outcome(p.platformId, payout.id, "COMPLETED", "", undefined, { connector: "sepa-test", environment: "PRODUCTION" });
    expect(waiting(await scrape(), "ach-test", "PROCESSING")).toBe(1);
    expect(completed(await scrape(), "OUTGOING")).toBe(outBefore);
    await h.outcome(p.platformId, payout.id, "COMPLETED", "", undefined, ACH);
    // A repeated report of the completion moves no money again.
    await h.outcome(p.platformId, payout.id, "COMPLETED", "", undefined, ACH);
    text = await scrape();
    expect(waiting(text, "ach-test", "PROCESSING")).toBe(0);
    expect(completed(text, "OUTGOING")).toBe(outBefore + 1);
    // Sandbox and production instructions are told apart by their connector.
    expect(waiting(text, "sandbox", "PENDING")).toBe(0);
  });

  it("keeps a sandbox platform's instructions under the simulator's name and its money under SANDBOX; a failed one counts no money", async () => {
    const s = await platform(Environment.SANDBOX);
    await h.ledger.fundInternalAccount({ platformId: s.platformId, accountId: s.account, amount: 500n });
    const before = await scrape();
    const failing = await out(s.platformId, s.account, s.ext, 100n);
    let text = await scrape();
    expect(waiting(text, "sandbox", "PENDING")).toBe(1);
    await h.outcome(s.platformId, failing.id, "FAILED", "TIMED_OUT");
    text = await scrape();
    expect(waiting(text, "sandbox", "PENDING")).toBe(0);
    expect(completed(text, "OUTGOING", "SANDBOX")).toBe(completed(before, "OUTGOING", "SANDBOX"));
    const paid = await out(s.platformId, s.account, s.ext, 100n);
    await h.outcome(s.platformId, paid.id, "COMPLETED");
    text = await scrape();
    expect(completed(text, "OUTGOING", "SANDBOX")).toBe(completed(before, "OUTGOING", "SANDBOX") + 1);
    expect(completed(text, "OUTGOING", "PRODUCTION")).toBe(completed(before, "OUTGOING", "PRODUCTION"));
  });

  it("carries no id of a platform, account or transaction in any label of its metrics", async () => {
    const text = await scrape();
    const lines = text.split("\n").filter((l) => l.startsWith("corridor_rail_") || l.startsWith("corridor_ledger_"));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => /(Platform|InternalAccount|ExternalAccount|Transaction):/.test(l))).toEqual([]);
  });
});
