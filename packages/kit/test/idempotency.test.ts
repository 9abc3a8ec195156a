import { create } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { migrateSchema, type DatabaseHandle, type Kysely } from "../src/db/index.js";
import { AppError } from "../src/errors.js";
import { completeIdempotencyKeyAtCommit, inTransaction } from "../src/outbox/batch.js";
import { enqueueEvent } from "../src/outbox/enqueue.js";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  IDEMPOTENCY_KEY_TTL_MS,
  pruneIdempotencyKeys,
  releaseIdempotencyKey,
  requestHash,
} from "../src/idempotency.js";
import { databaseKinds, openTestDatabase } from "./db-fixture.js";

describe("requestHash", () => {
  it("hashes bodies that differ only in key order or undefined members the same", () => {
    expect(requestHash({ a: 1, b: { c: [1, 2], d: "x" }, e: undefined })).toBe(requestHash({ b: { d: "x", c: [1, 2] }, a: 1 }));
  });

  it("hashes bodies with different values, array order or nesting differently", () => {
    const base = requestHash({ amount: 100, currency: "USD", tags: ["a", "b"] });
    expect(requestHash({ amount: 101, currency: "USD", tags: ["a", "b"] })).not.toBe(base);
    expect(requestHash({ amount: 100, currency: "USD", tags: ["b", "a"] })).not.toBe(base);
    expect(requestHash({ amount: "100", currency: "USD", tags: ["a", "b"] })).not.toBe(base);
    expect(requestHash({ amount: 100, currency: { code: "USD" }, tags: ["a", "b"] })).not.toBe(base);
  });

  it("treats a bigint amount like the same JSON number", () => {
    expect(requestHash({ amount: 9_000_000_000_000_000n })).toBe(requestHash({ amount: 9_000_000_000_000_000 }));
  });

  it("is a SHA-256 hex digest", () => {
    expect(requestHash({})).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe.each(databaseKinds)("idempotency keys on $kind", ({ kind, skip }) => {
  let handle: DatabaseHandle;
  let dispose: () => Promise<void>;
  let db: Kysely<any>;
  let clock: ManualClock;
  let seq = 0;

  beforeAll(async () => {
    if (skip) return;
    ({ handle, dispose } = await openTestDatabase(kind));
    await migrateSchema(handle, "idem", "/nonexistent/kit-test-migrations");
    db = handle.forSchema("idem");
    await db.schema.createTable("transfers").addColumn("id", "text").execute();
  });
  afterAll(async () => {
    await dispose?.();
  });
  beforeEach((ctx) => {
    if (skip) return ctx.skip();
    clock = new ManualClock();
    seq++;
  });

  const ref = (body: unknown = { amount: 100 }) => ({ platformId: "Platform:1", key: `key-${seq}`, requestHash: requestHash(body) });
  const claim = (r = ref(), leaseMs?: number) => claimIdempotencyKey(db, { ...r, now: clock.now(), leaseMs });

  /** The money transaction of a request: effect plus stored response, committed together. */
  async function runEffect(r: ReturnType<typeof ref>, opts: { fail?: boolean } = {}) {
    await db.transaction().execute(async (trx) => {
      await trx.insertInto("transfers").values({ id: r.key }).execute();
      await completeIdempotencyKey(trx, { ...r, status: 201, body: { id: r.key, amount: 100n } });
      if (opts.fail) throw new Error("effect failed after completing");
    });
  }
  const transfers = async (key: string) => (await db.selectFrom("transfers").selectAll().where("id", "=", key).execute()).length;

  it("answers new for a first use and in_flight for the same request while the first runs", async () => {
    expect(await claim()).toEqual({ kind: "new" });
    expect(await claim()).toEqual({ kind: "in_flight" });
  });

  it("answers conflict for the same key with another body", async () => {
    await claim(ref({ amount: 100 }));
    expect(await claim(ref({ amount: 200 }))).toEqual({ kind: "conflict" });
    await runEffect(ref({ amount: 100 }));
    expect(await claim(ref({ amount: 200 }))).toEqual({ kind: "conflict" });
  });

  it("replays the stored status and body once the effect has committed", async () => {
    const r = ref();
    await claim(r);
    await runEffect(r);
    expect(await claim(r)).toEqual({ kind: "replay", status: 201, body: { id: r.key, amount: 100 } });
    expect(await transfers(r.key)).toBe(1);
  });

  it("stores no response when the effect's transaction rolls back, and a release lets the retry run", async () => {
    const r = ref();
    await claim(r);
    await expect(runEffect(r, { fail: true })).rejects.toThrow("effect failed");
    expect(await claim(r)).toEqual({ kind: "in_flight" });
    await releaseIdempotencyKey(db, r);
    expect(await claim(r)).toEqual({ kind: "new" });
    await runEffect(r);
    expect(await transfers(r.key)).toBe(1);
  });

  it("lets the same request take the key again once a crashed holder's lease has run out, but not another body", async () => {
    const r = ref();
    await claim(r, 5_000);
    clock.advance(4_999);
    expect(await claim(r)).toEqual({ kind: "in_flight" });
    clock.advance(1);
    expect(await claim(ref({ amount: 999 }))).toEqual({ kind: "conflict" });
    expect(await claim(r)).toEqual({ kind: "new" });
  });

  it("refuses to complete for a holder whose lease was taken over and completed by another", async () => {
    const r = ref();
    await claim(r, 1_000);
    clock.advance(1_000);
    expect(await claim(r)).toEqual({ kind: "new" });
    await runEffect(r);
    const late = runEffect(r);
    await expect(late).rejects.toBeInstanceOf(AppError);
    await expect(late).rejects.toMatchObject({ outcome: "CONFLICT", code: "IDEMPOTENCY_KEY_IN_USE" });
    expect(await transfers(r.key)).toBe(1);
  });

  /** runEffect through inTransaction, the completion held for the statement that writes the outbox rows before the commit. */
  async function runEffectAtCommit(r: ReturnType<typeof ref>, opts: { events?: number } = {}) {
    await inTransaction(db, async (trx) => {
      await trx.insertInto("transfers").values({ id: r.key }).execute();
      await completeIdempotencyKeyAtCommit(trx, { ...r, status: 201, body: { id: r.key, amount: 100n } });
      for (let i = 0; i < (opts.events ?? 0); i++) {
        await enqueueEvent(trx, { topic: "idem.test.v1", key: r.key, eventId: `${r.key}-${i}`, eventType: "TEST", schema: TimestampSchema, message: create(TimestampSchema, { seconds: BigInt(i) }) });
      }
    });
  }
  const outboxRows = async (key: string) => (await db.selectFrom("outbox").select("event_id").where("key", "=", key).execute()).length;

  it("completes a key at the commit, with the transaction's outbox rows or alone, and refuses a key completed by another (rolling back)", async () => {
    for (const events of [0, 2]) {
      const r = { ...ref(), key: `key-${seq}-${events}` };
      await claim(r);
      await runEffectAtCommit(r, { events });
      expect(await claim(r)).toEqual({ kind: "replay", status: 201, body: { id: r.key, amount: 100 } });
      expect(await outboxRows(r.key)).toBe(events);
    }
    const r = ref();
    await claim(r, 1_000);
    clock.advance(1_000);
    expect(await claim(r)).toEqual({ kind: "new" });
    await runEffect(r);
    const late = runEffectAtCommit(r, { events: 1 });
    await expect(late).rejects.toMatchObject({ outcome: "CONFLICT", code: "IDEMPOTENCY_KEY_IN_USE" });
    expect(await transfers(r.key)).toBe(1);
    expect(await outboxRows(r.key)).toBe(0);
  });

  it("forgets a key after 24 hours, even for another body", async () => {
    const r = ref();
    await claim(r);
    await runEffect(r);
    clock.advance(IDEMPOTENCY_KEY_TTL_MS - 1);
    expect((await claim(r)).kind).toBe("replay");
    clock.advance(1);
    expect(await claim(ref({ amount: 5 }))).toEqual({ kind: "new" });
  });

  it("prunes only expired keys", async () => {
    await claim(ref({ a: 1 }));
    clock.advance(IDEMPOTENCY_KEY_TTL_MS);
    expect(await pruneIdempotencyKeys(db, clock.now())).toBeGreaterThanOrEqual(1);
    const left = await db.selectFrom("idempotency_keys").select("key").where("expires_at", "<=", clock.now()).execute();
    expect(left).toEqual([]);
  });

  it("gives exactly one of N concurrent claims of one key the right to run", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 16 }), fc.boolean(), async (n, sameBody) => {
        seq++;
        const results = await Promise.all(
          Array.from({ length: n }, (_, i) => claim(ref(sameBody ? { amount: 1 } : { amount: 1, attempt: i }))),
        );
        const kinds = results.map((x) => x.kind);
        expect(kinds.filter((k) => k === "new")).toHaveLength(1);
        expect(kinds.every((k) => k === "new" || k === (sameBody ? "in_flight" : "conflict"))).toBe(true);
      }),
      { numRuns: 15 },
    );
  });
});
