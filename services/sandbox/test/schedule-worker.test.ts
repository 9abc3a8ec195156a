import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { scheduleWorker } from "../src/workers/schedule.js";

describe("sandbox-schedule worker", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("looks every pollMs while anything is pending, rests idlePollMs while nothing is, and wake() ends the rest", async () => {
    let pending = false;
    let passes = 0;
    const simulator = {
      fireDue: async () => {
        passes++;
        return 0;
      },
      anyPending: async () => pending,
    };
    const w = scheduleWorker(simulator, { pollMs: 1_000, idlePollMs: 10_000, log: { debug() {}, warn() {} } });
    w.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(passes).toBe(1); // nothing pending: no pass every second
    pending = true;
    w.wake(); // an action was scheduled and committed
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(passes).toBe(3); // pending: every second, as before
    pending = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(passes).toBe(4); // this pass found nothing left
    await vi.advanceTimersByTimeAsync(9_999);
    expect(passes).toBe(4);
    await vi.advanceTimersByTimeAsync(1);
    expect(passes).toBe(5); // the rest ends by itself too (another replica's leftovers)
    await w.stop();
  });
});
