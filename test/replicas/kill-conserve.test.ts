import { appendFileSync } from "node:fs";
import { SERVICE_NAMES } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhookReceiver } from "../chaos/client.js";
import { splitDist } from "../infra/split-dist.js";
import { startSplitSystem } from "../infra/split-system.js";
import { runConservation, setUpConservation, WRITES_PER_CYCLE } from "./conserve.js";

// Issue 28: replicas that share the work. The split system with two processes of every service
// (`start:split --replicas 2`, every caller calling both in turn; their consumers sharing each
// topic's partitions), under the chaos suite's money workload. Mid-run one replica of every service
// is killed with SIGKILL at once: the other replica takes over its partitions and its calls (the
// killed one refuses connections) while the launcher restarts it. Then: every acknowledged write kept and final,
// announced by webhook once per state (no lost, no doubled effect), each customer's balance exactly
// what the acknowledged writes imply, the trial balance exact, no HTTP 500. The same run, long
// (20,000 operations), is `npm run conserve:replicas` (test/replicas/conserve-run.ts).

const missing = ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS"].filter((k) => !process.env[k]);
const CUSTOMERS = 3;
/** Cycles each customer runs: some before the kill, the rest through it and after. */
const CYCLES = 4;

describe.skipIf(missing.length > 0)("replicas: one replica of every service killed mid-run; the other carries on, nothing lost or doubled", () => {
  let system: Awaited<ReturnType<typeof startSplitSystem>> | undefined;
  let receiver: WebhookReceiver;
  let setUp: Awaited<ReturnType<typeof setUpConservation>>;

  beforeAll(async () => {
    receiver = new WebhookReceiver();
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
    setUp = await setUpConservation(system, receiver, CUSTOMERS);
  }, 660_000);

  afterAll(async () => {
    await system?.stop().catch(() => {});
    await receiver?.stop();
  }, 120_000);

  it("keeps every acknowledged write exactly once through the kill, and the books balance", async () => {
    const report = await runConservation(system!, receiver, setUp, {
      customers: CUSTOMERS,
      cyclesPerCustomer: CYCLES,
      // Each customer's first two writes (the fund and the transfer-out of its first cycle).
      killAfterAcknowledged: CUSTOMERS * 2,
      settleTimeoutMs: 90_000,
    });
    expect(report.problems).toEqual([]);
    expect(report.operations).toBe(CUSTOMERS * CYCLES * WRITES_PER_CYCLE);
    expect(report.killed).toEqual(SERVICE_NAMES.map((s) => `${s}#1`));
    expect(report.acknowledgedAfterKill, "writes acknowledged after the kill (the surviving replicas served)").toBeGreaterThan(0);
    expect(report.transactions).toBeGreaterThan(0);
  }, 240_000);
});
