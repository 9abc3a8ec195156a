import { createLogger } from "@corridor/kit";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGateway } from "../src/app.js";
import { DOCS_CSP } from "../src/openapi.js";
import { REFERENCE_TAGS, referenceTags } from "../src/openapi-reference.js";
import { FakeServices } from "./fakes.js";

const V = "/2025-10-13";
const log = createLogger("gateway-test", "silent");
const METHODS = ["get", "put", "post", "patch", "delete"];

type Op = {
  tags?: string[];
  summary?: string;
  requestBody?: { content: Record<string, { schema: unknown; example?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown; example?: unknown }> }>;
  "x-codeSamples"?: { lang: string; label: string; source: string }[];
};

describe("the API reference (/2025-10-13/docs/) and the document it reads", () => {
  let app: FastifyInstance;
  let doc: { tags: { name: string }[]; paths: Record<string, Record<string, Op>>; components: { schemas: Record<string, unknown> }; info: { title: string } };
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => ({ path, method: m, op: item[m]! })));

  beforeAll(async () => {
    app = await buildGateway({ transportFor: new FakeServices().transportFor, log });
    doc = (await app.inject({ method: "GET", url: `${V}/openapi.json` })).json();
  });
  afterAll(async () => {
    await app.close();
  });

  it("serves Corridor's page around the local renderer, without credentials, under a strict CSP, nothing from elsewhere", async () => {
    const page = await app.inject({ method: "GET", url: `${V}/docs/` });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toBe(DOCS_CSP);
    expect(DOCS_CSP).toContain("default-src 'none'");
    expect(DOCS_CSP).toContain("script-src 'self';");
    expect(page.body).toContain("<title>Corridor API reference");
    expect(page.body).not.toMatch(/swagger|fastify/i);
    expect(page.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(page.body).not.toMatch(/<script>/);

    const bundle = await app.inject({ method: "GET", url: `${V}/docs/redoc.standalone.js` });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers["content-type"]).toContain("javascript");
    expect(bundle.body.length).toBeGreaterThan(500_000);
    // Nothing in it is loaded from elsewhere (the credit logo's CDN address is emptied).
    expect(bundle.body).not.toContain("cdn.redoc.ly");
    expect(bundle.body).toContain("Redoc");
    const again = await app.inject({ method: "GET", url: `${V}/docs/redoc.standalone.js`, headers: { "if-none-match": String(bundle.headers.etag) } });
    expect(again.statusCode).toBe(304);
    const start = await app.inject({ method: "GET", url: `${V}/docs/reference.js` });
    expect(start.body).toContain('Redoc.init(\n  "../openapi.json"');
    expect((await app.inject({ method: "GET", url: `${V}/docs/reference.css` })).statusCode).toBe(200);

    const bare = await app.inject({ method: "GET", url: `${V}/docs` });
    expect(bare.statusCode).toBe(302);
    expect(bare.headers.location).toBe(`${V}/docs/`);
  });

  it("keeps the document valid OpenAPI 3.1 with Corridor's name, and leaves the page's own routes out of it", async () => {
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(doc.info.title).toBe("Corridor Platform API");
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/docs"))).toEqual([]);
  });

  it("orders the groups as a platform integrates and files every operation under one of them", () => {
    expect(doc.tags.map((t) => t.name)).toEqual([
      "Customers and KYC",
      "Accounts",
      "Transfers",
      "Quotes and FX",
      "UMA",
      "Webhooks and events",
      "Agents",
      "Agent operations",
      "Embedded wallets",
      "Cards",
      "Sandbox",
      "Tokens and config",
    ]);
    const names = new Set(REFERENCE_TAGS.map((t) => t.name));
    const used = new Set<string>();
    for (const { path, method, op } of operations()) {
      expect(op.tags, `${method} ${path}`).toHaveLength(1);
      expect(names.has(op.tags![0]!), `${method} ${path} is tagged ${op.tags![0]}`).toBe(true);
      used.add(op.tags![0]!);
    }
    // No empty group.
    expect([...names].filter((n) => !used.has(n))).toEqual([]);
    const tagOf = (path: string, method: string) => doc.paths[path]![method]!.tags![0];
    expect(tagOf("/customers", "post")).toBe("Customers and KYC");
    expect(tagOf("/cards/{id}/funding-sources", "post")).toBe("Cards");
    expect(tagOf("/verifications", "post")).toBe("Customers and KYC");
    expect(tagOf("/customers/internal-accounts", "get")).toBe("Accounts");
    expect(tagOf("/transfer-out", "post")).toBe("Transfers");
    expect(tagOf("/quotes", "post")).toBe("Quotes and FX");
    expect(tagOf("/receiver/uma/{receiverUmaAddress}", "get")).toBe("UMA");
    expect(tagOf("/transactions/{transactionId}/approve", "post")).toBe("UMA");
    expect(tagOf("/events/{eventId}/redeliver", "post")).toBe("Webhooks and events");
    expect(tagOf("/config/webhook-secret/rotate", "post")).toBe("Webhooks and events");
    expect(tagOf("/auth/credentials", "post")).toBe("Embedded wallets");
    expect(tagOf("/sandbox/clock/advance", "post")).toBe("Sandbox");
    expect(tagOf("/tokens", "post")).toBe("Tokens and config");
    // A tag the reference does not know is kept as it is (and the test above then fails for its route).
    expect(referenceTags("/new-thing", ["Something new"])).toEqual(["Something new"]);
  });

  it("gives every operation a request example (curl, and the JSON body when it takes one) and an example of every answer with a body", () => {
    const missing: string[] = [];
    for (const { path, method, op } of operations()) {
      const curl = op["x-codeSamples"]?.find((s) => s.label === "curl")?.source ?? "";
      if (!curl.includes(`-X ${method.toUpperCase()} "$CORRIDOR${path.split("{")[0]}`)) missing.push(`${method} ${path}: curl`);
      if (/\{[^}]+\}/.test(curl.split("\n").find((l) => l.startsWith("curl"))!)) missing.push(`${method} ${path}: curl keeps a {param}`);
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        if (media.example === undefined) missing.push(`${method} ${path}: request ${type}`);
        else if (!curl.includes("-d '")) missing.push(`${method} ${path}: curl without its body`);
      }
      const answers = Object.entries(op.responses).filter(([, r]) => r.content);
      if (answers.length === 0) missing.push(`${method} ${path}: no answer with a body`);
      for (const [status, r] of answers) {
        for (const [type, media] of Object.entries(r.content!)) if (media.example === undefined) missing.push(`${method} ${path}: ${status} ${type}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("gives examples that match their own schemas, and errors their status and a code", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: "doc", components: doc.components } as never);
    const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
    const check = (schema: unknown, example: unknown) => {
      const text = JSON.stringify(schema).replace(/"#\/components\//g, '"doc#/components/');
      let validate = compiled.get(text);
      if (!validate) compiled.set(text, (validate = ajv.compile(JSON.parse(text))));
      return validate(example) ? undefined : ajv.errorsText(validate.errors);
    };
    const wrong: string[] = [];
    for (const { path, method, op } of operations()) {
      for (const media of Object.values(op.requestBody?.content ?? {})) {
        const problem = check(media.schema, media.example);
        if (problem) wrong.push(`${method} ${path} request: ${problem}`);
      }
      for (const [status, r] of Object.entries(op.responses)) {
        for (const media of Object.values(r.content ?? {})) {
          const problem = check(media.schema, media.example);
          if (problem) wrong.push(`${method} ${path} ${status}: ${problem}`);
          if (!status.startsWith("2")) {
            const e = media.example as { status: number; code: string };
            if (/^\d{3}$/.test(status) && e.status !== Number(status)) wrong.push(`${method} ${path} ${status}: example says ${e.status}`);
            if (!/^[A-Z][A-Z0-9_]+$/.test(e.code)) wrong.push(`${method} ${path} ${status}: code ${e.code}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("escapes placeholders such as <uuidv7> in descriptions, so a Markdown renderer shows them", () => {
    const descriptions: string[] = [];
    const walk = (n: unknown): void => {
      if (Array.isArray(n)) n.forEach(walk);
      else if (n && typeof n === "object") for (const [k, v] of Object.entries(n)) k === "description" && typeof v === "string" ? descriptions.push(v) : walk(v);
    };
    walk(doc);
    expect(descriptions.filter((d) => /(?<!\\)<[A-Za-z][\w.-]*>/.test(d))).toEqual([]);
    expect(descriptions).toContain("Webhook:\\<uuidv7\\>.");
  });

  it("shows the events API's own examples (Event with its attempts)", () => {
    const detail = doc.paths["/events/{eventId}"]!.get!.responses["200"]!.content!["application/json"]!.example as { id: string; attempts: unknown[] };
    expect(detail.id).toMatch(/^Webhook:/);
    expect(detail.attempts).toHaveLength(2);
  });
});
