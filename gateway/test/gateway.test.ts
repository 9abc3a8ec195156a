import { Writable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { AppError, createLogger, errors, toConnectError } from "@corridor/kit";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { Permission } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildGateway, type GatewayOptions } from "../src/app.js";
import { gatewayConfigSchema, gatewayTuning } from "../src/config.js";
import { FakeServices } from "./fakes.js";
import { publicErrorFromConnect } from "../src/http-status.js";

const V = "/2025-10-13";
const log = createLogger("gateway-test", "silent");
const basic = (c: { clientId: string; clientSecret: string }) =>
  `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString("base64")}`;

function expectError(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.json()).toMatchObject({ status, code, message: expect.any(String), details: expect.any(Object) });
}

const fieldsOf = (res: LightMyRequestResponse) => (res.json().details.errors as { field: string }[]).map((e) => e.field);

describe("gateway", () => {
  let fakes: FakeServices;
  let app: FastifyInstance;
  let admin: ReturnType<FakeServices["addToken"]>;

  const build = (extra: Partial<GatewayOptions> = {}) => buildGateway({ transportFor: fakes.transportFor, log, ...extra });
  const call = (method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE", url: string, opts: { as?: typeof admin; body?: unknown } = {}) =>
    app.inject({
      method,
      url: `${V}${url}`,
      headers: opts.as === undefined ? {} : { authorization: basic(opts.as) },
      ...(opts.body === undefined ? {} : { payload: opts.body as object }),
    });

  beforeEach(async () => {
    fakes = new FakeServices();
    admin = fakes.addToken({ permissions: [Permission.VIEW, Permission.TRANSACT, Permission.MANAGE] });
    app = await build();
  });
  afterEach(async () => {
    await app.close();
  });

  describe("routing and error shape", () => {
    it("answers 404 NOT_FOUND in the error shape for an unknown path", async () => {
      expectError(await call("GET", "/no-such-thing", { as: admin }), 404, "NOT_FOUND");
      expectError(await app.inject({ method: "GET", url: "/nothing/here" }), 404, "NOT_FOUND");
    });

    it("answers a distinct Request-Id on every response, errors and unauthenticated ones included", async () => {
      const ok = await call("GET", "/config", { as: admin });
      const missing = await call("GET", "/no-such-thing", { as: admin });
      const anonymous = await app.inject({ method: "GET", url: `${V}/config` });
      expect(anonymous.statusCode).toBe(401);
      const ids = [ok, missing, anonymous].map((r) => String(r.headers["request-id"]));
      for (const id of ids) expect(id).toMatch(/^Request:[0-9a-f-]{36}$/);
      expect(new Set(ids).size).toBe(3);
    });

    it("answers 404 VERSION_NOT_FOUND for another date version, even without credentials", async () => {
      const res = await app.inject({ method: "GET", url: "/2024-01-01/config" });
      expectError(res, 404, "VERSION_NOT_FOUND");
      expect(res.json().details.supportedVersions).toEqual(["2025-10-13"]);
    });

    it("answers 400 INVALID_INPUT with field body for malformed JSON and does not call the service", async () => {
      const res = await app.inject({
        method: "PATCH",
        url: `${V}/config`,
        headers: { authorization: basic(admin), "content-type": "application/json" },
        payload: '{"webhookEndpoint": ',
      });
      expectError(res, 400, "INVALID_INPUT");
      expect(res.json().details.errors).toEqual([{ field: "body", reason: "is not valid JSON" }]);
      expect(fakes.configs.size).toBe(0);
    });

    it("lists every invalid body field with location-prefixed paths", async () => {
      const res = await call("POST", "/tokens", { as: admin, body: { name: "", permissions: ["ROOT"], extra: 1 } });
      expectError(res, 400, "INVALID_INPUT");
      expect(fieldsOf(res)).toEqual(expect.arrayContaining(["body.name", "body.permissions[0]", "body.extra"]));
    });

    it("rejects a missing body on POST /tokens with field body", async () => {
      const res = await call("POST", "/tokens", { as: admin });
      expectError(res, 400, "INVALID_INPUT");
      expect(fieldsOf(res)).toEqual(["body"]);
    });

    it("adds the location to a field a service names without one, in the field list and in the message built from it", async () => {
      const res = await call("GET", "/tokens?cursor=forged", { as: admin });
      expectError(res, 400, "INVALID_INPUT");
      expect(fieldsOf(res)).toEqual(["query.cursor"]);
      expect(res.json().message).toBe("query.cursor: is not a cursor this API issued");
    });

    it("rejects an out-of-range limit as query.limit", async () => {
      const res = await call("GET", "/tokens?limit=500", { as: admin });
      expectError(res, 400, "INVALID_INPUT");
      expect(fieldsOf(res)).toEqual(["query.limit"]);
    });

    it("rejects a malformed token id as params.tokenId, and answers 404 NOT_FOUND for a segment that is no id", async () => {
      const res = await call("GET", "/tokens/Token:not-a-token", { as: admin });
      expectError(res, 400, "INVALID_INPUT");
      expect(fieldsOf(res)).toEqual(["params.tokenId"]);
      expectError(await call("GET", "/tokens/not-a-token", { as: admin }), 404, "NOT_FOUND");
    });

    it("answers GET /customers/end-user-terms from the operator's settings, 404 END_USER_TERMS_NOT_CONFIGURED without them", async () => {
      expectError(await call("GET", "/customers/end-user-terms", { as: admin }), 404, "END_USER_TERMS_NOT_CONFIGURED");
      await app.close();
      app = await build(gatewayTuning(gatewayConfigSchema.parse({ CORRIDOR_END_USER_TERMS_URL: "https://operator.example/terms", CORRIDOR_END_USER_TERMS_VERSION: "2026-01" })));
      const res = await call("GET", "/customers/end-user-terms", { as: admin });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ version: "2026-01", url: "https://operator.example/terms" });
      expect(() => gatewayConfigSchema.parse({ CORRIDOR_END_USER_TERMS_URL: "http://operator.example/terms" })).toThrow();
    });

    it("answers GET /vasps from the operator's CORRIDOR_VASP_DIRECTORY: Grid's VaspListResponse by name, searched and paged; empty without one", async () => {
      expect((await call("GET", "/vasps", { as: admin })).json()).toEqual({ data: [], hasMore: false, totalCount: 0 });
      const directory = [
        { vaspName: "Kraken", url: "https://www.kraken.com" },
        { vaspName: "Bitstamp", url: "https://www.bitstamp.net" },
        { vaspName: "Coinbase", url: "https://www.coinbase.com" },
      ];
      await app.close();
      app = await build(gatewayTuning(gatewayConfigSchema.parse({ CORRIDOR_VASP_DIRECTORY: JSON.stringify(directory) })));
      const first = (await call("GET", "/vasps?limit=2", { as: admin })).json();
      expect(first).toMatchObject({ data: [directory[1], directory[2]], hasMore: true, totalCount: 3 });
      const second = (await call("GET", `/vasps?limit=2&cursor=${first.nextCursor}`, { as: admin })).json();
      expect(second).toEqual({ data: [directory[0]], hasMore: false, totalCount: 3 });
      expect((await call("GET", "/vasps?search=KRAK", { as: admin })).json()).toEqual({ data: [directory[0]], hasMore: false, totalCount: 1 });
      expectError(await call("GET", "/vasps?cursor=forged", { as: admin }), 400, "INVALID_INPUT");
      // A bad directory stops the start: not JSON, an http URL, a name twice, an unknown field.
      for (const bad of ["nope", '[{"vaspName":"A","url":"http://a.example"}]', '[{"vaspName":"A","url":"https://a.example"},{"vaspName":"A","url":"https://b.example"}]', '[{"vaspName":"A","url":"https://a.example","x":1}]']) {
        expect(() => gatewayConfigSchema.parse({ CORRIDOR_VASP_DIRECTORY: bad }), bad).toThrow();
      }
    });

    it("answers 405 METHOD_NOT_ALLOWED with Allow for a served path and another method, 404 for an unknown path", async () => {
      const res = await call("PUT", "/tokens", { as: admin, body: {} });
      expectError(res, 405, "METHOD_NOT_ALLOWED");
      expect(res.headers.allow).toBe("GET, POST");
      expect(JSON.parse(res.body).details.allowed).toEqual(["GET", "POST"]);
      const one = await call("PATCH", "/tokens/Token:0190f0a8-0000-7000-8000-000000000000", { as: admin, body: {} });
      expectError(one, 405, "METHOD_NOT_ALLOWED");
      expect(one.headers.allow).toBe("DELETE, GET");
      expectError(await call("GET", "/tokens/Token:0190f0a8-0000-7000-8000-000000000000/nothing", { as: admin }), 404, "NOT_FOUND");
    });

    it("answers 415 naming application/json for a JSON route sent text/plain or multipart/form-data, and changes nothing", async () => {
      const headers = { authorization: basic(admin) };
      for (const type of ["text/plain", "multipart/form-data; boundary=x"]) {
        const res = await app.inject({ method: "POST", url: `${V}/tokens`, headers: { ...headers, "content-type": type }, payload: '{"name":"t","permissions":["VIEW"]}' });
        expectError(res, 415, "UNSUPPORTED_MEDIA_TYPE");
        expect(JSON.parse(res.body).details).toMatchObject({ expected: "application/json", received: type.split(";")[0] });
        expect(JSON.parse(res.body).message).toContain("application/json");
      }
    });

    it("does not coerce body types: a string amount is invalid", async () => {
      const res = await call("PATCH", "/config", {
        as: admin,
        body: {
          supportedCurrencies: [
            { currencyCode: "usd", minAmount: "1", maxAmount: 10, requiredCounterpartyFields: [], enabledTransactionTypes: ["SIDEWAYS"], providerRequiredCustomerFields: [], providerRequiredCounterpartyCustomerFields: [] },
          ],
        },
      });
      expectError(res, 400, "INVALID_INPUT");
      expect(fieldsOf(res)).toEqual(
        expect.arrayContaining([
          "body.supportedCurrencies[0].currencyCode",
          "body.supportedCurrencies[0].minAmount",
          "body.supportedCurrencies[0].enabledTransactionTypes[0]",
        ]),
      );
    });

    it("rejects plain-http webhook endpoints except on localhost", async () => {
      const bad = await call("PATCH", "/config", { as: admin, body: { webhookEndpoint: "http://example.com/hooks" } });
      expectError(bad, 400, "INVALID_INPUT");
      expect(fieldsOf(bad)).toEqual(["body.webhookEndpoint"]);
      for (const ok of ["https://example.com/hooks", "http://localhost:3000/h", "http://127.0.0.1/h", "http://[::1]:8080/h"]) {
        const res = await call("PATCH", "/config", { as: admin, body: { webhookEndpoint: ok } });
        expect(res.statusCode, ok).toBe(200);
        expect(res.json().webhookEndpoint).toBe(ok);
      }
    });

    it("rejects minAmount above maxAmount and duplicate currency codes", async () => {
      const usd = { requiredCounterpartyFields: [], enabledTransactionTypes: ["OUTGOING"], providerRequiredCustomerFields: [], providerRequiredCounterpartyCustomerFields: [] };
      const res = await call("PATCH", "/config", {
        as: admin,
        body: { supportedCurrencies: [{ ...usd, currencyCode: "USD", minAmount: 10, maxAmount: 5 }, { ...usd, currencyCode: "USD", minAmount: 1, maxAmount: 5 }] },
      });
      expectError(res, 400, "INVALID_INPUT");
      expect(fieldsOf(res)).toEqual(["body.supportedCurrencies[0].minAmount", "body.supportedCurrencies[1].currencyCode"]);
    });

    it("answers 415 for a body that is not JSON and 413 for an oversized one, in the error shape", async () => {
      const headers = { authorization: basic(admin) };
      const xml = await app.inject({ method: "POST", url: `${V}/tokens`, headers: { ...headers, "content-type": "application/xml" }, payload: "<a/>" });
      expectError(xml, 415, "UNSUPPORTED_MEDIA_TYPE");
      const big = await app.inject({
        method: "POST",
        url: `${V}/tokens`,
        headers: { ...headers, "content-type": "application/json" },
        payload: JSON.stringify({ name: "x".repeat(2 * 1024 * 1024), permissions: ["VIEW"] }),
      });
      expectError(big, 413, "PAYLOAD_TOO_LARGE");
    });

    it("maps a service's PublicError (TOKEN_NOT_FOUND) to its status and code", async () => {
      expectError(await call("GET", "/tokens/Token:0190f0a8-0000-7000-8000-000000000000", { as: admin }), 404, "TOKEN_NOT_FOUND");
    });

    it("answers 400 WEBHOOK_ENDPOINT_NOT_SET for a test webhook without an endpoint", async () => {
      const res = await call("POST", "/sandbox/webhooks/test", { as: admin });
      expectError(res, 400, "WEBHOOK_ENDPOINT_NOT_SET");
    });

    it("sends x-should-retry: false on a state conflict from a service", async () => {
      fakes.failWith = errors.conflict("INVALID_STATE_TRANSITION", "not in a state that allows this");
      const res = await call("GET", "/config", { as: admin });
      expectError(res, 409, "INVALID_STATE_TRANSITION");
      expect(res.headers["x-should-retry"]).toBe("false");
    });

    it("answers 500 INTERNAL_ERROR without leaking the cause", async () => {
      fakes.failWith = new Error("connection to db at 10.0.0.5 with password hunter2 failed");
      const res = await call("GET", "/config", { as: admin });
      expectError(res, 500, "INTERNAL_ERROR");
      expect(res.body).not.toContain("hunter2");
    });
    it("answers 503 for an unreachable service without naming its address", async () => {
      fakes.failWith = new ConnectError("connect ECONNREFUSED 10.1.2.3:8101", Code.Unavailable);
      const res = await call("GET", "/config", { as: admin });
      expectError(res, 503, "SERVICE_UNAVAILABLE");
      expect(res.body).not.toContain("10.1.2.3");
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    });

    it.each([
      // What connect-node answers for a call in flight when the service process is killed (measured).
      ["Canceled: the stream closed with CANCEL", new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled)],
      // And for the next call on that connection.
      ["Aborted: the connection reset", new ConnectError("connect ECONNRESET 127.0.0.1:8102", Code.Aborted)],
    ])("answers 503 with Retry-After, not 500, for a service that died mid-call (%s)", async (_what, err) => {
      fakes.failWith = err;
      const res = await call("GET", "/config", { as: admin });
      expectError(res, 503, "SERVICE_UNAVAILABLE");
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    });

    it("answers 503 with Retry-After for a service whose database is down (its SERVICE_UNAVAILABLE refusal)", async () => {
      fakes.failWith = new AppError("UNAVAILABLE", "SERVICE_UNAVAILABLE", "A dependency of this service is unavailable; retry later");
      const res = await call("GET", "/config", { as: admin });
      expectError(res, 503, "SERVICE_UNAVAILABLE");
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    });

    it("logs a 5xx the service chose (a dependency it names unavailable) at warn with its code, and a service that gave no answer at error", async () => {
      const lines: { level: number; msg: string; code?: string }[] = [];
      const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(...chunk.toString().split("\n").filter(Boolean).map((l: string) => JSON.parse(l))), done()) });
      await app.close();
      app = await build({ log: createLogger("gateway-test", "info", sink) });
      fakes.failWith = new AppError("UNAVAILABLE", "RATES_UNAVAILABLE", "No EUR rate has been received");
      expectError(await call("GET", "/config", { as: admin }), 503, "RATES_UNAVAILABLE");
      fakes.failWith = new ConnectError("connect ECONNREFUSED 10.1.2.3:8101", Code.Unavailable);
      expectError(await call("GET", "/config", { as: admin }), 503, "SERVICE_UNAVAILABLE");
      const of = (msg: string) => lines.filter((l) => l.msg === msg);
      expect(of("service answered unavailable")).toEqual([expect.objectContaining({ level: 40, code: "RATES_UNAVAILABLE" })]);
      expect(of("service call failed")).toEqual([expect.objectContaining({ level: 50 })]);
    });

    it("maps a socket error under any Connect code (Unknown with an ECONNRESET cause) to 503, and a service timeout to 503 UPSTREAM_TIMEOUT", () => {
      const reset = new ConnectError("socket hang up", Code.Unknown, undefined, undefined, Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }));
      expect(publicErrorFromConnect(reset).body).toMatchObject({ status: 503, code: "SERVICE_UNAVAILABLE" });
      expect(publicErrorFromConnect(new ConnectError("deadline", Code.DeadlineExceeded)).body).toMatchObject({ status: 503, code: "UPSTREAM_TIMEOUT" });
      // A service's own bug stays a 500.
      expect(publicErrorFromConnect(new ConnectError("x is undefined", Code.Unknown)).body).toMatchObject({ status: 500, code: "INTERNAL_ERROR" });
      // A stream the service refused unprocessed (its GOAWAY crossed the call: a replica recycling
      // its connections) is a 503 to retry, not a 500 (seen with `start:split --replicas 2`).
      expect(publicErrorFromConnect(new ConnectError("Stream closed with error code NGHTTP2_REFUSED_STREAM", Code.Internal)).body).toMatchObject({ status: 503, code: "SERVICE_UNAVAILABLE" });
    });
  });

  describe("authentication and permissions", () => {
    it("rejects a missing Authorization header with 401 and a Basic challenge", async () => {
      const res = await call("GET", "/config");
      expectError(res, 401, "UNAUTHORIZED");
      expect(res.headers["www-authenticate"]).toBe('Basic realm="corridor"');
    });

    it("rejects a wrong secret with 401", async () => {
      const res = await call("GET", "/config", { as: { ...admin, clientSecret: "wrong" } });
      expectError(res, 401, "UNAUTHORIZED");
      expect(res.headers["www-authenticate"]).toBe('Basic realm="corridor"');
    });

    it("rejects a wrong secret with 401 even when the clientId is cached", async () => {
      expect((await call("GET", "/config", { as: admin })).statusCode).toBe(200);
      const res = await call("GET", "/config", { as: { ...admin, clientSecret: "wrong" } });
      expectError(res, 401, "UNAUTHORIZED");
      expect(res.headers["www-authenticate"]).toBe('Basic realm="corridor"');
    });

    it("sends no Basic challenge on a 401 a service raises for a caller whose credentials were fine", async () => {
      // For example a wrong OTP or wallet signature: re-prompting for Basic credentials would not help.
      expect((await call("GET", "/config", { as: admin })).statusCode).toBe(200);
      fakes.failWith = toConnectError(errors.unauthorized("Invalid OTP", { reason: "OTP_INVALID" }));
      const res = await call("GET", "/config", { as: admin });
      expectError(res, 401, "UNAUTHORIZED");
      expect(res.json().details.reason).toBe("OTP_INVALID");
      expect(res.headers["www-authenticate"]).toBeUndefined();
    });

    it("refuses to create a token with permissions the caller does not hold, naming them", async () => {
      const manager = fakes.addToken({ platformId: admin.platformId, permissions: [Permission.VIEW, Permission.MANAGE] });
      const before = fakes.tokens.size;
      const res = await call("POST", "/tokens", { as: manager, body: { name: "stronger", permissions: ["VIEW", "TRANSACT"] } });
      expectError(res, 403, "FORBIDDEN");
      expect(res.json().details.missingPermissions).toEqual(["TRANSACT"]);
      expect(res.json().message).toContain("TRANSACT");
      const manageOnly = fakes.addToken({ platformId: admin.platformId, permissions: [Permission.MANAGE] });
      const noView = await call("POST", "/tokens", { as: manageOnly, body: { name: "viewer", permissions: ["VIEW"] } });
      expectError(noView, 403, "FORBIDDEN");
      expect(noView.json().details.missingPermissions).toEqual(["VIEW"]);
      expect(fakes.tokens.size).toBe(before + 1); // only manageOnly was added; nothing was created
      const same = await call("POST", "/tokens", { as: manager, body: { name: "peer", permissions: ["MANAGE", "VIEW"] } });
      expect(same.statusCode).toBe(201);
      expect(same.json().permissions).toEqual(["MANAGE", "VIEW"]);
    });

    it("answers 403 FORBIDDEN when a VIEW-only token creates a token", async () => {
      const viewer = fakes.addToken({ platformId: admin.platformId, permissions: [Permission.VIEW] });
      expect((await call("GET", "/config", { as: viewer })).statusCode).toBe(200);
      expect((await call("GET", "/tokens", { as: viewer })).statusCode).toBe(200);
      const res = await call("POST", "/tokens", { as: viewer, body: { name: "nope", permissions: ["VIEW"] } });
      expectError(res, 403, "FORBIDDEN");
      expect(res.json().details.requiredPermission).toBe("MANAGE");
    });

    it("answers 403 when a production platform calls a sandbox endpoint", async () => {
      const prod = fakes.addToken({ permissions: [Permission.MANAGE, Permission.VIEW], environment: Environment.PRODUCTION });
      expectError(await call("POST", "/sandbox/webhooks/test", { as: prod }), 403, "FORBIDDEN");
    });

    it("caches a verified credential instead of asking auth-sessions on every request", async () => {
      for (let i = 0; i < 3; i++) expect((await call("GET", "/config", { as: admin })).statusCode).toBe(200);
      expect(fakes.authenticateCalls).toBe(1);
    });

    it("asks auth-sessions again once the cache entry expires", async () => {
      await app.close();
      app = await build({ authCacheTtlMs: 0 });
      await call("GET", "/config", { as: admin });
      await call("GET", "/config", { as: admin });
      expect(fakes.authenticateCalls).toBe(2);
    });

    it("stops accepting a deleted token at once, though it was cached", async () => {
      const created = await call("POST", "/tokens", { as: admin, body: { name: "short", permissions: ["VIEW"] } });
      expect(created.statusCode).toBe(201);
      const token = created.json();
      expect((await call("GET", "/config", { as: token })).statusCode).toBe(200); // now cached
      const del = await call("DELETE", `/tokens/${token.id}`, { as: admin });
      expect(del.statusCode).toBe(204);
      expect(del.body).toBe("");
      const refused = await call("GET", "/config", { as: token });
      expectError(refused, 401, "UNAUTHORIZED");
      expect(refused.headers["www-authenticate"]).toBe('Basic realm="corridor"'); // auth-sessions refused the credentials
    });
  });

  describe("resources", () => {
    it("creates a token (201, secret shown once) and reads it back without the secret", async () => {
      const created = await call("POST", "/tokens", { as: admin, body: { name: "ops", permissions: ["VIEW", "TRANSACT"] } });
      expect(created.statusCode).toBe(201);
      expect(created.json()).toMatchObject({
        id: expect.stringMatching(/^Token:/),
        name: "ops",
        permissions: ["VIEW", "TRANSACT"],
        clientId: expect.any(String),
        clientSecret: expect.any(String),
        createdAt: expect.stringMatching(/Z$/),
      });
      const read = await call("GET", `/tokens/${created.json().id}`, { as: admin });
      expect(read.statusCode).toBe(200);
      expect(read.json().clientSecret).toBeUndefined();
      expect(read.json().platformId).toBeUndefined();
    });

    it("answers the list envelope and passes filters and the default limit to the service", async () => {
      const res = await call("GET", "/tokens?createdAfter=2025-01-01T00:00:00Z&name=t", { as: admin });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ data: [expect.objectContaining({ id: admin.tokenId })], hasMore: false, totalCount: 1 });
      const req = fakes.lastListRequest as { page: { limit: number }; name: string; created: { after: { seconds: bigint } } };
      expect(req.page.limit).toBe(20);
      expect(req.name).toBe("t");
      expect(req.created.after.seconds).toBe(BigInt(Date.parse("2025-01-01T00:00:00Z") / 1000));
    });

    it("gives nextCursor only when hasMore", async () => {
      fakes.addToken({ platformId: admin.platformId, permissions: [Permission.VIEW] });
      const res = await call("GET", "/tokens?limit=1", { as: admin });
      expect(res.json()).toMatchObject({ hasMore: true, nextCursor: "next", totalCount: 2 });
    });

    it("answers int64 amounts as JSON numbers in GET /config", async () => {
      const res = await call("GET", "/config", { as: admin });
      expect(res.statusCode).toBe(200);
      expect(res.json().supportedCurrencies[0]).toMatchObject({ currencyCode: "USD", minAmount: 1, maxAmount: 9_000_000_000_000_000 });
      expect(res.json().umaDomain).toBeUndefined();
      expect(res.json()).toMatchObject({ id: expect.stringMatching(/^PlatformConfig:/), isRegulatedFinancialInstitution: false });
    });

    it("passes passkeyRelyingPartyId and passkeyOrigins through PATCH /config and answers them in GET /config (absent while unset)", async () => {
      const other = fakes.addToken({ permissions: [Permission.VIEW, Permission.MANAGE] });
      const unset = (await call("GET", "/config", { as: other })).json();
      expect(unset.passkeyRelyingPartyId).toBeUndefined();
      expect(unset.passkeyOrigins).toBeUndefined();
      const body = { passkeyRelyingPartyId: "wallet.example.com", passkeyOrigins: ["https://wallet.example.com", "https://app.wallet.example.com"] };
      const patched = await call("PATCH", "/config", { as: other, body });
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json()).toMatchObject(body);
      expect((await call("GET", "/config", { as: other })).json()).toMatchObject(body);
      const bad = await call("PATCH", "/config", { as: other, body: { passkeyOrigins: "https://wallet.example.com" } });
      expectError(bad, 400, "INVALID_INPUT");
      expect(fieldsOf(bad)).toEqual(["body.passkeyOrigins"]);
    });

    it("reads and rotates the webhook secret (MANAGE)", async () => {
      const viewer = fakes.addToken({ platformId: admin.platformId, permissions: [Permission.VIEW] });
      expectError(await call("GET", "/config/webhook-secret", { as: viewer }), 403, "FORBIDDEN");
      expect((await call("GET", "/config/webhook-secret", { as: admin })).json()).toEqual({
        secret: "whsec_c2VjcmV0",
        createdAt: "2025-10-13T00:00:00.000Z",
      });
      const rotated = await call("POST", "/config/webhook-secret/rotate", { as: admin });
      expect(rotated.json()).toMatchObject({ secret: "whsec_bmV3", previousSecretExpiresAt: "2025-10-14T00:00:00.000Z" });
    });

    it("sends a test webhook for a sandbox platform, accepting an empty JSON body", async () => {
      await call("PATCH", "/config", { as: admin, body: { webhookEndpoint: "https://example.com/h" } });
      const res = await app.inject({
        method: "POST",
        url: `${V}/sandbox/webhooks/test`,
        headers: { authorization: basic(admin), "content-type": "application/json" },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ url: "https://example.com/h", response_status: 200, response_body: "" });
    });

    it("answers 400 WEBHOOK_DELIVERY_FAILED with the category when the endpoint gave no answer", async () => {
      await call("PATCH", "/config", { as: admin, body: { webhookEndpoint: "https://example.com/down" } });
      fakes.testWebhookUnanswered = "connection failed";
      const res = await call("POST", "/sandbox/webhooks/test", { as: admin });
      expectError(res, 400, "WEBHOOK_DELIVERY_FAILED");
      expect(res.json().details).toEqual({ url: "https://example.com/down", reason: "connection failed" });
    });
  });

  describe("rate limiting", () => {
    it("answers 429 RATE_LIMITED with Retry-After once a credential exceeds its limit", async () => {
      await app.close();
      app = await build({ rateLimit: { max: 2, timeWindowMs: 60_000 } });
      expect((await call("GET", "/config", { as: admin })).statusCode).toBe(200);
      expect((await call("GET", "/config", { as: admin })).statusCode).toBe(200);
      const res = await call("GET", "/config", { as: admin });
      expectError(res, 429, "RATE_LIMITED");
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
      // Another credential has its own budget; the probes are never limited.
      const other = fakes.addToken({ permissions: [Permission.VIEW] });
      expect((await call("GET", "/config", { as: other })).statusCode).toBe(200);
      for (let i = 0; i < 3; i++) expect((await app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    });
  });

  describe("contract and probes", () => {
    it("serves a valid OpenAPI 3.1 document without credentials", async () => {
      const res = await app.inject({ method: "GET", url: `${V}/openapi.json` });
      expect(res.statusCode).toBe(200);
      const doc = res.json();
      expect(doc.openapi).toBe("3.1.0");
      const result = await new Validator().validate(doc);
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
      expect(Object.keys(doc.paths)).toEqual(
        expect.arrayContaining(["/tokens", "/tokens/{tokenId}", "/config", "/config/webhook-secret", "/config/webhook-secret/rotate", "/sandbox/webhooks/test"]),
      );
      expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["Error", "Token", "PlatformConfig", "SupportedCurrency"]));
    });

    it("serves the reference page and its assets locally without credentials", async () => {
      const page = await app.inject({ method: "GET", url: `${V}/docs/` });
      expect(page.statusCode).toBe(200);
      expect(page.headers["content-type"]).toContain("text/html");
      expect(page.body).not.toMatch(/https?:\/\/(?!localhost)[^"']*\.(js|css)/);
      expect((await app.inject({ method: "GET", url: `${V}/docs/redoc.standalone.js` })).statusCode).toBe(200);
    });

    it("answers healthz 200 and readyz 200 when every service serves", async () => {
      expect((await app.inject({ method: "GET", url: "/healthz" })).json()).toEqual({ status: "ok" });
      const ready = await app.inject({ method: "GET", url: "/readyz" });
      expect(ready.statusCode).toBe(200);
      expect(ready.json().services.ledger).toBe("SERVING");
    });

    it("answers readyz 503 naming the services that are not serving", async () => {
      fakes.serving.set("ledger", false);
      const res = await app.inject({ method: "GET", url: "/readyz" });
      expectError(res, 503, "NOT_READY");
      expect(res.json().details.notServing).toEqual(["ledger"]);
    });

    it("answers readyz 503 while draining, though every service serves; healthz stays 200", async () => {
      let draining = false;
      const drainable = await build({ isDraining: () => draining });
      try {
        expect((await drainable.inject({ method: "GET", url: "/readyz" })).statusCode).toBe(200);
        draining = true;
        const res = await drainable.inject({ method: "GET", url: "/readyz" });
        expectError(res, 503, "NOT_READY");
        expect(res.json().message).toContain("shutting down");
        expect((await drainable.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
      } finally {
        await drainable.close();
      }
    });
  });
});
