import { describe, expect, it } from "vitest";
import type { PostgresPool, PostgresPoolClient } from "kysely";
import { droppingLostConnections, isConnectionFailure, unavailableFromDependency } from "../src/db/unavailable.js";
import { AppError, errors } from "../src/errors.js";

const withCode = (code: string, message = "failed") => Object.assign(new Error(message), { code });

describe("isConnectionFailure", () => {
  it.each([
    ["a refused connection", withCode("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432")],
    ["a reset connection", withCode("ECONNRESET")],
    ["a timed-out connection", withCode("ETIMEDOUT")],
    ["a server shut down by the administrator (restart, pg_terminate_backend)", withCode("57P01", "terminating connection due to administrator command")],
    ["a crashed server", withCode("57P02")],
    ["a server starting up", withCode("57P03", "the database system is starting up")],
    ["a connection exception (class 08)", withCode("08006")],
    ["pg's connection ended under a query", new Error("Connection terminated unexpectedly")],
    ["pg's client that lost its connection", new Error("Client has encountered a connection error and is not queryable")],
    ["a refused connection to a name with several addresses", Object.assign(new AggregateError([withCode("ECONNREFUSED"), withCode("ECONNREFUSED")]), {})],
    ["a wrapped cause", new Error("query failed", { cause: withCode("57P01") })],
  ])("recognises %s", (_what, err) => {
    expect(isConnectionFailure(err)).toBe(true);
    expect(unavailableFromDependency(err)).toMatchObject({ outcome: "UNAVAILABLE", code: "SERVICE_UNAVAILABLE" });
  });

  it.each([
    ["a unique violation", withCode("23505")],
    ["a value too long", withCode("22001")],
    ["a plain bug", new TypeError("x is undefined")],
    ["a domain refusal", errors.notFound("Quote", "Quote:1")],
  ])("leaves %s alone", (_what, err) => {
    expect(isConnectionFailure(err)).toBe(false);
    expect(unavailableFromDependency(err)).toBeUndefined();
  });

  it.each([
    ["a deadlock", withCode("40P01")],
    ["a serialization failure", withCode("40001")],
    ["a lock timeout", withCode("55P03")],
    ["a wrapped deadlock", new Error("query failed", { cause: withCode("40P01") })],
  ])("answers %s (rolled back for concurrency, nothing kept) 503 to retry, without taking it for a lost connection", (_what, err) => {
    expect(isConnectionFailure(err)).toBe(false);
    expect(unavailableFromDependency(err)).toMatchObject({ outcome: "UNAVAILABLE", code: "SERVICE_UNAVAILABLE" });
  });

  it("never rewrites an AppError, whatever its cause", () => {
    const refusal = new AppError("CONFLICT", "X", "x");
    expect(unavailableFromDependency(refusal)).toBeUndefined();
  });
});

describe("droppingLostConnections", () => {
  function fakePool(fail: unknown) {
    const released: (boolean | undefined)[] = [];
    const client = {
      processID: 7,
      release: (destroy?: boolean) => released.push(destroy),
      query: async () => {
        if (fail) throw fail;
        return { rows: [] };
      },
    } as unknown as PostgresPoolClient;
    const pool: PostgresPool = { options: {}, connect: async () => client, end: async () => undefined };
    return { pool: droppingLostConnections(pool), released };
  }

  it("destroys a client on release once a statement on it failed with a lost connection (57P01), so it never serves another request", async () => {
    const { pool, released } = fakePool(withCode("57P01", "terminating connection due to administrator command"));
    const client = await pool.connect();
    await expect(client.query("select 1", [])).rejects.toMatchObject({ code: "57P01" });
    client.release();
    expect(released).toEqual([true]);
  });

  it("returns a client to the pool after an ordinary statement error", async () => {
    const { pool, released } = fakePool(withCode("23505"));
    const client = await pool.connect();
    await expect(client.query("insert", [])).rejects.toMatchObject({ code: "23505" });
    client.release();
    expect(released).toEqual([false]);
  });
});
