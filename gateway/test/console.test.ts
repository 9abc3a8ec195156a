import { readdirSync, readFileSync } from "node:fs";
import { createLogger } from "@corridor/kit";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGateway } from "../src/app.js";
import { CONSOLE_CSP } from "../src/console.js";
import { FakeServices } from "./fakes.js";

const log = createLogger("gateway-test", "silent");
const publicDir = new URL("../../packages/console/public/", import.meta.url);
const script = readdirSync(new URL("assets/", publicDir)).find((f) => f.endsWith(".js"))!;
const style = readdirSync(new URL("assets/", publicDir)).find((f) => f.endsWith(".css"))!;

describe("the console at /console/", () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildGateway({ transportFor: new FakeServices().transportFor, log });
  });
  afterAll(async () => {
    await app.close();
  });

  it("serves the page without credentials, revalidated on every load, under a strict CSP", async () => {
    const res = await app.inject({ method: "GET", url: "/console/" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.headers["cache-control"]).toBe("no-cache");
    expect(res.headers.etag).toBeTruthy();
    expect(res.headers["content-security-policy"]).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("default-src 'none'");
    expect(CONSOLE_CSP).not.toContain("unsafe");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["x-frame-options"]).toBe("DENY");
    expect(res.body).toBe(readFileSync(new URL("index.html", publicDir), "utf8"));
    expect(res.body).toContain(`assets/${script}`);
    expect(res.body).toContain(`assets/${style}`);
    // Nothing from elsewhere: every src and href is this origin's.
    expect(res.body).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("serves the content-hashed assets with their types, cached for a year", async () => {
    const js = await app.inject({ method: "GET", url: `/console/assets/${script}` });
    expect(js.statusCode).toBe(200);
    expect(js.headers["content-type"]).toBe("application/javascript; charset=utf-8");
    expect(js.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(js.headers["content-security-policy"]).toBe(CONSOLE_CSP);
    const css = await app.inject({ method: "GET", url: `/console/assets/${style}` });
    expect(css.statusCode).toBe(200);
    expect(css.headers["content-type"]).toBe("text/css; charset=utf-8");
    expect(css.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
  });

  it("sends /console to /console/, and answers a missing file in the error shape", async () => {
    const bare = await app.inject({ method: "GET", url: "/console" });
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe("/console/");
    const missing = await app.inject({ method: "GET", url: "/console/assets/nothing.js" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ status: 404, code: "NOT_FOUND" });
    const outside = await app.inject({ method: "GET", url: "/console/../package.json" });
    expect(outside.statusCode).toBeGreaterThanOrEqual(400);
    expect(outside.body).not.toContain("@corridor/gateway");
  });

  it("is left out of the OpenAPI document (it is not part of the API)", async () => {
    const doc = (await app.inject({ method: "GET", url: "/2025-10-13/openapi.json" })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).some((p) => p.includes("console"))).toBe(false);
  });
});

describe("the console when its built files are missing", () => {
  it("is not served, and the gateway says why in its log instead of failing to start", async () => {
    const Fastify = (await import("fastify")).default;
    const { registerConsole } = await import("../src/console.js");
    const warnings: unknown[] = [];
    const app = Fastify();
    const warnLog = { ...log, warn: (obj: unknown) => warnings.push(obj) } as unknown as typeof log;
    await registerConsole(app, warnLog, "/nonexistent/console/public/");
    await app.ready();
    expect((await app.inject({ method: "GET", url: "/console/" })).statusCode).toBe(404);
    expect(warnings).toEqual([{ root: "/nonexistent/console/public/" }]);
    await app.close();
  });
});
