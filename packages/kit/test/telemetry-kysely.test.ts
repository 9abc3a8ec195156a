import { randomBytes } from "node:crypto";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { PGlite } from "@electric-sql/pglite";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { Kysely, PGliteDialect, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@corridor/proto/grpc/health/v1/health_pb.js";
import { fixedShapeQuery, openDatabase, type DatabaseHandle } from "../src/db/index.js";
import {
  installTestTracing,
  kyselyTracingLog,
  tracingClientInterceptor,
  tracingServerInterceptor,
  withTracing,
  type ReadableSpan,
} from "../src/telemetry/index.js";

const exporter = installTestTracing();
beforeEach(() => exporter.reset());

const finished = (kind: SpanKind) => exporter.getFinishedSpans().filter((s) => s.kind === kind);

/** Runs `fn` under an INTERNAL span "caller", as handler code always runs under a server span. */
async function inSpan(fn: () => Promise<unknown>): Promise<void> {
  await trace.getTracer("test").startActiveSpan("caller", async (caller) => {
    try {
      await fn();
    } finally {
      caller.end();
    }
  });
}

function expectChild(child: ReadableSpan, parent: ReadableSpan): void {
  expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
  expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
}

// PGlite in memory always; a fresh Postgres database too when DATABASE_URL is set.
type Target = { open(): Promise<DatabaseHandle>; drop(): Promise<void> };
const targets: Array<[string, Target]> = [["PGlite in memory", { open: () => openDatabase({}), drop: async () => {} }]];
if (process.env.DATABASE_URL) {
  const adminUrl = process.env.DATABASE_URL;
  const name = `corridor_t_${randomBytes(6).toString("hex")}`;
  const admin = async (statement: string) => {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: adminUrl, max: 1 }) }) });
    try {
      await sql.raw(statement).execute(db);
    } finally {
      await db.destroy();
    }
  };
  targets.push([
    "Postgres",
    {
      async open() {
        await admin(`create database ${name}`);
        const url = new URL(adminUrl);
        url.pathname = `/${name}`;
        return openDatabase({ databaseUrl: url.toString(), poolSize: 2 });
      },
      drop: () => admin(`drop database if exists ${name}`),
    },
  ]);
}

describe.each(targets)("the Kysely tracing plugin on %s", (_name, target) => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await target.open();
  });
  afterAll(async () => {
    await handle?.close();
    await target.drop();
  });

  it("makes queries inside a Connect handler, in and out of a transaction, db.query spans under the server span", async () => {
    const db = withTracing(handle.root);
    const client = createClient(
      Health,
      createRouterTransport(
        (r) =>
          r.service(Health, {
            check: async () => {
              const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
              await db.selectNoFrom((eb) => eb.val(2).as("two")).execute();
              await db.transaction().execute((trx) => sql`select 3`.execute(trx));
              return { status: rows[0]?.one === 1 ? Status.SERVING : Status.NOT_SERVING };
            },
          }),
        {
          transport: { interceptors: [tracingClientInterceptor({ ignoreServices: [] })] },
          router: { interceptors: [tracingServerInterceptor({ ignoreServices: [] })] },
        },
      ),
    );
    expect((await client.check({})).status).toBe(Status.SERVING);

    const [server] = finished(SpanKind.SERVER);
    const queries = finished(SpanKind.CLIENT).filter((s) => s.name === "db.query");
    expect(server).toBeDefined();
    expect(queries).toHaveLength(3);
    for (const q of queries) {
      expectChild(q, server!);
      expect(q.attributes["db.system"]).toBe("postgresql");
    }
    expect(queries.map((q) => q.attributes["db.query.text"])).toEqual(["select 1 as one", 'select $1 as "two"', "select 3"]);
    expect(queries[1]!.attributes["db.operation.name"]).toBe("SELECT");
  });

  it("records the SQL but no parameter values, once even when the plugin is applied twice", async () => {
    const db = withTracing(withTracing(handle.root));
    await inSpan(() => db.selectNoFrom((eb) => eb.val("secret-value").as("v")).execute());
    const queries = finished(SpanKind.CLIENT);
    expect(queries).toHaveLength(1);
    expect(queries[0]?.attributes["db.query.text"]).toBe('select $1 as "v"');
    expect(JSON.stringify(queries[0]?.attributes)).not.toContain("secret-value");
  });

  it("skips queries outside any span, such as outbox polling, unless told otherwise", async () => {
    await sql`select 1`.execute(withTracing(handle.root));
    expect(exporter.getFinishedSpans()).toEqual([]);
    await sql`select 1`.execute(withTracing(handle.root, { requireParentSpan: false }));
    const [root] = finished(SpanKind.CLIENT);
    expect(root?.name).toBe("db.query");
    expect(root?.parentSpanContext).toBeUndefined();
  });

  it("includes the schema qualification added by withSchema, before or after the plugin", async () => {
    await sql`create schema telemetry_t`.execute(handle.root);
    await sql`create table telemetry_t.things (id int)`.execute(handle.root);
    const bare = handle.root.withoutPlugins();
    await inSpan(async () => {
      await withTracing(bare.withSchema("telemetry_t")).selectFrom("things").select("id").execute();
      await withTracing(bare).withSchema("telemetry_t").selectFrom("things").select("id").execute();
    });
    expect(finished(SpanKind.CLIENT).map((q) => q.attributes["db.query.text"])).toEqual([
      'select "id" from "telemetry_t"."things"',
      'select "id" from "telemetry_t"."things"',
    ]);
    await sql`drop schema telemetry_t cascade`.execute(handle.root);
  });

  it("makes each execution of a fixed-shape query a span of its own, with the schema-qualified SQL and no values", async () => {
    await sql`create schema telemetry_f`.execute(handle.root);
    await sql`create table telemetry_f.things (id int, label text)`.execute(handle.root);
    const db = handle.root.withSchema("telemetry_f");
    const labelOf = fixedShapeQuery((k: Kysely<any>, a: { id: number }) => k.selectFrom("things").select("label").where("id", "=", a.id));
    await inSpan(async () => {
      await labelOf.execute(db, { id: 7 });
      await db.transaction().execute((trx) => labelOf.execute(trx, { id: 8 }));
      await labelOf.execute(db, { id: 9 });
    });
    const queries = finished(SpanKind.CLIENT).filter((s) => s.name === "db.query");
    const [caller] = finished(SpanKind.INTERNAL);
    expect(queries.map((q) => q.attributes["db.query.text"])).toEqual(Array(3).fill('select "label" from "telemetry_f"."things" where "id" = $1'));
    for (const q of queries) {
      expectChild(q, caller!);
      expect(q.attributes["db.response.returned_rows"]).toBe(0);
    }
    await sql`drop schema telemetry_f cascade`.execute(handle.root);
  });
});

describe("failed queries", () => {
  it("are recorded as error spans when kyselyTracingLog is the Kysely log", async () => {
    const pglite = await PGlite.create("memory://");
    const db = withTracing(new Kysely<any>({ dialect: new PGliteDialect({ pglite }), log: kyselyTracingLog }));
    try {
      await inSpan(() => expect(sql`select * from no_such_table`.execute(db)).rejects.toThrow(/no_such_table/));
      const [q] = finished(SpanKind.CLIENT);
      const [caller] = finished(SpanKind.INTERNAL);
      expect(q?.status.code).toBe(SpanStatusCode.ERROR);
      expect(q?.attributes["db.query.text"]).toBe("select * from no_such_table");
      expectChild(q!, caller!);
    } finally {
      await db.destroy();
    }
  });
});
