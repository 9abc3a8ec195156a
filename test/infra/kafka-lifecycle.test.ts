import { spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { kafkaMode, provideKafka, readsKafkaBrokers, type BrokerTooling } from "./global-setup.js";
import { startWatchdog } from "./kafka/broker.mjs";

/** Broker tooling that records what it was asked; `answering` is the broker already up on the default port. */
function fakeTooling(opts: { answering?: boolean; unavailable?: string } = {}) {
  const calls: string[] = [];
  const running = new Set<number>(opts.answering ? [19092] : []);
  const tooling: BrokerTooling = {
    defaultPort: 19092,
    brokerUnavailableReason: () => opts.unavailable ?? null,
    async freeBrokerPort() {
      return 31234;
    },
    async startBroker({ port = 19092, reuse = true, ownerPid, ephemeral }) {
      calls.push(`start ${port} reuse=${reuse} owner=${ownerPid ?? "-"} ephemeral=${!!ephemeral}`);
      if (running.has(port)) {
        if (!reuse) throw new Error("taken");
        return { brokers: `127.0.0.1:${port}`, pid: 1, startedHere: false };
      }
      running.add(port);
      return { brokers: `127.0.0.1:${port}`, pid: 4242, startedHere: true };
    },
    async stopBroker({ port = 19092, removeData }) {
      calls.push(`stop ${port} removeData=${!!removeData}`);
      running.delete(port);
    },
  };
  return { tooling, calls, running };
}

describe("the test run's Kafka broker", () => {
  it("by default starts a broker of the run's own on free ports and stops it (folder included) when the run ends", async () => {
    const f = fakeTooling({ answering: true });
    const p = await provideKafka({}, f.tooling, 777);
    expect(p.brokers).toBe("127.0.0.1:31234");
    expect(f.calls).toEqual(["start 31234 reuse=false owner=777 ephemeral=true"]);
    expect(p.teardown).toBeDefined();
    await p.teardown!();
    expect(f.calls).toContain("stop 31234 removeData=true");
    expect(f.running.has(31234)).toBe(false);
    // The broker someone else runs on the default port was neither used nor touched.
    expect(f.running.has(19092)).toBe(true);
  });

  it("reuses a broker that is already up only when CORRIDOR_TEST_KAFKA=reuse, and leaves it running", async () => {
    const f = fakeTooling({ answering: true });
    const p = await provideKafka({ CORRIDOR_TEST_KAFKA: "reuse" }, f.tooling, 777);
    expect(p.brokers).toBe("127.0.0.1:19092");
    expect(p.teardown).toBeUndefined();
    expect(f.running.has(19092)).toBe(true);
  });

  it("with reuse and no broker up, starts one on the shared port and still stops it at the end", async () => {
    const f = fakeTooling();
    const p = await provideKafka({ CORRIDOR_TEST_KAFKA: "reuse" }, f.tooling, 777);
    expect(f.calls).toEqual(["start 19092 reuse=true owner=777 ephemeral=false"]);
    await p.teardown!();
    expect(f.running.has(19092)).toBe(false);
  });

  it("keeps the broker it started for the next run only when CORRIDOR_TEST_KAFKA=keep (and ties it to no process)", async () => {
    const f = fakeTooling();
    const p = await provideKafka({ CORRIDOR_TEST_KAFKA: "keep" }, f.tooling, 777);
    expect(f.calls).toEqual(["start 19092 reuse=true owner=- ephemeral=false"]);
    expect(p.teardown).toBeUndefined();
    expect(p.message).toContain("broker.mjs stop");
  });

  it("starts nothing when KAFKA_BROKERS is set (CI), when off, or without java", async () => {
    for (const [env, unavailable] of [
      [{ KAFKA_BROKERS: "127.0.0.1:29092" }, undefined],
      [{ CORRIDOR_TEST_KAFKA: "off" }, undefined],
      [{}, "java not on PATH"],
    ] as const) {
      const f = fakeTooling({ unavailable });
      const p = await provideKafka(env, f.tooling, 777);
      expect(p.brokers).toBeUndefined();
      expect(f.calls).toEqual([]);
    }
  });

  it("is needed only by runs with a suite that reads KAFKA_BROKERS (one service's unit tests start no JVM)", () => {
    const env = "process.env." + "KAFKA_BROKERS";
    expect(readsKafkaBrokers(`const brokers = ${env}?.split(",")`)).toBe(true);
    expect(readsKafkaBrokers(`describe("ledger", () => { it("moves money", () => {}) })`)).toBe(false);
  });

  it("refuses an unknown CORRIDOR_TEST_KAFKA value", () => {
    expect(() => kafkaMode({ CORRIDOR_TEST_KAFKA: "yes" })).toThrow(/auto, reuse, keep, off/);
    expect(kafkaMode({})).toBe("auto");
  });
});

describe("the broker watchdog", () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  async function until(check: () => boolean, ms = 20_000) {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error("condition not met in time");
      await sleep(100);
    }
  }
  const idle = (name: string) => spawn(process.execPath, ["-e", `process.title=${JSON.stringify(name)}; setInterval(() => {}, 1000)`], { stdio: "ignore" });

  it("stops a run's broker once the run's process is gone, and deletes its folder", async () => {
    // A stand-in owner (the test run) and a stand-in broker (any process): no JVM needed.
    const owner = idle("fake-vitest");
    const fakeBroker = idle("fake-kafka");
    const port = 39000 + Math.floor(Math.random() * 900) * 2;
    const dir = resolve(import.meta.dirname, "../../.cache/kafka", String(port));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "broker.pid"), String(fakeBroker.pid));
    try {
      startWatchdog({ ownerPid: owner.pid!, brokerPid: fakeBroker.pid!, port, ephemeral: true, pollMs: 100 });
      await sleep(500);
      expect(alive(fakeBroker.pid!)).toBe(true); // the owner lives: the broker stays
      owner.kill("SIGKILL");
      await until(() => !alive(fakeBroker.pid!));
      await until(() => !existsSync(dir));
    } finally {
      owner.kill("SIGKILL");
      fakeBroker.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
