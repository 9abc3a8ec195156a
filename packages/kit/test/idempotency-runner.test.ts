import { describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { AppError } from "../src/errors.js";
import type { IdempotencyClaim, IdempotencyKeyRef } from "../src/idempotency.js";
import { createIdempotencyRunner, type IdempotencyKeyStore } from "../src/idempotency-runner.js";

/** An in-memory key store: enough to prove the runner's decisions (the table is tested in idempotency.test.ts). */
function memoryKeys() {
  const rows = new Map<string, { hash: string; state: "in_flight" | "done"; body?: unknown }>();
  const released: string[] = [];
  const store: IdempotencyKeyStore = {
    async claim(ref): Promise<IdempotencyClaim> {
      const row = rows.get(ref.key);
      if (!row) {
        rows.set(ref.key, { hash: ref.requestHash, state: "in_flight" });
        return { kind: "new" };
      }
      if (row.hash !== ref.requestHash) return { kind: "conflict" };
      return row.state === "done" ? { kind: "replay", status: 200, body: row.body } : { kind: "in_flight" };
    },
    async release(ref) {
      released.push(ref.key);
      if (rows.get(ref.key)?.state === "in_flight") rows.delete(ref.key);
    },
  };
  const complete = (ref: IdempotencyKeyRef, body: unknown) => rows.set(ref.key, { hash: ref.requestHash, state: "done", body });
  return { store, rows, released, complete };
}

describe("createIdempotencyRunner", () => {
  const clock = new ManualClock();

  it("runs the effect once and replays the stored answer for the same request", async () => {
    const keys = memoryKeys();
    const run = createIdempotencyRunner(keys.store, clock);
    let effects = 0;
    const effect = async (ref: IdempotencyKeyRef | undefined) => {
      effects++;
      keys.complete(ref!, { id: "t1" });
      return { id: "t1" };
    };
    const first = await run({ platformId: "p", key: "k", request: { a: 1 } }, effect, (s) => s.body as { id: string });
    const again = await run({ platformId: "p", key: "k", request: { a: 1 } }, effect, (s) => s.body as { id: string });
    expect(first).toEqual({ value: { id: "t1" }, replayed: false });
    expect(again).toEqual({ value: { id: "t1" }, replayed: true });
    expect(effects).toBe(1);
  });

  it("refuses the same key with another request (IDEMPOTENCY_KEY_REUSED) and a key in flight (IDEMPOTENCY_KEY_IN_USE)", async () => {
    const keys = memoryKeys();
    const run = createIdempotencyRunner(keys.store, clock);
    let release!: () => void;
    const first = run({ platformId: "p", key: "k", request: 1 }, () => new Promise<number>((r) => (release = () => r(1))), () => 0);
    await expect(run({ platformId: "p", key: "k", request: 1 }, async () => 2, () => 0)).rejects.toMatchObject({ outcome: "CONFLICT", code: "IDEMPOTENCY_KEY_IN_USE" });
    await expect(run({ platformId: "p", key: "k", request: 2 }, async () => 2, () => 0)).rejects.toMatchObject({ outcome: "UNPROCESSABLE", code: "IDEMPOTENCY_KEY_REUSED" });
    release();
    await first;
  });

  it("releases the key when the effect fails, so a retry runs", async () => {
    const keys = memoryKeys();
    const run = createIdempotencyRunner(keys.store, clock);
    await expect(run({ platformId: "p", key: "k", request: 1 }, async () => { throw new Error("no effect"); }, () => 0)).rejects.toThrow("no effect");
    expect(keys.released).toEqual(["k"]);
    expect((await run({ platformId: "p", key: "k", request: 1 }, async () => 7, () => 0)).value).toBe(7);
  });

  it("runs without a key, namespaces keys, and checks a key's characters when asked", async () => {
    const keys = memoryKeys();
    const run = createIdempotencyRunner(keys.store, clock);
    expect(await run({ platformId: "p", key: "", request: 1 }, async (ref) => ref, () => undefined)).toEqual({ value: undefined, replayed: false });
    await run({ platformId: "p", key: "k", namespace: "agent/a1", request: 1 }, async () => 1, () => 0);
    expect([...keys.rows.keys()]).toEqual(["agent/a1/k"]);
    const refused = await run({ platformId: "p", key: "caf\u00e9", checkKey: true, request: 1 }, async () => 1, () => 0).catch((e) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ outcome: "INVALID", code: "INVALID_INPUT" });
  });
});
