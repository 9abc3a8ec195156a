import { describe, expect, it } from "vitest";
import { restartDelayMs } from "../../scripts/split-restart.js";

describe("start:split's restart back-off", () => {
  it("doubles from the base wait on each restart in a row and never exceeds the ceiling", () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => restartDelayMs(n, 1_000, 30_000))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(restartDelayMs(1_000, 1_000, 30_000)).toBe(30_000);
  });

  it("restarts at once when the base wait is 0", () => {
    expect(restartDelayMs(3, 0, 30_000)).toBe(0);
  });
});
