import { randomUUID } from "node:crypto";
import fc from "fast-check";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { boardedCopies, CHANGING_TTL_MS, COPY_MAX_AGE_MS, configVersion, memoryConfigBoard, redisConfigBoard, type ConfigBoard } from "../src/clients/config-board.js";

// The Redis board runs against a real Redis (REDIS_URL; CI sets it), under a prefix of its own.
const redisUrl = process.env.REDIS_URL;
let redis: Redis | undefined;
beforeAll(async () => {
  if (!redisUrl) return;
  const { Redis } = await import("ioredis");
  redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  await redis?.quit();
});

const boards: { kind: string; skip: string | false; make(): ConfigBoard }[] = [
  { kind: "memory", skip: false, make: () => memoryConfigBoard() },
  { kind: "Redis", skip: redisUrl ? false : "REDIS_URL is not set", make: () => redisConfigBoard(redis!, `test:config-board:${randomUUID()}:`) },
];

describe.each(boards)("the $kind config board", ({ skip, make }) => {
  it.skipIf(skip)("shows nothing for a platform it has not heard of", async () => {
    expect(await make().read("p1")).toEqual({ kind: "unknown" });
  });

  it.skipIf(skip)("shows a change in progress, then the version published after it", async () => {
    const board = make();
    await board.markChanging("p1");
    expect(await board.read("p1")).toEqual({ kind: "changing" });
    await board.publish("p1", 1_000n);
    expect(await board.read("p1")).toEqual({ kind: "version", version: 1_000n });
    expect(await board.read("p2")).toEqual({ kind: "unknown" });
  });

  it.skipIf(skip)("never goes back to an older version, comparing as numbers (999 < 1000)", async () => {
    const board = make();
    await board.publish("p1", 1_000n);
    await board.publish("p1", 999n);
    expect(await board.read("p1")).toEqual({ kind: "version", version: 1_000n });
    await board.publish("p1", 1_001n);
    expect(await board.read("p1")).toEqual({ kind: "version", version: 1_001n });
    const big = configVersion(new Date("2026-11-24T10:00:00.123Z"));
    await board.publish("p1", big);
    expect(await board.read("p1")).toEqual({ kind: "version", version: big });
  });

  it.skipIf(skip)("keeps an offered version only where it shows nothing", async () => {
    const board = make();
    await board.offer("p1", 5n);
    expect(await board.read("p1")).toEqual({ kind: "version", version: 5n });
    await board.offer("p1", 7n);
    expect(await board.read("p1")).toEqual({ kind: "version", version: 5n });
    await board.markChanging("p2");
    await board.offer("p2", 7n);
    expect(await board.read("p2")).toEqual({ kind: "changing" });
  });

  it.skipIf(skip)("shows a change in progress until every change that marked it has published", async () => {
    const board = make();
    await board.publish("p1", 5n);
    await board.markChanging("p1");
    await board.markChanging("p1");
    await board.publish("p1", 6n);
    expect(await board.read("p1")).toEqual({ kind: "changing" });
    await board.publish("p1", 7n);
    expect(await board.read("p1")).toEqual({ kind: "version", version: 7n });
  });

  // The property the board exists for: once a change has answered, every read that starts
  // afterwards sees it, however reads, fetches and changes interleave, and when a publish fails.
  it.skipIf(skip)("read-your-writes: a read started after a change answered sees that change or a newer one", async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("read" as const), delays: fc.tuple(fc.nat(3), fc.nat(3)) }),
      fc.record({ kind: fc.constant("change" as const), delays: fc.tuple(fc.nat(3), fc.nat(3)), publishFails: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { maxLength: 8 }), { minLength: 2, maxLength: 5 }), async (actors) => {
        const real = make();
        const board: ConfigBoard = { ...real };
        let committed = 0n;
        let tick = 0;
        const turns = (n: number) => new Promise<void>((r) => (n === 0 ? setImmediate(r) : setTimeout(r, n)));
        // auth-sessions: one change at a time commits (FOR UPDATE), versions rise in commit order.
        let lock = Promise.resolve();
        const readers = Array.from({ length: actors.length }, () =>
          boardedCopies({
            board,
            versionOf: (v: bigint) => v,
            // auth-sessions reads the committed config and offers its version before answering.
            fetch: async () => {
              await turns(1);
              const v = committed;
              await turns(1);
              await real.offer("p1", v);
              return v;
            },
          }),
        );
        const changes: { answeredAt: number; version: bigint }[] = [];
        const reads: { startedAt: number; value: bigint }[] = [];
        await Promise.all(
          actors.map(async (ops, i) => {
            for (const o of ops) {
              await turns(o.delays[0]);
              if (o.kind === "read") {
                const startedAt = tick++;
                reads.push({ startedAt, value: await readers[i]!("p1") });
              } else {
                await real.markChanging("p1");
                let release!: () => void;
                const held = lock;
                lock = new Promise((r) => (release = r));
                await held;
                await turns(o.delays[1]);
                const version = ++committed;
                release();
                if (!o.publishFails) await real.publish("p1", version);
                changes.push({ answeredAt: tick++, version });
              }
            }
          }),
        );
        for (const r of reads) {
          for (const c of changes) if (c.answeredAt < r.startedAt) expect(r.value).toBeGreaterThanOrEqual(c.version);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe("boardedCopies", () => {
  // The fetch stands for auth-sessions' GetPlatformConfig, which offers its answer to the board.
  const counting = (board: ConfigBoard | undefined, now: () => number = Date.now) => {
    let version = 10n;
    let fetches = 0;
    const get = boardedCopies({
      board,
      now,
      versionOf: (v: bigint) => v,
      fetch: async () => {
        fetches++;
        await board?.offer("p1", version).catch(() => {});
        return version;
      },
    });
    return { get, fetches: () => fetches, setVersion: (v: bigint) => (version = v) };
  };

  it("without a board asks every time", async () => {
    const c = counting(undefined);
    await c.get("p1");
    await c.get("p1");
    expect(c.fetches()).toBe(2);
  });

  it("fetches while the board is empty, then answers from its copy while the board shows that version", async () => {
    const board = memoryConfigBoard();
    const c = counting(board);
    expect(await c.get("p1")).toBe(10n);
    expect(await board.read("p1")).toEqual({ kind: "version", version: 10n });
    expect(await c.get("p1")).toBe(10n);
    expect(await c.get("p1")).toBe(10n);
    expect(c.fetches()).toBe(1);
  });

  it("asks again once the board shows a newer version, and while a change is in progress", async () => {
    const board = memoryConfigBoard();
    const c = counting(board);
    await c.get("p1");
    await board.markChanging("p1");
    await c.get("p1");
    await c.get("p1");
    expect(c.fetches()).toBe(3);
    c.setVersion(11n);
    await board.publish("p1", 11n);
    expect(await c.get("p1")).toBe(11n);
    expect(await c.get("p1")).toBe(11n);
    expect(c.fetches()).toBe(4);
  });

  it("asks again after COPY_MAX_AGE_MS whatever the board shows", async () => {
    let now = 0;
    const board = memoryConfigBoard(() => now);
    const c = counting(board, () => now);
    await c.get("p1");
    now += COPY_MAX_AGE_MS - 1;
    await c.get("p1");
    expect(c.fetches()).toBe(1);
    now += 1;
    await c.get("p1");
    expect(c.fetches()).toBe(2);
  });

  it("a change's mark expires when its publish never came, and the board fills again from a fetch", async () => {
    let now = 0;
    const board = memoryConfigBoard(() => now);
    const c = counting(board, () => now);
    await board.markChanging("p1");
    await c.get("p1");
    expect(await board.read("p1")).toEqual({ kind: "changing" });
    now += CHANGING_TTL_MS;
    expect(await board.read("p1")).toEqual({ kind: "unknown" });
    await c.get("p1");
    expect(await board.read("p1")).toEqual({ kind: "version", version: 10n });
    await c.get("p1");
    expect(c.fetches()).toBe(2);
  });

  it("a change whose publish never came keeps the platform changing until its mark expires, though another change published", async () => {
    let now = 0;
    const board = memoryConfigBoard(() => now);
    await board.publish("p1", 5n);
    await board.markChanging("p1"); // its publish is lost
    now += 1_000;
    await board.markChanging("p1");
    await board.publish("p1", 7n);
    expect(await board.read("p1")).toEqual({ kind: "changing" });
    now += CHANGING_TTL_MS;
    expect(await board.read("p1")).toEqual({ kind: "unknown" });
  });

  it("never writes the board itself: a board nobody else writes stays empty and every read asks", async () => {
    const board = memoryConfigBoard();
    const get = boardedCopies({ board, versionOf: (v: bigint) => v, fetch: async () => 10n });
    let fetches = 0;
    const counted = boardedCopies({
      board,
      versionOf: (v: bigint) => v,
      fetch: async () => {
        fetches++;
        return 10n;
      },
    });
    await get("p1");
    await counted("p1");
    await counted("p1");
    expect(await board.read("p1")).toEqual({ kind: "unknown" });
    expect(fetches).toBe(2);
  });

  it("a board that cannot be read means asking auth-sessions, and its errors do not fail the read", async () => {
    const failing: ConfigBoard = {
      read: async () => ({ kind: "unknown" }),
      markChanging: async () => {
        throw new Error("down");
      },
      publish: async () => {
        throw new Error("down");
      },
      offer: async () => {
        throw new Error("down");
      },
    };
    const c = counting(failing);
    expect(await c.get("p1")).toBe(10n);
    expect(await c.get("p1")).toBe(10n);
    expect(c.fetches()).toBe(2);
  });
});
