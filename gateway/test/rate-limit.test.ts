import { createLogger } from "@corridor/kit";
import { Permission } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { randomInt } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildGateway, type GatewayOptions } from "../src/app.js";
import { FakeServices } from "./fakes.js";

// Issue 14, defect 3: the rate limit was keyed on the clientId a request claims, before its secret
// was checked, so wrong secrets locked the real token out. Now the request limit is keyed on the
// authenticated principal and failed authentications are throttled apart, never blocking the
// genuine secret (decisions §2). Both stores: in-process, and Redis shared by replicas when
// REDIS_URL is set.

const V = "/2025-10-13";
const log = createLogger("gateway-test", "silent");
const basic = (c: { clientId: string; clientSecret: string }) => `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString("base64")}`;
const redisUrl = process.env.REDIS_URL;

const stores: { store: string; redisUrl?: string; skip: boolean }[] = [
  { store: "in-process", skip: false },
  { store: "Redis", redisUrl, skip: !redisUrl },
];

function expect429(res: LightMyRequestResponse) {
  expect(res.statusCode).toBe(429);
  expect(res.json()).toMatchObject({ status: 429, code: "RATE_LIMITED", message: expect.any(String), details: { retryAfterSeconds: expect.any(Number) } });
  expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
}

describe.each(stores)("rate limits keyed on the authenticated principal ($store)", ({ redisUrl, skip }) => {
  let fakes: FakeServices;
  const apps: FastifyInstance[] = [];
  beforeEach(() => {
    address = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(256)}`;
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  const build = async (extra: Partial<GatewayOptions> = {}) => {
    const app = await buildGateway({ transportFor: fakes.transportFor, log, redisUrl, trustProxy: true, ...extra });
    apps.push(app);
    return app;
  };
  // Each test comes from its own address (X-Forwarded-For, trusted): with Redis, counters outlive
  // the test and are shared with every other user of that Redis.
  let address = "";
  const get = (app: FastifyInstance, authorization: string | undefined, url = "/config") =>
    app.inject({ method: "GET", url: `${V}${url}`, headers: { "x-forwarded-for": address, ...(authorization === undefined ? {} : { authorization }) } });

  it.skipIf(skip)("a flood of wrong secrets for a real clientId leaves the real token working, and only the failures answer 429", async () => {
    fakes = new FakeServices();
    const app = await build({ rateLimit: { max: 5, timeWindowMs: 60_000 }, authFailureLimit: { max: 3, timeWindowMs: 60_000 } });
    const victim = fakes.addToken({ permissions: [Permission.VIEW] });
    const wrong = basic({ clientId: victim.clientId, clientSecret: "guess" });

    const flood = [];
    for (let i = 0; i < 60; i++) flood.push(await get(app, wrong));
    expect(flood.slice(0, 3).map((r) => r.statusCode)).toEqual([401, 401, 401]);
    for (const res of flood.slice(3)) expect429(res);

    // Same address, same clientId, the genuine secret: it passes, its full budget intact.
    for (let i = 0; i < 5; i++) expect((await get(app, basic(victim))).statusCode, `request ${i + 1}`).toBe(200);
    // Its own budget is its own: the 6th is limited, by the request limit.
    expect429(await get(app, basic(victim)));
    // Failures are still throttled after genuine successes.
    expect429(await get(app, wrong));
  });

  it.skipIf(skip)("throttles failures per source address and claimed clientId: another clientId, another address, or no credentials count apart", async () => {
    fakes = new FakeServices();
    const app = await build({ authFailureLimit: { max: 2, timeWindowMs: 60_000 } });
    const a = fakes.addToken({ permissions: [Permission.VIEW] });
    const b = fakes.addToken({ permissions: [Permission.VIEW] });
    for (let i = 0; i < 3; i++) await get(app, basic({ ...a, clientSecret: "x" }));
    expect429(await get(app, basic({ ...a, clientSecret: "x" })));
    expect((await get(app, basic({ ...b, clientSecret: "x" }))).statusCode).toBe(401);
    for (let i = 0; i < 5; i++) expect((await get(app, undefined)).statusCode).toBe(401); // nothing to guess: not counted
    expect((await get(app, basic(b))).statusCode).toBe(200);
    address = "10.255.255.254";
    expect((await get(app, basic({ ...a, clientSecret: "x" }))).statusCode).toBe(401);
  });

  it.skipIf(skip)("gives each API token and each agent its own budget; routes without authentication count per address", async () => {
    fakes = new FakeServices();
    const app = await build({ rateLimit: { max: 2, timeWindowMs: 60_000 } });
    const one = fakes.addToken({ permissions: [Permission.VIEW] });
    const two = fakes.addToken({ platformId: one.platformId, permissions: [Permission.VIEW] });
    const agentA = fakes.addAgent({ platformId: one.platformId });
    const agentB = fakes.addAgent({ platformId: one.platformId });
    for (let i = 0; i < 2; i++) expect((await get(app, basic(one))).statusCode).toBe(200);
    expect429(await get(app, basic(one)));
    expect((await get(app, basic(two))).statusCode).toBe(200);
    for (let i = 0; i < 2; i++) expect((await get(app, `Bearer ${agentA.token}`, "/agents/me")).statusCode).toBe(200);
    expect429(await get(app, `Bearer ${agentA.token}`, "/agents/me"));
    expect((await get(app, `Bearer ${agentB.token}`, "/agents/me")).statusCode).toBe(200);
    for (let i = 0; i < 2; i++) expect((await get(app, undefined, "/openapi.json")).statusCode).toBe(200);
    expect429(await get(app, undefined, "/openapi.json"));
    expect((await get(app, basic(two))).statusCode).toBe(200); // the anonymous budget is not the tokens'
  });

  // Redis is shared by every gateway replica; the in-process store (embedded mode, one process)
  // is each replica's own. Each store gets the assertion that is true of it.
  it.skipIf(skip)(
    redisUrl ? "shares the failure throttle across replicas, and the genuine secret passes on either" : "keeps each replica's failure throttle to itself, and the genuine secret passes on either",
    async () => {
      fakes = new FakeServices();
      const limits = { authFailureLimit: { max: 3, timeWindowMs: 60_000 } };
      const [a, b] = [await build(limits), await build(limits)];
      const victim = fakes.addToken({ permissions: [Permission.VIEW] });
      const wrong = basic({ clientId: victim.clientId, clientSecret: "guess" });
      for (let i = 0; i < 2; i++) expect((await get(a, wrong)).statusCode).toBe(401);
      expect((await get(b, wrong)).statusCode).toBe(401);
      if (redisUrl) {
        expect429(await get(b, wrong));
        expect429(await get(a, wrong));
      } else {
        // Each replica counts only what it saw: b two failures, a three, both within the limit of 3.
        expect((await get(b, wrong)).statusCode).toBe(401);
        expect((await get(a, wrong)).statusCode).toBe(401);
        expect429(await get(a, wrong));
      }
      expect((await get(a, basic(victim))).statusCode).toBe(200);
      expect((await get(b, basic(victim))).statusCode).toBe(200);
    },
  );
});
