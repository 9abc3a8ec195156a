import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { pollingWorker } from "../src/worker.js";

const log = { warn: vi.fn() };

describe("pollingWorker", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("runs the first pass at once, then one every pollMs, and none after stop", async () => {
    let passes = 0;
    const w = pollingWorker({ name: "t", pass: async () => passes++, pollMs: 1000, log });
    w.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(passes).toBe(2);
    await w.stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(passes).toBe(2);
  });

  it("logs a failed pass and retries on the next poll", async () => {
    let passes = 0;
    const warn = vi.fn();
    const w = pollingWorker({
      name: "flaky",
      pass: async () => {
        if (passes++ === 0) throw new Error("boom");
      },
      pollMs: 10,
      log: { warn },
    });
    w.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(passes).toBe(2);
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ worker: "flaky" }), expect.any(String));
    await w.stop();
  });

  it("backs off while passes keep failing (pollMs doubled per failure, capped), and polls at pollMs again after a success", async () => {
    let passes = 0;
    let down = true;
    const w = pollingWorker({
      name: "db-down",
      pass: async () => {
        passes++;
        if (down) throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
      },
      pollMs: 100,
      maxBackoffMs: 400,
      log,
    });
    w.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(1); // failed: 100 ms
    await vi.advanceTimersByTimeAsync(100);
    expect(passes).toBe(2); // failed twice: 200 ms
    await vi.advanceTimersByTimeAsync(199);
    expect(passes).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(passes).toBe(3); // three times: 400 ms (the cap)
    await vi.advanceTimersByTimeAsync(400);
    expect(passes).toBe(4); // still capped at 400 ms
    down = false;
    await vi.advanceTimersByTimeAsync(400);
    expect(passes).toBe(5); // succeeded: back to pollMs
    await vi.advanceTimersByTimeAsync(100);
    expect(passes).toBe(6);
    await w.stop();
  });

  it("waits what nextPollMs says after a pass, and pollMs after a failed one", async () => {
    const pending = [1, 0, 0];
    let passes = 0;
    const w = pollingWorker({
      name: "adaptive",
      pass: async () => {
        passes++;
        if (passes === 4) throw new Error("boom");
        return pending.shift() ?? 0;
      },
      pollMs: 100,
      nextPollMs: (left) => (left > 0 ? 100 : 5_000),
      log,
    });
    w.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(1); // something left: the next pass 100 ms later
    await vi.advanceTimersByTimeAsync(100);
    expect(passes).toBe(2); // nothing left: 5 s
    await vi.advanceTimersByTimeAsync(4_999);
    expect(passes).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(passes).toBe(3);
    w.wake(); // something new: at once, whatever the pause
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(4); // this one failed: pollMs, not the idle pause
    await vi.advanceTimersByTimeAsync(100);
    expect(passes).toBe(5);
    await w.stop();
  });

  it("wake brings the next pass forward, after a pass in progress, without overlapping passes", async () => {
    let passes = 0;
    let active = 0;
    let maxActive = 0;
    let release: (() => void) | undefined;
    const results: number[] = [];
    const w = pollingWorker({
      name: "woken",
      pass: async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        passes++;
        if (passes === 1) await new Promise<void>((r) => (release = r));
        active--;
        return passes;
      },
      pollMs: 60_000,
      log,
      onPass: (n) => results.push(n),
    });
    w.start();
    w.wake(); // during the first pass: runs again right after it
    release!();
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(2);
    w.wake(); // asleep: runs now instead of in a minute
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(3);
    expect(maxActive).toBe(1);
    expect(results).toEqual([1, 2, 3]);
    await w.stop();
  });

  it("stop waits for a pass in progress", async () => {
    let finished = false;
    let release: (() => void) | undefined;
    const w = pollingWorker({
      name: "slow",
      pass: async () => {
        await new Promise<void>((r) => (release = r));
        finished = true;
      },
      pollMs: 10,
      log,
    });
    w.start();
    const stopping = w.stop();
    release!();
    await stopping;
    expect(finished).toBe(true);
  });
});
