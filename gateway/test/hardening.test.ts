import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { createLogger } from "@corridor/kit";
import { Permission } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildGateway } from "../src/app.js";
import { FakeServices } from "./fakes.js";

// Issue 14, defect 1: bad input is a 4xx in the error shape that changes nothing — never a 500,
// framework errors included.

const V = "/2025-10-13";
const log = createLogger("gateway-test", "silent");
const basicOf = (text: string | Buffer) => `Basic ${Buffer.from(text).toString("base64")}`;
const basic = (c: { clientId: string; clientSecret: string }) => basicOf(`${c.clientId}:${c.clientSecret}`);

function expectError(res: { statusCode: number; json(): any }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.json()).toMatchObject({ status, code, message: expect.any(String), details: expect.any(Object) });
}
const fieldsOf = (res: LightMyRequestResponse) => (res.json().details.errors as { field: string }[]).map((e) => e.field);

describe("gateway: no 500 and no change for bad input", () => {
  let fakes: FakeServices;
  let app: FastifyInstance;
  let admin: ReturnType<FakeServices["addToken"]>;

  beforeEach(async () => {
    fakes = new FakeServices();
    admin = fakes.addToken({ permissions: [Permission.VIEW, Permission.TRANSACT, Permission.MANAGE] });
    app = await buildGateway({ transportFor: fakes.transportFor, log });
  });
  afterEach(async () => {
    await app.close();
  });

  const send = (opts: InjectOptions & { url: string }) =>
    app.inject({ ...opts, url: `${V}${opts.url}`, headers: { authorization: basic(admin), ...(opts.headers ?? {}) } });
  const json = (method: "POST" | "PATCH", url: string, payload: string | Buffer, headers: Record<string, string> = {}) =>
    send({ method, url, payload, headers: { "content-type": "application/json", ...headers } });

  describe("text: NUL and lone surrogates are refused wherever they come from, naming the field", () => {
    it("refuses a NUL in a body string, and creates nothing", async () => {
      const before = fakes.tokens.size;
      const res = await json("POST", "/tokens", JSON.stringify({ name: "ops\u0000", permissions: ["VIEW"] }));
      expectError(res, 400, "INVALID_INPUT");
      expect(res.json().details.errors).toEqual([{ field: "body.name", reason: expect.stringContaining("NUL") }]);
      expect(fakes.tokens.size).toBe(before);
    });

    it("refuses a lone surrogate (which would be stored as U+FFFD) at any depth", async () => {
      const res = await json("PATCH", "/config", '{"passkeyOrigins":["https://a.example","https://b\\ud800.example"]}');
      expectError(res, 400, "INVALID_INPUT");
      expect(fieldsOf(res)).toEqual(["body.passkeyOrigins[1]"]);
      expect(res.json().details.errors[0].reason).toContain("lone surrogate");
      const low = await json("POST", "/tokens", '{"name":"\\udc00","permissions":["VIEW"]}');
      expect(fieldsOf(low)).toEqual(["body.name"]);
    });

    it("refuses a NUL in a body key", async () => {
      const res = await json("POST", "/tokens", '{"name":"ok","permissions":["VIEW"],"\\u0000":1}');
      expectError(res, 400, "INVALID_INPUT");
      expect(res.json().details.errors[0]).toEqual({ field: "body", reason: expect.stringContaining("key") });
    });

    it("refuses a NUL or invalid UTF-8 in a query value as query.<name>", async () => {
      for (const value of ["a%00b", "%FF", "%ED%A0%80"]) {
        const res = await send({ method: "GET", url: `/tokens?name=${value}` });
        expectError(res, 400, "INVALID_INPUT");
        expect(fieldsOf(res)).toEqual(["query.name"]);
      }
      expect(fakes.lastListRequest).toBeUndefined();
    });

    it("refuses a NUL in a path id as params.<name>", async () => {
      const res = await send({ method: "GET", url: "/tokens/Token:0190%00" });
      expectError(res, 400, "INVALID_INPUT");
      expect(fieldsOf(res)).toContain("params.tokenId");
    });

    it("answers 401 to Basic credentials that decode to a NUL, invalid UTF-8 or a lone surrogate, without asking auth-sessions", async () => {
      const before = fakes.authenticateCalls;
      for (const creds of [`${admin.clientId}\u0000x:${admin.clientSecret}`, Buffer.from([0x69, 0xff, 0x3a, 0x73]), Buffer.from([0x69, 0xed, 0xa0, 0x80, 0x3a, 0x73])]) {
        const res = await app.inject({ method: "GET", url: `${V}/config`, headers: { authorization: basicOf(creds) } });
        expectError(res, 401, "UNAUTHORIZED");
        expect(res.headers["www-authenticate"]).toBe('Basic realm="corridor"');
      }
      expect(fakes.authenticateCalls).toBe(before);
    });
  });

  describe("JSON bodies: depth, encoding, emptiness", () => {
    it("refuses a 20,000-deep array sent with an Idempotency-Key before anything hashes it, and moves no money", async () => {
      const res = await json("POST", "/transfer-out", "[".repeat(20_000) + "]".repeat(20_000), { "idempotency-key": "deep-1" });
      expectError(res, 400, "INVALID_INPUT");
      expect(res.json().details.errors).toEqual([{ field: "body", reason: "nests deeper than 32 levels" }]);
      expect(fakes.ledgerCalls).toBe(0);
    });

    it("refuses a body of 100,000 unknown keys in one short error, before parsing or validating it (issue 23, finding 5)", async () => {
      const huge = JSON.stringify(Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [i.toString(36), 1])));
      const res = await json("POST", "/tokens", huge);
      expectError(res, 400, "INVALID_INPUT");
      expect(res.json().details.errors).toEqual([{ field: "body", reason: "holds more than 10000 values (object members and array items)" }]);
      expect(res.body.length).toBeLessThan(1_000);
      expect(fakes.tokens.size).toBe(1);
    });

    it("counts values at every depth, commas inside strings not counted, and accepts 10,000", async () => {
      const items = (n: number) => JSON.stringify({ name: ",,,,[{", permissions: ["VIEW"], x: Array.from({ length: n }, () => 0) });
      // 10,000 values in all (name, permissions, its item, x, and x's items) parse; the schema then refuses x.
      expect(fieldsOf(await json("POST", "/tokens", items(9_996)))).toEqual(["body.x"]);
      expect(fieldsOf(await json("POST", "/tokens", items(9_997)))).toEqual(["body"]);
    });

    it("lists at most 50 field errors and says how many there were", async () => {
      const res = await json("POST", "/tokens", JSON.stringify({ name: "n", permissions: ["VIEW"], ...Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`k${i}`, 1])) }));
      expectError(res, 400, "INVALID_INPUT");
      expect(res.json().details.errors).toHaveLength(50);
      expect(res.json().details.errorCount).toBe(70);
      expect(res.json().message).toMatch(/; and 20 more$/);
    });

    it("refuses 33 levels and accepts 32 (brackets inside strings do not count)", async () => {
      const deep = (n: number) => JSON.stringify({ name: "[[[[{{{{", permissions: ["VIEW"], x: JSON.parse("[".repeat(n - 1) + "]".repeat(n - 1)) });
      expect(fieldsOf(await json("POST", "/tokens", deep(33)))).toEqual(["body"]);
      // 32 levels parse; the schema then refuses the unknown field.
      expect(fieldsOf(await json("POST", "/tokens", deep(32)))).toEqual(["body.x"]);
    });

    it("refuses a body that is not UTF-8, and a declared charset other than UTF-8 (415)", async () => {
      const res = await json("POST", "/tokens", Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff]), Buffer.from('","permissions":["VIEW"]}')]));
      expectError(res, 400, "INVALID_INPUT");
      expect(res.json().details.errors).toEqual([{ field: "body", reason: "is not valid UTF-8" }]);
      const utf16 = await json("POST", "/tokens", '{"name":"x","permissions":["VIEW"]}', { "content-type": "application/json; charset=utf-16" });
      expectError(utf16, 415, "UNSUPPORTED_MEDIA_TYPE");
    });

    it("answers an empty JSON body on a route that needs one as a missing body", async () => {
      const res = await json("POST", "/tokens", "");
      expectError(res, 400, "INVALID_INPUT");
      expect(fieldsOf(res)).toEqual(["body"]);
    });

    it("refuses a non-empty body on a route that takes none, and does not act (webhook-secret rotate)", async () => {
      for (const payload of ['{"secret":"mine"}', "[]", "null", '"x"', '{"a": ']) {
        const res = await json("POST", "/config/webhook-secret/rotate", payload);
        expectError(res, 400, "INVALID_INPUT");
        expect(fieldsOf(res)).toEqual(["body"]);
      }
      expect(fakes.webhookRotations).toBe(0);
      expect((await json("POST", "/config/webhook-secret/rotate", "{}")).statusCode).toBe(200);
      expect((await json("POST", "/config/webhook-secret/rotate", "")).statusCode).toBe(200);
      expect((await send({ method: "POST", url: "/config/webhook-secret/rotate" })).statusCode).toBe(200);
      expect(fakes.webhookRotations).toBe(3);
    });
  });

  describe("query values", () => {
    it("takes decimal integers only: 0x10, 1e1, ' 5', '+5', '1.0' are 400 on query.limit", async () => {
      for (const limit of ["0x10", "1e1", "%205", "%2B5", "1.0", "0b1", "5%20"]) {
        const res = await send({ method: "GET", url: `/tokens?limit=${limit}` });
        expectError(res, 400, "INVALID_INPUT");
        expect(fieldsOf(res), limit).toEqual(["query.limit"]);
      }
      expect((await send({ method: "GET", url: "/tokens?limit=10" })).statusCode).toBe(200);
    });

    it("refuses dates outside the years 0001–9999, leap seconds and impossible days as query.<name>", async () => {
      for (const at of ["0000-01-01T00:00:00Z", "9999-12-31T23:59:59-23:59", "2016-12-31T23:59:60Z", "2025-02-30T00:00:00Z", "%2B275760-09-13T00:00:00.000Z"]) {
        const res = await send({ method: "GET", url: `/tokens?createdAfter=${at}` });
        expectError(res, 400, "INVALID_INPUT");
        expect(fieldsOf(res), at).toEqual(["query.createdAfter"]);
      }
      expect((await send({ method: "GET", url: "/tokens?createdAfter=0001-01-01T00:00:00Z&createdBefore=9999-12-31T23:59:59Z" })).statusCode).toBe(200);
    });
  });

  describe("framework errors in the error shape", () => {
    it("answers a bad percent-encoding in the path with 400 INVALID_INPUT on path", async () => {
      const res = await send({ method: "GET", url: "/tokens/%zz" });
      expectError(res, 400, "INVALID_INPUT");
      expect(fieldsOf(res)).toEqual(["path"]);
      expect(res.headers["request-id"]).toMatch(/^Request:/);
    });

    it("answers a path param beyond the router's limit with 414 URI_TOO_LONG", async () => {
      expectError(await send({ method: "GET", url: `/tokens/${"t".repeat(500)}` }), 414, "URI_TOO_LONG");
    });

    it("answers 413 and 415 in the shape with stable codes", async () => {
      expectError(await json("POST", "/tokens", JSON.stringify({ name: "x".repeat(1_100_000), permissions: ["VIEW"] })), 413, "PAYLOAD_TOO_LARGE");
      expectError(await send({ method: "POST", url: "/tokens", payload: "a=b", headers: { "content-type": "application/x-www-form-urlencoded" } }), 415, "UNSUPPORTED_MEDIA_TYPE");
    });
  });

  describe("an oversized body, on a real socket", () => {
    // The 413 is decided from Content-Length before the body is read; answering and closing at
    // once would reach a client still sending as a reset connection instead of the answer.
    it("reads and drops the rest of the body before answering 413, so a client still sending gets the answer", async () => {
      const { port } = (await app.listen({ host: "127.0.0.1", port: 0 }).then(() => app.server.address())) as AddressInfo;
      const size = 3 * 1024 * 1024;
      const socket = connect(port, "127.0.0.1");
      await new Promise<void>((r) => socket.once("connect", () => r()));
      const chunks: Buffer[] = [];
      let firstByteAt = -1;
      let sent = 0;
      socket.on("data", (c: Buffer) => {
        if (firstByteAt < 0) firstByteAt = sent;
        chunks.push(c);
      });
      const closed = new Promise<Error | undefined>((r) => {
        socket.once("error", (err) => r(err));
        socket.once("close", () => r(undefined));
      });
      socket.write(
        `POST ${V}/tokens HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${basic(admin)}\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\n\r\n`,
      );
      const piece = Buffer.alloc(256 * 1024, 0x20);
      while (sent < size) {
        await new Promise<void>((r) => socket.write(piece, () => r()));
        sent += piece.length;
        // Give the server time to answer early, as it did before.
        if (sent === 1024 * 1024) await new Promise((r) => setTimeout(r, 200));
      }
      expect(await closed).toBeUndefined();
      const text = Buffer.concat(chunks).toString("utf8");
      expect(text.startsWith("HTTP/1.1 413")).toBe(true);
      expect(text).toContain('"code":"PAYLOAD_TOO_LARGE"');
      expect(firstByteAt).toBe(size);
    });
  });

  describe("Node's HTTP parser errors, on a real socket", () => {
    async function exchange(request: string | Buffer): Promise<{ status: number; body: any }> {
      const { port } = (await app.listen({ host: "127.0.0.1", port: 0 }).then(() => app.server.address())) as AddressInfo;
      return new Promise((resolve, reject) => {
        const socket = connect(port, "127.0.0.1");
        const chunks: Buffer[] = [];
        socket.on("data", (c) => chunks.push(c));
        socket.on("error", reject);
        socket.on("close", () => {
          const text = Buffer.concat(chunks).toString("latin1");
          const [head, body] = [text.slice(0, text.indexOf("\r\n\r\n")), text.slice(text.indexOf("\r\n\r\n") + 4)];
          resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body: body ? JSON.parse(body) : undefined });
        });
        socket.write(request);
      });
    }

    it("answers headers beyond the server's limit with 431 in the error shape, not a bare close", async () => {
      const res = await exchange(`GET ${V}/config HTTP/1.1\r\nHost: x\r\nX-Big: ${"h".repeat(40_000)}\r\n\r\n`);
      expect(res.status).toBe(431);
      expect(res.body).toMatchObject({ status: 431, code: "HEADERS_TOO_LARGE", message: expect.any(String), details: {} });
    });

    it("answers an HTTP/1.1 request without Host with 400 in the error shape, not Node's empty 400 (issue 23, finding 6)", async () => {
      const res = await exchange(`GET ${V}/config HTTP/1.1\r\nConnection: close\r\n\r\n`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 400, code: "INVALID_REQUEST", message: expect.stringContaining("Host"), details: { errors: [{ field: "headers.host", reason: "is required" }] } });
    });

    it("lets an HTTP/1.0 request without Host through (Host is an HTTP/1.1 requirement)", async () => {
      const res = await exchange(`GET ${V}/config HTTP/1.0\r\n\r\n`);
      expect(res.body).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    });

    it("cuts off slow clients on purpose: the headers and the whole request each have a deadline", async () => {
      expect(app.server.headersTimeout).toBe(15_000);
      expect(app.server.requestTimeout).toBe(30_000);
      const tuned = await buildGateway({ transportFor: fakes.transportFor, log, httpTimeouts: { headersMs: 2_000, requestMs: 4_000 } });
      expect([tuned.server.headersTimeout, tuned.server.requestTimeout]).toEqual([2_000, 4_000]);
      await tuned.close();
    });

    it("answers a NUL byte in a header value with 400 in the error shape", async () => {
      const res = await exchange(Buffer.from(`GET ${V}/config HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n\r\n`, "latin1"));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 400, code: "INVALID_REQUEST", message: expect.any(String), details: {} });
    });
  });
});
