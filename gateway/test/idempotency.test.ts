import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { AppError, createLogger, errors, toConnectError, type Outcome } from "@corridor/kit";
import { Permission } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildGateway } from "../src/app.js";
import {
  MemoryIdempotencyRegistry,
  RedisIdempotencyRegistry,
  filledPath,
  openAnswer,
  requestFingerprint,
  sealAnswer,
  settlementOf,
  type IdempotencyRegistry,
} from "../src/idempotency.js";
import { FakeServices } from "./fakes.js";

const V = "/2025-10-13";
const log = createLogger("gateway-test", "silent");
const redisUrl = process.env.REDIS_URL;
const basic = (c: { clientId: string; clientSecret: string }) =>
  `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString("base64")}`;

// ---------------------------------------------------------------------------------------------
// The registry contract, run against the in-process store and (with REDIS_URL) against Redis.

interface RegistryHarness {
  registry: IdempotencyRegistry;
  /** Moves past the claims' lifetime. */
  expire(): Promise<void>;
  /** Moves past a lease of LEASE_MS. */
  pastLease(): Promise<void>;
  close(): Promise<void>;
}

function memoryHarness(): RegistryHarness {
  let now = 1_000_000;
  const registry = new MemoryIdempotencyRegistry(60_000, () => now);
  return {
    registry,
    expire: async () => {
      now += 60_001;
    },
    pastLease: async () => {
      now += LEASE_MS + 1;
    },
    close: () => registry.close(),
  };
}

function redisHarness(): RegistryHarness {
  const redis = new Redis(redisUrl!, { maxRetriesPerRequest: 1 });
  const ttlMs = 300;
  const registry = new RedisIdempotencyRegistry(redis, ttlMs, `corridor:test:idem:${randomUUID()}:`);
  return {
    registry,
    expire: () => new Promise((r) => setTimeout(r, ttlMs + 100)),
    pastLease: () => new Promise((r) => setTimeout(r, LEASE_MS + 20)),
    close: async () => {
      await registry.close();
      await redis.quit();
    },
  };
}

/** The lease the recorded-key tests give a claim (Redis judges it by its own clock). */
const LEASE_MS = 150;

const harnesses: [string, () => RegistryHarness, boolean][] = [
  ["memory", memoryHarness, false],
  ["redis", redisHarness, !redisUrl],
];

describe.each(harnesses)("idempotency registry (%s)", (_name, make, skip) => {
  let h: RegistryHarness;
  let r: IdempotencyRegistry;
  const scope = () => ({ platformId: `Platform:${randomUUID()}`, key: "k1" });

  beforeEach(() => {
    if (skip) return;
    h = make();
    r = h.registry;
  });
  afterEach(async () => {
    if (!skip) await h.close();
  });

  it.skipIf(skip)("claims a key on first use, lets the same fingerprint join and refuses another", async () => {
    const s = scope();
    expect(await r.claim(s, "fp1")).toBe("claimed");
    expect(await r.claim(s, "fp1")).toBe("joined");
    expect(await r.claim(s, "fp2")).toBe("conflict");
  });

  it.skipIf(skip)("keeps the keys of two platforms apart", async () => {
    const a = scope();
    const b = { ...scope(), key: a.key };
    expect(await r.claim(a, "fp1")).toBe("claimed");
    expect(await r.claim(b, "fp2")).toBe("claimed");
    expect(await r.claim({ ...a, key: "k2" }, "fp2")).toBe("claimed");
  });

  it.skipIf(skip)("releases a claim whose only request failed, so a corrected request can claim the key", async () => {
    const s = scope();
    await r.claim(s, "fp1");
    expect(await r.settle(s, "fp1", "failed")).toBe(true);
    expect(await r.claim(s, "fp2")).toBe("claimed");
  });

  it.skipIf(skip)("never releases a committed claim", async () => {
    const s = scope();
    await r.claim(s, "fp1");
    expect(await r.settle(s, "fp1", "committed")).toBe(false);
    expect(await r.claim(s, "fp1")).toBe("joined");
    expect(await r.settle(s, "fp1", "failed")).toBe(false);
    expect(await r.claim(s, "fp2")).toBe("conflict");
  });

  it.skipIf(skip)("releases only once the last request under the claim failed", async () => {
    const s = scope();
    await r.claim(s, "fp1"); // A
    await r.claim(s, "fp1"); // B, a duplicate still running
    expect(await r.settle(s, "fp1", "failed")).toBe(false); // A failed; B may still succeed
    expect(await r.claim(s, "fp2")).toBe("conflict");
    expect(await r.settle(s, "fp1", "failed")).toBe(true); // B failed too
    expect(await r.claim(s, "fp2")).toBe("claimed");
  });

  it.skipIf(skip)("treats the service's own idempotency answers as saying nothing about the effect", async () => {
    const s = scope();
    await r.claim(s, "fp1"); // A, running in the service
    await r.claim(s, "fp1"); // B, answered 409 IDEMPOTENCY_KEY_IN_USE
    expect(await r.settle(s, "fp1", "undecided")).toBe(false);
    expect(await r.settle(s, "fp1", "failed")).toBe(true); // A failed: nothing committed, nobody running

    const t = scope();
    await r.claim(t, "fp1");
    expect(await r.settle(t, "fp1", "undecided")).toBe(false);
    expect(await r.claim(t, "fp2")).toBe("conflict");
  });

  it.skipIf(skip)("ignores a settlement for another fingerprint", async () => {
    const s = scope();
    await r.claim(s, "fp1");
    expect(await r.settle(s, "fp2", "failed")).toBe(false);
    expect(await r.claim(s, "fp2")).toBe("conflict");
  });

  it.skipIf(skip)("forgets claims after their lifetime (24 h in the gateway)", async () => {
    const s = scope();
    await r.claim(s, "fp1");
    await r.settle(s, "fp1", "committed");
    await h.expire();
    expect(await r.claim(s, "fp2")).toBe("claimed");
  });
});

describe.each(harnesses)("gateway-recorded keys in the registry (%s)", (_name, make, skip) => {
  let h: RegistryHarness;
  let r: IdempotencyRegistry;
  const scope = () => ({ platformId: `Platform:${randomUUID()}`, key: "k1" });

  beforeEach(() => {
    if (skip) return;
    h = make();
    r = h.registry;
  });
  afterEach(async () => {
    if (!skip) await h.close();
  });

  it.skipIf(skip)("lets one request run under a key, answers the others in_use, then replays the recorded answer", async () => {
    const s = scope();
    expect(await r.claimRecorded(s, "fp1", "req-a", 60_000)).toEqual({ kind: "claimed" });
    expect(await r.claimRecorded(s, "fp1", "req-b", 60_000)).toEqual({ kind: "in_use" });
    expect(await r.claimRecorded(s, "fp2", "req-c", 60_000)).toEqual({ kind: "conflict" });
    await r.record(s, "fp1", "answer-1");
    await r.record(s, "fp1", "answer-2"); // the first answer stays
    expect(await r.claimRecorded(s, "fp1", "req-d", 60_000)).toEqual({ kind: "replay", answer: "answer-1" });
    expect(await r.release(s, "fp1", "req-a")).toBe(false); // answered: never released
    expect(await r.claimRecorded(s, "fp2", "req-e", 60_000)).toEqual({ kind: "conflict" });
  });

  it.skipIf(skip)("releases a key only for the request holding it, so a corrected request can use it", async () => {
    const s = scope();
    await r.claimRecorded(s, "fp1", "req-a", 60_000);
    expect(await r.release(s, "fp1", "req-b")).toBe(false);
    expect(await r.release(s, "fp2", "req-a")).toBe(false);
    expect(await r.release(s, "fp1", "req-a")).toBe(true);
    expect(await r.claimRecorded(s, "fp2", "req-c", 60_000)).toEqual({ kind: "claimed" });
  });

  it.skipIf(skip)("gives the key to the same request again once an unanswered holder's lease ran out, never to another body", async () => {
    const s = scope();
    await r.claimRecorded(s, "fp1", "req-a", LEASE_MS);
    await h.pastLease();
    expect(await r.claimRecorded(s, "fp2", "req-b", LEASE_MS)).toEqual({ kind: "conflict" });
    expect(await r.claimRecorded(s, "fp1", "req-c", 60_000)).toEqual({ kind: "claimed" });
    expect(await r.release(s, "fp1", "req-a")).toBe(false); // no longer the holder
    expect(await r.claimRecorded(s, "fp1", "req-d", 60_000)).toEqual({ kind: "in_use" });
  });

  it.skipIf(skip)("shares the key space with the service routes' claims", async () => {
    const s = scope();
    expect(await r.claim(s, "fp-service")).toBe("claimed");
    expect(await r.claimRecorded(s, "fp-gateway", "req-a", 60_000)).toEqual({ kind: "conflict" });
    const t = scope();
    await r.claimRecorded(t, "fp-gateway", "req-a", 60_000);
    expect(await r.claim(t, "fp-service")).toBe("conflict");
  });
});

describe("sealed answers", () => {
  const answer = { status: 201, headers: { "content-type": "application/json; charset=utf-8" }, body: '{"clientSecret":"s3cret"}' };

  it("open only with the key and platform they were sealed under, and hide the body", () => {
    const scope = { platformId: "Platform:a", key: "k1" };
    const sealed = sealAnswer(scope, answer);
    expect(sealed).not.toContain("s3cret");
    expect(openAnswer(scope, sealed)).toEqual(answer);
    expect(openAnswer({ ...scope, key: "k2" }, sealed)).toBeUndefined();
    expect(openAnswer({ ...scope, platformId: "Platform:b" }, sealed)).toBeUndefined();
    expect(openAnswer(scope, sealed.slice(0, -2) + (sealed.endsWith("AA") ? "BB" : "AA"))).toBeUndefined();
  });
});

describe("request fingerprint", () => {
  it("covers method, the filled-in path and the body, not key order or whitespace", () => {
    const path = filledPath("/2025-10-13/quotes/:quoteId/execute", { quoteId: "Quote:1" });
    expect(path).toBe("/2025-10-13/quotes/Quote%3A1/execute");
    const a = requestFingerprint("POST", "/2025-10-13/transfer-out", { amount: 1, source: { accountId: "x" } });
    expect(requestFingerprint("POST", "/2025-10-13/transfer-out", { source: { accountId: "x" }, amount: 1 })).toBe(a);
    expect(requestFingerprint("POST", "/2025-10-13/transfer-in", { amount: 1, source: { accountId: "x" } })).not.toBe(a);
    expect(requestFingerprint("POST", "/2025-10-13/transfer-out", { amount: 2, source: { accountId: "x" } })).not.toBe(a);
    expect(requestFingerprint("POST", path, undefined)).not.toBe(requestFingerprint("POST", filledPath("/2025-10-13/quotes/:quoteId/execute", { quoteId: "Quote:2" }), undefined));
  });

  it("classifies errors: service refusals free the key, its idempotency answers and lost calls do not", () => {
    // Built as a service sends it: an AppError carried in a ConnectError's PublicError detail.
    const fromService = (outcome: Outcome, code: string) => toConnectError(new AppError(outcome, code, "x"));
    expect(settlementOf(fromService("INVALID", "INSUFFICIENT_BALANCE"))).toBe("failed");
    expect(settlementOf(fromService("CONFLICT", "IDEMPOTENCY_KEY_IN_USE"))).toBe("undecided");
    expect(settlementOf(fromService("UNPROCESSABLE", "IDEMPOTENCY_KEY_REUSED"))).toBe("undecided");
    expect(settlementOf(new ConnectError("connect ECONNREFUSED", Code.Unavailable))).toBe("committed");
    expect(settlementOf(new ConnectError("deadline", Code.DeadlineExceeded))).toBe("committed");
    // A service that died mid-call: the connection reset (connect-node answers Aborted, or Unknown
    // with the socket error as cause); its effect may have committed.
    expect(settlementOf(new ConnectError("read ECONNRESET", Code.Aborted))).toBe("committed");
    expect(settlementOf(new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled))).toBe("committed");
    expect(settlementOf(new ConnectError("socket hang up", Code.Unknown, undefined, undefined, Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })))).toBe("committed");
    // The service's database failed under it: the failure may have struck at the commit.
    expect(settlementOf(fromService("UNAVAILABLE", "SERVICE_UNAVAILABLE"))).toBe("committed");
    expect(settlementOf(new Error("mapper bug"))).toBe("failed");
  });
});

// ---------------------------------------------------------------------------------------------
// Through the gateway, against the fake ledger (one key store per RPC, like separate services).

const gatewayModes: [string, string | undefined, boolean][] = [
  ["in-process registry", undefined, false],
  ["Redis registry", redisUrl, !redisUrl],
];

describe.each(gatewayModes)("Idempotency-Key through the gateway (%s)", (_name, url, skip) => {
  let fakes: FakeServices;
  let app: FastifyInstance;
  let caller: ReturnType<FakeServices["addToken"]>;

  beforeEach(async () => {
    if (skip) return;
    fakes = new FakeServices();
    caller = fakes.addToken({ permissions: [Permission.VIEW, Permission.TRANSACT] });
    app = await buildGateway({ transportFor: fakes.transportFor, log, redisUrl: url });
  });
  afterEach(async () => {
    if (!skip) await app.close();
  });

  const post = (path: string, body: unknown, key?: string, as = caller) =>
    app.inject({
      method: "POST",
      url: `${V}${path}`,
      headers: { authorization: basic(as), ...(key === undefined ? {} : { "idempotency-key": key }) },
      payload: body as object,
    });
  const transfer = (amount: number) => ({ source: { accountId: "InternalAccount:a" }, destination: { accountId: "ExternalAccount:b" }, amount });
  const out = (amount: number, key?: string, as = caller) => post("/transfer-out", transfer(amount), key, as);
  const fund = (amount: number, key?: string, as = caller) => post("/sandbox/internal-accounts/InternalAccount:a/fund", { amount }, key, as);
  const key = () => `k-${randomUUID()}`;

  function expectReused(res: LightMyRequestResponse, k: string) {
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json()).toEqual({ status: 422, code: "IDEMPOTENCY_KEY_REUSED", message: expect.any(String), details: { idempotencyKey: k } });
  }

  it.skipIf(skip)("answers 422 IDEMPOTENCY_KEY_REUSED for a key reused on another route, without calling the service", async () => {
    const k = key();
    expect((await out(100, k)).statusCode).toBe(201);
    const calls = fakes.ledgerCalls;
    expectReused(await fund(100, k), k);
    // The same body on another route is another request too.
    expectReused(await post("/transfer-in", transfer(100), k), k);
    expect(fakes.ledgerCalls).toBe(calls);
    expect(fakes.ledgerEffects).toHaveLength(1);
  });

  it.skipIf(skip)("passes the same request through, and the service replays its first answer", async () => {
    const k = key();
    const first = await out(100, k);
    const again = await out(100, k);
    expect(again.statusCode).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.json()).toEqual(first.json());
    expect(fakes.ledgerCalls).toBe(2);
    expect(fakes.ledgerEffects).toHaveLength(1);
  });

  it.skipIf(skip)("answers 422 for another body on the same route before the service sees it", async () => {
    const k = key();
    await out(100, k);
    const calls = fakes.ledgerCalls;
    expectReused(await out(101, k), k);
    expect(fakes.ledgerCalls).toBe(calls);
  });

  it.skipIf(skip)("frees the key when the service refuses the request, so a corrected retry with it succeeds", async () => {
    const k = key();
    const refused = await out(5000, k);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe("INSUFFICIENT_BALANCE");
    const corrected = await out(500, k);
    expect(corrected.statusCode, corrected.body).toBe(201);
    expect(corrected.headers["idempotent-replayed"]).toBeUndefined();
    // Now the key is the corrected request's.
    expectReused(await fund(500, k), k);
  });

  it.skipIf(skip)("keeps the key when the service could not be reached (its outcome is unknown)", async () => {
    const k = key();
    fakes.ledgerFailNext = new ConnectError("connect ECONNREFUSED 10.0.0.1:8102", Code.Unavailable);
    expect((await out(100, k)).statusCode).toBe(503);
    expectReused(await fund(100, k), k);
    expect((await out(100, k)).statusCode).toBe(201); // the same request retried goes through
  });

  it.skipIf(skip).each([
    ["Canceled: the stream closed with CANCEL, as connect-node answers a call whose service was killed", () => new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled)],
    ["Aborted: ECONNRESET", () => new ConnectError("read ECONNRESET", Code.Aborted)],
  ])("answers 503 with Retry-After when the service dies mid-call after committing (%s), keeps the key, and the retry with it replays the committed effect", async (_what, failure) => {
    const k = key();
    fakes.ledgerLoseAnswerNext = failure();
    const lost = await out(100, k);
    expect(lost.statusCode, lost.body).toBe(503);
    expect(lost.json().code).toBe("SERVICE_UNAVAILABLE");
    expect(Number(lost.headers["retry-after"])).toBeGreaterThan(0);
    expect(fakes.ledgerEffects).toHaveLength(1);
    // Not released as failed: the key still belongs to this request.
    expectReused(await fund(100, k), k);
    const retried = await out(100, k);
    expect(retried.statusCode, retried.body).toBe(201);
    expect(retried.headers["idempotent-replayed"]).toBe("true");
    expect(fakes.ledgerEffects).toHaveLength(1);
  });

  it.skipIf(skip)("keeps the key when the service answers 503 because its database failed (the commit's outcome is unknown)", async () => {
    const k = key();
    fakes.ledgerFailNext = new AppError("UNAVAILABLE", "SERVICE_UNAVAILABLE", "database unavailable");
    const res = await out(100, k);
    expect(res.statusCode).toBe(503);
    expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    expectReused(await fund(100, k), k);
    expect((await out(100, k)).statusCode).toBe(201); // the same request retried goes through
  });

  it.skipIf(skip)("keeps the key while a duplicate runs, and frees it when that one fails", async () => {
    const k = key();
    let open!: () => void;
    fakes.ledgerGate = new Promise<void>((r) => (open = r));
    fakes.ledgerFailNext = errors.badRequest("INSUFFICIENT_BALANCE", "too low");
    const first = out(100, k);
    await expect.poll(() => fakes.ledgerCalls).toBe(1); // the first request waits inside the service

    const duplicate = await out(100, k);
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json().code).toBe("IDEMPOTENCY_KEY_IN_USE");
    expectReused(await fund(100, k), k); // still claimed by the running request

    open();
    expect((await first).statusCode).toBe(400);
    expect((await fund(100, k)).statusCode).toBe(200);
  });

  it.skipIf(skip)("scopes keys to the platform", async () => {
    const other = fakes.addToken({ permissions: [Permission.VIEW, Permission.TRANSACT] });
    const k = key();
    expect((await out(100, k)).statusCode).toBe(201);
    expect((await fund(100, k, other)).statusCode).toBe(200);
    expect(fakes.ledgerEffects.map((e) => e.platformId)).toEqual([caller.platformId, other.platformId]);
  });

  it.skipIf(skip)("does not track requests without a key", async () => {
    expect((await out(100)).statusCode).toBe(201);
    expect((await out(100)).statusCode).toBe(201);
    expect((await fund(100)).statusCode).toBe(200);
    expect(fakes.ledgerEffects).toHaveLength(3);
  });

  it.skipIf(skip)("validates the header: 1 to 255 printable characters, else 400 on headers.idempotency-key", async () => {
    for (const bad of ["", "x".repeat(256), "caf\u00e9", "a\tb"]) {
      const res = await out(100, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().code).toBe("INVALID_INPUT");
      expect(new Set(res.json().details.errors.map((e: { field: string }) => e.field))).toEqual(new Set(["headers.idempotency-key"]));
    }
    expect(fakes.ledgerCalls).toBe(0);
    expect((await out(100, `a key with spaces ${"~".repeat(200)}`.slice(0, 255))).statusCode).toBe(201);
  });
});

describe("Idempotency-Key when the registry is down", () => {
  const fakes = new FakeServices();
  let app: FastifyInstance;
  afterAll(async () => app?.close());

  it("passes requests through (each service still guards its own routes)", async () => {
    // Nothing listens on port 1: Redis commands fail at once; the auth cache and the rate limiter fall back too.
    app = await buildGateway({ transportFor: fakes.transportFor, log, redisUrl: "redis://127.0.0.1:1" });
    const caller = fakes.addToken({ permissions: [Permission.VIEW, Permission.TRANSACT] });
    const res = await app.inject({
      method: "POST",
      url: `${V}/transfer-out`,
      headers: { authorization: basic(caller), "idempotency-key": "k1" },
      payload: { source: { accountId: "InternalAccount:a" }, destination: { accountId: "ExternalAccount:b" }, amount: 1 },
    });
    expect(res.statusCode, res.body).toBe(201);
  });
});
