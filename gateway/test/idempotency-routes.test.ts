import { readFileSync } from "node:fs";
import { createLogger } from "@corridor/kit";
import { Permission } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGateway } from "../src/app.js";
import { GATEWAY_RECORDED_NOTE } from "../src/idempotency.js";
import { FakeServices } from "./fakes.js";

type Operation = { description?: string; security?: unknown[]; parameters?: { in: string; name: string }[] };

const V = "/2025-10-13";
const basic = (c: { clientId: string; clientSecret: string }) => `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString("base64")}`;

/**
 * Every changing route behind credentials honours Idempotency-Key (docs/idempotency.md), and the
 * document's table of who stores each answer is the served OpenAPI's, route for route.
 */
describe("Idempotency-Key on every changing route", () => {
  let fakes: FakeServices;
  let app: FastifyInstance;
  let doc: { paths: Record<string, Record<string, Operation>> };

  beforeAll(async () => {
    fakes = new FakeServices();
    app = await buildGateway({ transportFor: fakes.transportFor, log: createLogger("idempotency-routes-test", "silent") });
    doc = (await app.inject({ method: "GET", url: `${V}/openapi.json` })).json();
  });
  afterAll(async () => {
    await app?.close();
  });

  const changing = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([method]) => ["post", "put", "patch", "delete"].includes(method))
        .map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })),
    );
  const modeOf = (op: Operation) => {
    if (!(op.parameters ?? []).some((p) => p.in === "header" && p.name === "idempotency-key")) return "none";
    return (op.description ?? "").includes(GATEWAY_RECORDED_NOTE) ? "gateway" : "service";
  };

  it("declares the header on every changing route called with credentials, and on none without", () => {
    const routes = changing();
    expect(routes.length).toBeGreaterThan(60);
    for (const { route, op } of routes) {
      const authenticated = (op.security ?? []).length > 0;
      expect(modeOf(op) !== "none", route).toBe(authenticated);
    }
  });

  it("lists each route in docs/idempotency.md with who stores its answer", () => {
    const text = readFileSync(new URL("../../docs/idempotency.md", import.meta.url), "utf8");
    const listed = new Map<string, string>();
    for (const m of text.matchAll(/^\| `([A-Z]+ [^`]+)` \| (service|gateway|none)\b/gm)) listed.set(m[1]!, m[2]!);
    const served = new Map(changing().map(({ route, op }) => [route, modeOf(op)]));
    expect(Object.fromEntries(listed)).toEqual(Object.fromEntries(served));
  });

  it("replays a recorded answer byte for byte, to the same key only", async () => {
    const caller = fakes.addToken({ permissions: [Permission.VIEW, Permission.MANAGE] });
    const create = (key: string, name = "t") =>
      app.inject({ method: "POST", url: `${V}/tokens`, headers: { authorization: basic(caller), "idempotency-key": key }, payload: { name, permissions: ["VIEW"] } });
    const first = await create("k-token");
    expect(first.statusCode, first.body).toBe(201);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    const again = await create("k-token");
    expect(again.statusCode).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.headers["content-type"]).toBe(first.headers["content-type"]);
    expect(again.body).toBe(first.body);
    expect(again.headers["request-id"]).not.toBe(first.headers["request-id"]);
    const other = await create("k-token", "another");
    expect(other.statusCode).toBe(422);
    expect(other.json()).toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED", details: { idempotencyKey: "k-token" } });
    const fresh = await create("k-token-2");
    expect(fresh.json().id).not.toBe(first.json().id);
  });
});

/** Gateway replicas share the record through Redis: duplicates spread over them still have one effect. */
describe.skipIf(!process.env.REDIS_URL)("Idempotency-Key across gateway replicas sharing Redis", () => {
  const fakes = new FakeServices();
  const log = createLogger("idempotency-replicas-test", "silent");
  let a: FastifyInstance;
  let b: FastifyInstance;

  beforeAll(async () => {
    a = await buildGateway({ transportFor: fakes.transportFor, log, redisUrl: process.env.REDIS_URL });
    b = await buildGateway({ transportFor: fakes.transportFor, log, redisUrl: process.env.REDIS_URL });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it("creates one token for 8 concurrent requests with one key over two replicas, and each replica replays it", async () => {
    const caller = fakes.addToken({ permissions: [Permission.VIEW, Permission.MANAGE] });
    const key = `k-${Date.now()}-${Math.random()}`;
    const name = `replicated-${key}`;
    const send = (app: FastifyInstance) =>
      app.inject({ method: "POST", url: `${V}/tokens`, headers: { authorization: basic(caller), "idempotency-key": key }, payload: { name, permissions: ["VIEW"] } });
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => send(i % 2 ? a : b)));
    const firsts = answers.filter((r) => r.statusCode === 201 && r.headers["idempotent-replayed"] === undefined);
    expect(firsts).toHaveLength(1);
    for (const r of answers) {
      if (r === firsts[0]) continue;
      if (r.statusCode === 409) expect(r.json().code).toBe("IDEMPOTENCY_KEY_IN_USE");
      else expect([r.statusCode, r.headers["idempotent-replayed"], r.body]).toEqual([201, "true", firsts[0]!.body]);
    }
    for (const app of [a, b]) {
      const late = await send(app);
      expect([late.statusCode, late.headers["idempotent-replayed"], late.body]).toEqual([201, "true", firsts[0]!.body]);
    }
    expect([...fakes.tokens.values()].filter((t) => t.token.name === name)).toHaveLength(1);
  });
});
