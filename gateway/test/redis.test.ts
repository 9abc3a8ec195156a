import { createLogger } from "@corridor/kit";
import { Permission } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGateway } from "../src/app.js";
import { FakeServices } from "./fakes.js";

// Two replicas sharing one Redis, as in split and cluster modes. Needs REDIS_URL (CI sets it).
const redisUrl = process.env.REDIS_URL;
const log = createLogger("gateway-test", "silent");
const basic = (c: { clientId: string; clientSecret: string }) =>
  `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString("base64")}`;

describe.skipIf(!redisUrl)("gateway replicas sharing Redis", () => {
  const fakes = new FakeServices();
  let a: FastifyInstance;
  let b: FastifyInstance;

  beforeAll(async () => {
    a = await buildGateway({ transportFor: fakes.transportFor, log, redisUrl, rateLimit: { max: 3, timeWindowMs: 60_000 } });
    b = await buildGateway({ transportFor: fakes.transportFor, log, redisUrl, rateLimit: { max: 3, timeWindowMs: 60_000 } });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  const get = (app: FastifyInstance, creds: { clientId: string; clientSecret: string }) =>
    app.inject({ method: "GET", url: "/2025-10-13/config", headers: { authorization: basic(creds) } });

  it("shares verified credentials, and a delete on one replica locks the token out on the other", async () => {
    const admin = fakes.addToken({ permissions: [Permission.VIEW, Permission.MANAGE] });
    const victim = fakes.addToken({ platformId: admin.platformId, permissions: [Permission.VIEW] });
    const before = fakes.authenticateCalls;
    expect((await get(b, victim)).statusCode).toBe(200);
    expect((await get(a, victim)).statusCode).toBe(200); // served from the shared cache
    expect(fakes.authenticateCalls).toBe(before + 1);

    const del = await a.inject({
      method: "DELETE",
      url: `/2025-10-13/tokens/${victim.tokenId}`,
      headers: { authorization: basic(admin) },
    });
    expect(del.statusCode).toBe(204);
    expect((await get(b, victim)).statusCode).toBe(401);
  });

  it("shares Idempotency-Key claims: a key used on one replica is refused for another route on the other", async () => {
    const caller = fakes.addToken({ permissions: [Permission.VIEW, Permission.TRANSACT] });
    const headers = { authorization: basic(caller), "idempotency-key": `k-${Date.now()}` };
    const transfer = { source: { accountId: "InternalAccount:a" }, destination: { accountId: "ExternalAccount:b" }, amount: 100 };
    const first = await a.inject({ method: "POST", url: "/2025-10-13/transfer-out", headers, payload: transfer });
    expect(first.statusCode).toBe(201);
    const reused = await b.inject({ method: "POST", url: "/2025-10-13/sandbox/internal-accounts/InternalAccount:a/fund", headers, payload: { amount: 100 } });
    expect(reused.statusCode).toBe(422);
    expect(reused.json().code).toBe("IDEMPOTENCY_KEY_REUSED");
    const replay = await b.inject({ method: "POST", url: "/2025-10-13/transfer-out", headers, payload: transfer });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
  });

  it("counts one credential's requests across replicas", async () => {
    const caller = fakes.addToken({ permissions: [Permission.VIEW] });
    expect((await get(a, caller)).statusCode).toBe(200);
    expect((await get(b, caller)).statusCode).toBe(200);
    expect((await get(a, caller)).statusCode).toBe(200);
    const limited = await get(b, caller);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe("RATE_LIMITED");
    expect(limited.headers["retry-after"]).toBeDefined();
  });
});
