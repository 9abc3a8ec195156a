import { createLogger } from "@corridor/kit";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { buildGateway } from "../src/app.js";
import { LazyCompilers, compileAllRouteSchemas } from "../src/lazy-compile.js";
import { FakeServices } from "./fakes.js";
import { Permission } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";

const log = createLogger("gateway-test", "silent");
const basic = (c: { clientId: string; clientSecret: string }) => `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString("base64")}`;

describe("lazy route compilers", () => {
  const apps: FastifyInstance[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  const build = async () => {
    const fakes = new FakeServices();
    const token = fakes.addToken({ permissions: [Permission.VIEW, Permission.TRANSACT, Permission.MANAGE] });
    const app = await buildGateway({ transportFor: fakes.transportFor, log });
    apps.push(app);
    return { app, token };
  };

  it("every route's validators and serializers compile (what ready used to check)", async () => {
    const { app } = await build();
    const compiled = compileAllRouteSchemas(app);
    expect(compiled).toBeGreaterThan(100);
    expect(compileAllRouteSchemas(app)).toBe(0);
  });

  it("compiles a route's schemas on its first request, not at ready", async () => {
    const fresh = compileAllRouteSchemas((await build()).app);
    const { app, token } = await build();
    const res = await app.inject({ method: "GET", url: "/2025-10-13/customers?limit=x", headers: { authorization: basic(token) } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const ok = await app.inject({ method: "GET", url: "/2025-10-13/config", headers: { authorization: basic(token) } });
    expect(ok.statusCode).toBe(200);
    // The two routes' validators and serializers were compiled by those requests; the rest wait.
    expect(compileAllRouteSchemas(app)).toBeLessThan(fresh - 1);
  });

  it("forwards errors and the data context of the compiled validator", () => {
    const lazy = new LazyCompilers();
    let compiles = 0;
    const compiled = Object.assign(
      (data: unknown, ctx?: unknown) => {
        compiled.errors = data === 1 ? null : [{ message: "bad", ctx }];
        return data === 1;
      },
      { errors: null as unknown, schemaEnv: {} },
    );
    const validate = lazy.validator(() => {
      compiles++;
      return compiled;
    });
    expect(compiles).toBe(0);
    expect(validate(2, { parentData: {} })).toBe(false);
    expect(validate.errors).toEqual([{ message: "bad", ctx: { parentData: {} } }]);
    expect(validate(1)).toBe(true);
    expect(validate.errors).toBeNull();
    expect(compiles).toBe(1);
  });

  it("reports a schema that cannot be compiled", async () => {
    const lazy = new LazyCompilers();
    const { app } = await build();
    lazy.attach(app);
    lazy.validator(() => {
      throw new Error("unresolvable $ref");
    });
    expect(() => compileAllRouteSchemas(app)).toThrow("unresolvable $ref");
  });
});
