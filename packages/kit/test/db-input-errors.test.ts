import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { Health } from "@corridor/proto/grpc/health/v1/health_pb.js";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inputErrorFromDatabase, sql, type DatabaseHandle } from "../src/db/index.js";
import { appErrorInterceptor } from "../src/host/index.js";
import { databaseKinds, openTestDatabase } from "./db-fixture.js";

// Issue 14, defect 1: a value only a client can send that Postgres refuses is a 400, not a 500,
// even when it slips past the gateway (defence in depth in every service's Connect interceptor).
describe.each(databaseKinds)("database errors a client's value causes ($kind)", ({ kind, skip }) => {
  let db: { handle: DatabaseHandle; dispose(): Promise<void> };
  beforeAll(async () => {
    if (skip) return;
    db = await openTestDatabase(kind);
    await sql`create table fuzz_t (id text primary key, at timestamptz, doc jsonb)`.execute(db.handle.root);
  });
  afterAll(async () => {
    await db?.dispose();
  });

  const failure = async (run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (err) {
      return err;
    }
    throw new Error("the query succeeded");
  };

  it.skipIf(skip).each([
    ["a NUL in text", () => sql`insert into fuzz_t (id) values (${"a\u0000b"})`],
    ["a NUL in a jsonb string", () => sql`insert into fuzz_t (id, doc) values ('j', ${JSON.stringify({ k: "a\u0000" })}::jsonb)`],
    ["the smallest JS date", () => sql`insert into fuzz_t (id, at) values ('t2', ${new Date(-8.64e15)})`],
    ["a year Postgres cannot hold", () => sql`select ${"300000-01-01T00:00:00Z"}::timestamptz`],
    ["a malformed date", () => sql`select ${"2025-02-30T00:00:00Z"}::timestamptz`],
  ])("maps %s to 400 INVALID_INPUT", async (_name, query) => {
    const err = await failure(() => query().execute(db.handle.root));
    const mapped = inputErrorFromDatabase(err);
    expect(mapped?.outcome, String(err)).toBe("INVALID");
    expect(mapped?.code).toBe("INVALID_INPUT");
  });

  it.skipIf(skip)("stores the largest JS date or refuses it as a 400, depending on the driver's encoding", async () => {
    try {
      await sql`insert into fuzz_t (id, at) values ('t1', ${new Date(8.64e15)})`.execute(db.handle.root);
    } catch (err) {
      expect(inputErrorFromDatabase(err)?.outcome, String(err)).toBe("INVALID");
    }
  });

  it.skipIf(skip)("leaves other database errors alone (a bug stays a 500)", async () => {
    const err = await failure(() => sql`select * from no_such_table`.execute(db.handle.root));
    expect(inputErrorFromDatabase(err)).toBeUndefined();
    expect(inputErrorFromDatabase(new Error("boom"))).toBeUndefined();
    expect(inputErrorFromDatabase(Object.assign(new Error("reset"), { code: "ECONNRESET" }))).toBeUndefined();
  });

  it.skipIf(skip)("answers the 400 through the services' Connect interceptor", async () => {
    const transport = createRouterTransport(
      (router) =>
        router.service(Health, {
          check: async () => {
            await sql`insert into fuzz_t (id) values (${"x\u0000"})`.execute(db.handle.root);
            return {};
          },
          watch: async function* () {},
        }),
      { router: { interceptors: [appErrorInterceptor] } },
    );
    const err = await failure(() => createClient(Health, transport).check({}));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    expect((err as ConnectError).findDetails(PublicErrorSchema)[0]).toMatchObject({ outcome: "INVALID", code: "INVALID_INPUT" });
  });
});
