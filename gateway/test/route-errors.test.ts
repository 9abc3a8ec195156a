import { readFileSync } from "node:fs";
import { createLogger } from "@corridor/kit";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGateway } from "../src/app.js";
import { ERROR_CODES, ROUTE_ERRORS, routeErrorCodes } from "../src/route-errors.js";
import { FakeServices } from "./fakes.js";

type Operation = { responses: Record<string, { content?: Record<string, { schema: unknown }> }>; security?: unknown[]; parameters?: { in: string; name: string }[] };

/** The code enum a documented error response narrows Error to. */
function codesOf(schema: unknown): string[] | undefined {
  const all = (schema as { allOf?: { properties?: { code?: { enum?: string[] } } }[] }).allOf ?? [];
  return all.map((s) => s.properties?.code?.enum).find((e) => e !== undefined);
}

describe("documented error codes per route", () => {
  let app: FastifyInstance;
  let doc: { paths: Record<string, Record<string, Operation>> };

  beforeAll(async () => {
    app = await buildGateway({ transportFor: new FakeServices().transportFor, log: createLogger("route-errors-test", "silent") });
    doc = (await app.inject({ method: "GET", url: "/2025-10-13/openapi.json" })).json();
  });
  afterAll(async () => {
    await app?.close();
  });

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as const));

  it("has an entry in ROUTE_ERRORS for every served operation, and none for a route that is not served", () => {
    const served = operations().map(([key]) => key).sort();
    expect(served.length).toBeGreaterThan(50);
    expect(Object.keys(ROUTE_ERRORS).sort()).toEqual(served);
  });

  it("documents one response per error status, with code narrowed to exactly the route's codes at that status", () => {
    for (const [key, op] of operations()) {
      const idempotent = (op.parameters ?? []).some((p) => p.in === "header" && p.name.toLowerCase() === "idempotency-key");
      const expected = routeErrorCodes(key, { authenticated: (op.security ?? []).length > 0, idempotent });
      const documented: string[] = [];
      for (const [status, response] of Object.entries(op.responses)) {
        expect(status, key).toMatch(/^\d{3}$/); // no 4XX/5XX ranges left
        if (Number(status) < 400) continue;
        const codes = codesOf(response.content?.["application/json"]?.schema);
        expect(codes, `${key} ${status}`).toBeDefined();
        for (const c of codes!) expect(ERROR_CODES[c as keyof typeof ERROR_CODES][0], `${key} ${status} ${c}`).toBe(Number(status));
        documented.push(...codes!);
      }
      expect(documented.sort(), key).toEqual([...expected].sort());
    }
  });

  it("keeps docs/errors.md equal to the catalogue", () => {
    const page = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
    const listed = [...page.matchAll(/^\| (\d{3}) \| `([A-Z0-9_]+)` \|/gm)].map((m) => `${m[2]} ${m[1]}`).sort();
    expect(listed).toEqual(Object.entries(ERROR_CODES).map(([code, [status]]) => `${code} ${status}`).sort());
  });
});
