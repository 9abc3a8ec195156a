import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEADER, form, individualRow } from "./bulk-csv.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { gridVerified, type ReceivedWebhook as Received } from "./grid-signature.js";

// Grid's POST /customers/bulk/csv and GET /customers/bulk/jobs/{jobId} (issue 27), end to end:
// the multipart upload, the job's progress and row errors, the BULK_UPLOAD_* webhook in both
// namings, every malformed file a clear 4xx, the same file imported once, and a restart mid-job.

const uniq = (p: string) => `${p}-${randomBytes(4).toString("hex")}`;

async function finished(p: Caller, jobId: string, ms = 60_000) {
  return eventually(async () => {
    const r = await p.call("GET", `/customers/bulk/jobs/${jobId}`);
    expect(r.status).toBe(200);
    return r.body.status === "COMPLETED" || r.body.status === "FAILED" ? r.body : undefined;
  }, ms);
}

/**
 * Grid's BulkCustomerImportJob (openapi components/schemas/customers/BulkCustomerImportJob.yaml,
 * BulkCustomerImportErrorEntry = GridError + correlationId), checked member by member.
 */
function expectGridJob(job: Record<string, any>): void {
  expect(Object.keys(job).every((k) => ["jobId", "status", "progress", "errors", "completedAt"].includes(k)), JSON.stringify(Object.keys(job))).toBe(true);
  expect(typeof job.jobId).toBe("string");
  expect(["PENDING", "PROCESSING", "COMPLETED", "FAILED"]).toContain(job.status);
  for (const k of ["total", "processed", "successful", "failed"]) expect(Number.isInteger(job.progress[k]), k).toBe(true);
  if (job.completedAt !== undefined) expect(Number.isNaN(Date.parse(job.completedAt))).toBe(false);
  expect(Array.isArray(job.errors)).toBe(true);
  for (const e of job.errors) {
    expect(typeof e.correlationId).toBe("string");
    expect(typeof e.code).toBe("string");
    expect(typeof e.message).toBe("string");
    expect(typeof e.details === "object" && e.details !== null && !Array.isArray(e.details)).toBe(true);
  }
}


describe.skipIf(skipReason())(`bulk customer import (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  const servers: Server[] = [];

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform({ name: "bulk import e2e" });
  });
  afterAll(async () => {
    await system?.stop();
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  });

  it("creates the customers of a Grid CSV in the background: 202, progress, row errors, BULK_UPLOAD_COMPLETED", async () => {
    const ok1 = uniq("bulk");
    const ok2 = uniq("bulk");
    const biz = uniq("biz");
    const csv = [
      HEADER,
      `$${ok1}@acme.example,${ok1},INDIVIDUAL,John Doe,1990-01-15,"123 Main St, Apt 4",San Francisco,CA,94105,US,acct-1,`,
      individualRow(ok2),
      individualRow(uniq("bad"), "1990-02-31"),
      individualRow(ok1),
      `,${biz},BUSINESS,,,400 Commerce Way,Austin,TX,78701,US,,Acme Inc`,
      ",,INDIVIDUAL,No Id,1990-01-15,,,,,,,",
    ].join("\r\n");
    const accepted = await p.call("POST", "/customers/bulk/csv", form(csv));
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ jobId: expect.stringMatching(/^Job:/), status: "PENDING" });

    const pending = (await p.call("GET", `/customers/bulk/jobs/${accepted.body.jobId}`)).body;
    expectGridJob(pending);
    const job = await finished(p, accepted.body.jobId);
    expectGridJob(job);
    expect(job).toMatchObject({ jobId: accepted.body.jobId, status: "COMPLETED", progress: { total: 6, processed: 6, successful: 3, failed: 3 }, completedAt: expect.any(String) });
    expect(job.errors.map((e: { correlationId: string; code: string; details: { row: number; line: number } }) => [e.correlationId, e.code, e.details.row, e.details.line])).toEqual([
      [expect.stringMatching(/^bad-/), "INVALID_INPUT", 3, 4],
      [ok1, "CONFLICT", 4, 5],
      ["row_6", "INVALID_INPUT", 6, 7],
    ]);
    expect(job.errors[0].details.errors).toEqual([{ field: "birthDate", reason: expect.any(String) }]);

    for (const id of [ok1, ok2, biz]) {
      const list = await p.call("GET", `/customers?platformCustomerId=${encodeURIComponent(id)}`);
      expect(list.body.data, id).toHaveLength(1);
    }
    const one = (await p.call("GET", `/customers?platformCustomerId=${ok1}`)).body.data[0];
    expect(one).toMatchObject({ customerType: "INDIVIDUAL", umaAddress: `$${ok1}@acme.example`, fullName: "John Doe", address: { line1: "123 Main St, Apt 4", country: "US" } });

    const event = await eventually(async () => (await p.call("GET", `/events?type=BULK_UPLOAD_COMPLETED&resourceId=${encodeURIComponent(job.jobId)}`)).body.data?.[0]);
    expect(event.payload).toMatchObject({ type: "BULK_UPLOAD_COMPLETED", data: { jobId: job.jobId, status: "COMPLETED", progress: job.progress } });
    expect(event.payload.data.errors).toHaveLength(3);
  });

  it("sends BULK_UPLOAD.FAILED to a platform with Grid's naming, verified as Grid documents; BULK_UPLOAD_FAILED in Corridor's", async () => {
    const received: Received[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    servers.push(server);
    const grid = await system.createPlatform({ name: "bulk import grid naming" });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    expect((await grid.call("PATCH", "/config", { webhookEndpoint: url, webhookEventNaming: "GRID" })).status).toBe(200);
    const { publicKey } = (await grid.call("GET", "/config/webhook-public-key")).body as { publicKey: string };

    const accepted = await grid.call("POST", "/customers/bulk/csv", form(["platformCustomerId,customerType", "a,ROBOT", "b,"].join("\n")));
    expect(accepted.status).toBe(202);
    const job = await finished(grid, accepted.body.jobId);
    expect(job).toMatchObject({ status: "FAILED", progress: { total: 2, processed: 2, successful: 0, failed: 2 } });

    const hook = await eventually(async () => received.find((r) => JSON.parse(r.body).data?.jobId === job.jobId));
    expect(gridVerified(publicKey, hook)).toBe(true);
    const body = JSON.parse(hook.body);
    expectGridJob(body.data);
    expect(body).toMatchObject({ id: expect.stringMatching(/^Webhook:/), type: "BULK_UPLOAD.FAILED", timestamp: expect.any(String), data: { jobId: job.jobId, status: "FAILED" } });
    expect(body.data.errors.map((e: { correlationId: string }) => e.correlationId)).toEqual(["a", "b"]);
    // The events API keeps Corridor's name.
    const event = await eventually(async () => (await grid.call("GET", `/events?resourceId=${encodeURIComponent(job.jobId)}`)).body.data?.[0]);
    expect(event.type).toBe("BULK_UPLOAD_FAILED");
  });

  it("refuses every malformed file whole with 400 on file naming the line, never a 500", async () => {
    const big = `platformCustomerId,customerType\n${"x".repeat(70 * 1024)},INDIVIDUAL\n`;
    const cases: [string, string | Buffer, RegExp][] = [
      ["empty", "", /is empty/],
      ["header only", "platformCustomerId,customerType\n", /no rows/],
      ["unknown column", `${HEADER},nickname\n`, /"nickname" is not a column/],
      ["missing required column", "fullName,birthDate\nA,1990-01-01\n", /lacks the required column platformCustomerId/],
      ["latin-1 bytes", Buffer.concat([Buffer.from("platformCustomerId,customerType\nJos"), Buffer.from([0xe9]), Buffer.from(",INDIVIDUAL\n")]), /not UTF-8/],
      ["UTF-16", Buffer.from("\ufeffplatformCustomerId,customerType\na,INDIVIDUAL\n", "utf16le"), /NUL byte|not UTF-8/],
      ["NUL byte", "platformCustomerId,customerType\na\u0000,INDIVIDUAL\n", /line 2: contains a NUL byte/],
      ["unbalanced quote", 'platformCustomerId,customerType\n"a,INDIVIDUAL\nb,INDIVIDUAL\n', /not closed/],
      ["stray quote", 'platformCustomerId,customerType\na,IND"IVIDUAL\n', /line 2: a " inside an unquoted value/],
      ["ragged row", "platformCustomerId,customerType\na,INDIVIDUAL,x\n", /line 2: has 3 values/],
      ["huge row", big, /line 2: a row is longer than 65536 bytes/],
      ["random bytes", randomBytes(2048), /./],
    ];
    for (const [name, content, reason] of cases) {
      const r = await p.call("POST", "/customers/bulk/csv", form(content));
      expect(r.status, name).toBe(400);
      expect(r.body.code, name).toBe("INVALID_INPUT");
      expect(r.body.details.errors[0].field, name).toBe("body.file");
      expect(r.body.details.errors[0].reason, name).toMatch(reason);
    }

    const json = await p.call("POST", "/customers/bulk/csv", { file: "platformCustomerId,customerType" });
    expect(json.status).toBe(415);
    expect(json.body.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    const noFile = new FormData();
    noFile.append("csv", "platformCustomerId,customerType\na,INDIVIDUAL\n");
    const missing = await p.call("POST", "/customers/bulk/csv", noFile);
    expect(missing.status).toBe(400);
    expect(missing.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(["body.csv", "body.file"]);
    const broken = await system.raw("POST", "/2025-10-13/customers/bulk/csv", {
      body: "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\nplatformCustomerId",
      headers: { "content-type": "multipart/form-data; boundary=x", authorization: `Basic ${Buffer.from(`${p.clientId}:${p.clientSecret}`).toString("base64")}` },
    });
    expect(broken.status).toBe(400);

    const unknown = await p.call("GET", "/customers/bulk/jobs/Job:0193d6a4-0000-7000-8000-000000000000");
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("BULK_IMPORT_JOB_NOT_FOUND");
  });

  it("imports the same file once: 409 naming the job; an Idempotency-Key replays the 202 and refuses another file with 422", async () => {
    const file = [HEADER, individualRow(uniq("idem"))].join("\n");
    const first = await p.call("POST", "/customers/bulk/csv", form(file), { "idempotency-key": "bulk-1" });
    expect(first.status).toBe(202);
    const replay = await p.call("POST", "/customers/bulk/csv", form(file), { "idempotency-key": "bulk-1" });
    expect(replay.status).toBe(202);
    expect(replay.body.jobId).toBe(first.body.jobId);
    const other = await p.call("POST", "/customers/bulk/csv", form([HEADER, individualRow(uniq("idem"))].join("\n")), { "idempotency-key": "bulk-1" });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("IDEMPOTENCY_KEY_REUSED");
    await finished(p, first.body.jobId);
    const again = await p.call("POST", "/customers/bulk/csv", form(file, "renamed.csv"));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: "BULK_IMPORT_DUPLICATE_FILE", details: { jobId: first.body.jobId, status: "COMPLETED" } });
    // Another platform's job is not found.
    const stranger = await system.createPlatform({ name: "bulk stranger" });
    expect((await stranger.call("GET", `/customers/bulk/jobs/${first.body.jobId}`)).status).toBe(404);
  });
});

/**
 * A stop in the middle of a job and a start on the same data: the job resumes where it stopped and
 * each row's customer exists once. Embedded mode owns its processes, so this runs there (PGlite on
 * disk, or a fresh Postgres database when DATABASE_URL is set), as the ledger's restart test does.
 */
