import { randomBytes } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { AppError, ManualClock, appErrorInterceptor, createIdempotencyRunner, idempotencyKeyStore, sql, type DatabaseHandle } from "@corridor/kit";
import { expectRefusal, fieldsOf, openServiceTestDatabase } from "@corridor/kit/testing";
import { CustomerImportsService } from "@corridor/proto/corridor/customers_kyc/v1/customer_imports_service_pb.js";
import { CustomerEventSchema, type CustomerEvent } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importTransactOver, type CustomerImportsDatabase } from "../src/data/customer-imports.js";
import { readCustomerCsv, rowToCustomerInput, type CsvRow } from "../src/domain/customer-import-csv.js";
import { createCustomerImports, type CustomerImports } from "../src/domain/customer-imports.js";
import type { PlatformDirectory, Store } from "../src/domain/ports.js";
import type { PlatformSettings } from "../src/domain/types.js";
import { customerEvents } from "../src/events/customer-events.js";
import { customerImportEvents } from "../src/events/customer-import-events.js";
import { SCHEMA, buildCustomersKyc, service } from "../src/server.js";

type TestPlatform = PlatformSettings & { environment: "SANDBOX" | "PRODUCTION" };

const LIMITS = { maxBytes: 64 * 1024, maxRows: 50 };
const HEADER = "umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country,platformAccountId,businessLegalName";

let db: DatabaseHandle;
let drop: () => Promise<void>;
const clock = new ManualClock("2025-10-13T12:00:00.000Z");
const platforms = new Map<string, TestPlatform>();
const directory: PlatformDirectory = {
  async settings(platformId) {
    const p = platforms.get(platformId);
    if (!p) throw new Error(`unknown platform ${platformId}`);
    return p;
  },
};
let rpc: Client<typeof CustomerImportsService>;
let seq = 0;

function platform(): string {
  const id = `Platform:imports-${++seq}-${randomBytes(3).toString("hex")}`;
  platforms.set(id, { umaDomain: "acme.sandbox.uma.money", supportedCurrencies: ["USD"], isRegulated: false, environment: "SANDBOX" });
  return id;
}

/**
 * A process's view of the imports over the shared database. `crashOnCreate(n)` makes the n-th
 * customer this instance creates fail inside its transaction (after the customer's INSERT), as a
 * process killed mid-transaction would: nothing of that transaction commits.
 */
function instance(opts: { crashOnCreate?: number } = {}): CustomerImports {
  let created = 0;
  const events = (trx: Parameters<typeof customerEvents>[0]): Store["events"] => {
    const real = customerEvents(trx);
    return {
      ...real,
      customerCreated: async (c, at) => {
        created++;
        if (created === opts.crashOnCreate) throw new Error("process killed");
        return real.customerCreated(c, at);
      },
    };
  };
  const schemaDb = db.forSchema<CustomerImportsDatabase>(SCHEMA);
  return createCustomerImports({
    transact: importTransactOver(schemaDb, events, customerImportEvents),
    clock,
    platforms: directory,
    idempotency: createIdempotencyRunner(idempotencyKeyStore(schemaDb), clock),
    limits: LIMITS,
  });
}

async function runToEnd(imports: CustomerImports): Promise<void> {
  for (let i = 0; i < 1000; i++) if ((await imports.runPass(7)) === 0) return;
  throw new Error("the import never finished");
}

const csv = (...lines: string[]) => Buffer.from(lines.join("\n") + "\n");
const individualRow = (id: string, extra: Partial<Record<"uma" | "name" | "birth", string>> = {}) =>
  `${extra.uma ?? ""},${id},INDIVIDUAL,${extra.name ?? "Alice Smith"},${extra.birth ?? "1990-01-15"},123 Main St,San Francisco,CA,94105,US,,`;

async function customersOf(platformId: string): Promise<{ platform_customer_id: string }[]> {
  const { rows } = await sql<{ platform_customer_id: string }>`select platform_customer_id from customers_kyc.customers where platform_id = ${platformId} order by platform_customer_id`.execute(db.root);
  return rows;
}

async function eventsOf(platformId: string): Promise<{ type: string; key: string; event: CustomerEvent }[]> {
  const { rows } = await sql<{ key: string; headers: Record<string, string>; payload: Uint8Array }>`select key, headers, payload from customers_kyc.outbox order by id`.execute(db.root);
  return rows.map((r) => ({ type: r.headers["event-type"]!, key: r.key, event: fromBinary(CustomerEventSchema, r.payload) })).filter((e) => e.event.platformId === platformId);
}

beforeAll(async () => {
  ({ db, drop } = await openServiceTestDatabase(service));
  const built = buildCustomersKyc({
    db,
    clock,
    env: { CORRIDOR_BULK_IMPORT_MAX_BYTES: String(LIMITS.maxBytes), CORRIDOR_BULK_IMPORT_MAX_ROWS: String(LIMITS.maxRows) },
    platforms: directory,
    ledger: { closeIfEmpty: async () => ({ accounts: [], inFlightTransactions: [], closed: true }) },
  });
  rpc = createClient(CustomerImportsService, createRouterTransport(built.routes, { router: { interceptors: [appErrorInterceptor] } }));
});
afterAll(async () => {
  await drop?.();
});

describe("the CSV file (readCustomerCsv)", () => {
  const read = async (content: Uint8Array | string, limits = LIMITS) => {
    const rows: CsvRow[] = [];
    const n = await readCustomerCsv(typeof content === "string" ? Buffer.from(content) : content, limits, async (chunk) => void rows.push(...chunk), 2);
    return { n, rows };
  };
  const refusal = async (content: Uint8Array | string, limits = LIMITS): Promise<string[]> => {
    try {
      await read(content, limits);
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe("INVALID_INPUT");
      return ((err as AppError).details.errors as { field: string; reason: string }[]).map((e) => `${e.field}: ${e.reason}`);
    }
    throw new Error("the file should have been refused");
  };

  it("reads Grid's example (columns in Grid's order, a BOM, CRLF and LF mixed, quoted commas) into rows with their lines", async () => {
    const text = `\ufeff${HEADER}\r\n$john.doe@uma.domain.com,customer123,INDIVIDUAL,John Doe,1990-01-15,"123 Main St, Apt 4",San Francisco,CA,94105,US,acct-1,\n\n acme@uma.domain.com ,biz456,BUSINESS,,,400 Commerce Way,Austin,TX,78701,US,,"Acme ""Widgets"" Inc"\n`;
    const { n, rows } = await read(text);
    expect(n).toBe(2);
    expect(rows.map((r) => [r.row, r.line])).toEqual([
      [1, 2],
      [2, 4],
    ]);
    expect(rows[0]!.fields.addressLine1).toBe("123 Main St, Apt 4");
    expect(rowToCustomerInput(rows[1]!.fields)).toEqual({
      platformCustomerId: "biz456",
      customerType: "BUSINESS",
      umaAddress: "$acme@uma.domain.com",
      address: { line1: "400 Commerce Way", city: "Austin", state: "TX", postalCode: "78701", country: "US" },
      businessInfo: { legalName: 'Acme "Widgets" Inc' },
    });
  });

  it("refuses malformed files whole, naming the line: columns, encodings, NUL bytes, quotes, ragged and huge rows, sizes", async () => {
    expect(await refusal("")).toEqual(["file: is empty (a header line and at least one row are needed)"]);
    expect(await refusal(`${HEADER}\n`)).toEqual(["file: has a header but no rows"]);
    expect(await refusal(`${HEADER},fullname\nx\n`)).toEqual([expect.stringContaining('line 1: "fullname" is not a column of a customer upload')]);
    expect(await refusal("umaAddress,fullName\n$a@b.c,Al\n")).toEqual([
      "file: line 1: the header lacks the required column platformCustomerId",
      "file: line 1: the header lacks the required column customerType",
    ]);
    expect(await refusal("platformCustomerId,customerType,customerType\na,INDIVIDUAL,INDIVIDUAL\n")).toEqual(["file: line 1: column customerType appears twice"]);
    expect(await refusal(Buffer.concat([Buffer.from("platformCustomerId,customerType\n"), Buffer.from([0x63, 0x61, 0x66, 0xe9]), Buffer.from(",INDIVIDUAL\n")]))).toEqual([
      "file: is not UTF-8 text (save the file as CSV UTF-8)",
    ]);
    expect(await refusal(Buffer.from("\ufeffplatformCustomerId,customerType\na,INDIVIDUAL\n", "utf16le"))).toEqual([expect.stringMatching(/NUL byte|not UTF-8/)]);
    expect(await refusal("platformCustomerId,customerType\na,INDIVIDUAL\nb\u0000,INDIVIDUAL\n")).toEqual(["file: line 3: contains a NUL byte (a CSV file is text)"]);
    expect(await refusal('platformCustomerId,customerType\na,INDIVIDUAL\n"b,INDIVIDUAL\n')).toEqual([expect.stringContaining("is not closed (unbalanced")]);
    expect(await refusal('platformCustomerId,customerType\na,IND"IVIDUAL\n')).toEqual([expect.stringContaining('line 2: a " inside an unquoted value')]);
    expect(await refusal('platformCustomerId,customerType\n"a"x,INDIVIDUAL\n')).toEqual([expect.stringContaining("line 2:")]);
    expect(await refusal("platformCustomerId,customerType\na,INDIVIDUAL,extra\n")).toEqual(["file: line 2: has 3 values where the header has 2 columns"]);
    expect(await refusal("platformCustomerId,customerType\na\n")).toEqual(["file: line 2: has 1 values where the header has 2 columns"]);
    expect(await refusal(`platformCustomerId,customerType\n${"x".repeat(70 * 1024)},INDIVIDUAL\n`, { maxBytes: 1024 * 1024, maxRows: 10 })).toEqual([
      "file: line 2: a row is longer than 65536 bytes",
    ]);
    expect(await refusal(`platformCustomerId,customerType\n${"a,INDIVIDUAL\n".repeat(4)}`, { maxBytes: 1024, maxRows: 3 })).toEqual([
      "file: has more than 3 rows (the limit of one upload; split the file)",
    ]);
    expect(await refusal(`platformCustomerId,customerType\n${"a,INDIVIDUAL\n".repeat(100)}`, { maxBytes: 1024, maxRows: 1000 })).toEqual([
      "file: is larger than 1024 bytes (the limit of one upload; split the file)",
    ]);
  });

  it("never fails otherwise on arbitrary bytes: every random file is read or refused with INVALID_INPUT on file", async () => {
    const alphabet = ['"', ",", "\n", "\r", "a", "INDIVIDUAL", " ", "\u00e9", "\ufeff", "\u0000", "platformCustomerId", "customerType", '""'];
    for (let i = 0; i < 300; i++) {
      const bytes =
        i % 3 === 0
          ? randomBytes(1 + (i % 200))
          : Buffer.from(
              (i % 2 ? "platformCustomerId,customerType\n" : "") +
                Array.from({ length: 1 + (i % 40) }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join(""),
            );
      try {
        await read(bytes);
      } catch (err) {
        expect(err, `input ${bytes.toString("base64")}`).toBeInstanceOf(AppError);
        expect((err as AppError).code).toBe("INVALID_INPUT");
        expect(((err as AppError).details.errors as { field: string }[])[0]!.field).toBe("file");
      }
    }
  });
});

describe("bulk customer imports", () => {
  it("creates each row's customer, records refused rows with their correlationId, and ends COMPLETED with one BULK_UPLOAD_COMPLETED", async () => {
    const platformId = platform();
    const file = csv(HEADER, individualRow("c-1"), individualRow("c-2", { birth: "1990-13-45" }), individualRow("", { name: "No Id" }), individualRow("c-1"), `,biz-1,BUSINESS,,,400 Commerce Way,Austin,TX,78701,US,,Acme Inc`);
    const { job } = await rpc.startCustomerImport({ platformId, content: file, fileName: "customers.csv" });
    expect(job).toMatchObject({ status: "PENDING", total: 5, processed: 0, successful: 0, failed: 0, fileName: "customers.csv" });
    expect(await customersOf(platformId)).toEqual([]);

    await runToEnd(instance());
    const done = (await rpc.getCustomerImport({ platformId, jobId: job!.id })).job!;
    expect(done).toMatchObject({ status: "COMPLETED", total: 5, processed: 5, successful: 2, failed: 3 });
    expect(done.completedAt).toBeDefined();
    expect(done.errors.map((e) => [e.correlationId, e.code, e.row, e.line])).toEqual([
      ["c-2", "INVALID_INPUT", 2, 3],
      ["row_3", "INVALID_INPUT", 3, 4],
      ["c-1", "CONFLICT", 4, 5],
    ]);
    expect(done.errors[0]!.fieldErrors.map((f) => f.field)).toEqual(["birthDate"]);
    expect(done.errors[1]!.fieldErrors.map((f) => f.field)).toContain("platformCustomerId");
    expect((await customersOf(platformId)).map((c) => c.platform_customer_id)).toEqual(["biz-1", "c-1"]);

    const events = await eventsOf(platformId);
    expect(events.filter((e) => e.type === "CUSTOMER_CREATED")).toHaveLength(2);
    const finished = events.filter((e) => e.type.startsWith("BULK_UPLOAD_"));
    expect(finished.map((e) => [e.type, e.key])).toEqual([["BULK_UPLOAD_COMPLETED", job!.id]]);
    const payload = finished[0]!.event.payload;
    expect(payload.case).toBe("customerImportFinished");
    if (payload.case === "customerImportFinished") expect(payload.value.job).toMatchObject({ id: job!.id, status: "COMPLETED", successful: 2, failed: 3 });

    // Nothing more happens however often the worker runs again.
    await runToEnd(instance());
    expect((await eventsOf(platformId)).filter((e) => e.type.startsWith("BULK_UPLOAD_"))).toHaveLength(1);
  });

  it("ends FAILED with BULK_UPLOAD_FAILED when no row creates a customer", async () => {
    const platformId = platform();
    const { job } = await rpc.startCustomerImport({ platformId, content: csv("platformCustomerId,customerType", "a,ROBOT", "b,"), fileName: "bad.csv" });
    await runToEnd(instance());
    const done = (await rpc.getCustomerImport({ platformId, jobId: job!.id })).job!;
    expect(done).toMatchObject({ status: "FAILED", processed: 2, successful: 0, failed: 2 });
    expect((await eventsOf(platformId)).map((e) => e.type)).toEqual(["BULK_UPLOAD_FAILED"]);
  });

  it("resumes after a process dies mid-row and creates every customer exactly once", async () => {
    const platformId = platform();
    const rows = Array.from({ length: 12 }, (_, i) => individualRow(`r-${String(i + 1).padStart(2, "0")}`));
    const { job } = await rpc.startCustomerImport({ platformId, content: csv(HEADER, ...rows), fileName: "" });

    // The first process creates 4 customers and dies inside the transaction of the 5th.
    await expect(instance({ crashOnCreate: 5 }).runPass(100)).rejects.toThrow("process killed");
    const mid = (await rpc.getCustomerImport({ platformId, jobId: job!.id })).job!;
    expect(mid).toMatchObject({ status: "PROCESSING", processed: 4, successful: 4 });
    expect(await customersOf(platformId)).toHaveLength(4);

    // A second process stops between rows (a pass of 3), a third finishes.
    await instance().runPass(3);
    expect(await customersOf(platformId)).toHaveLength(7);
    await runToEnd(instance());

    const done = (await rpc.getCustomerImport({ platformId, jobId: job!.id })).job!;
    expect(done).toMatchObject({ status: "COMPLETED", total: 12, processed: 12, successful: 12, failed: 0, errors: [] });
    expect((await customersOf(platformId)).map((c) => c.platform_customer_id)).toEqual(rows.map((_, i) => `r-${String(i + 1).padStart(2, "0")}`));
    const events = await eventsOf(platformId);
    expect(events.filter((e) => e.type === "CUSTOMER_CREATED")).toHaveLength(12);
    expect(events.filter((e) => e.type === "BULK_UPLOAD_COMPLETED")).toHaveLength(1);
  });

  it("lets two processes work at once without creating a customer twice", async () => {
    const platformId = platform();
    const { job } = await rpc.startCustomerImport({ platformId, content: csv(HEADER, ...Array.from({ length: 15 }, (_, i) => individualRow(`p-${i}`))), fileName: "" });
    await Promise.all([runToEnd(instance()), runToEnd(instance()), runToEnd(instance())]);
    expect(await customersOf(platformId)).toHaveLength(15);
    expect((await rpc.getCustomerImport({ platformId, jobId: job!.id })).job).toMatchObject({ status: "COMPLETED", processed: 15, successful: 15 });
    expect((await eventsOf(platformId)).filter((e) => e.type === "BULK_UPLOAD_COMPLETED")).toHaveLength(1);
  });

  it("imports the same file once: again is 409 BULK_IMPORT_DUPLICATE_FILE naming the job; an Idempotency-Key replays, and with another file is 422", async () => {
    const platformId = platform();
    const file = csv(HEADER, individualRow("k-1"));
    const first = await rpc.startCustomerImport({ platformId, content: file, fileName: "a.csv", idempotencyKey: "upload-1" });
    const replay = await rpc.startCustomerImport({ platformId, content: file, fileName: "a.csv", idempotencyKey: "upload-1" });
    expect(replay.job!.id).toBe(first.job!.id);
    const dup = await expectRefusal(rpc.startCustomerImport({ platformId, content: file, fileName: "b.csv" }), "CONFLICT", "BULK_IMPORT_DUPLICATE_FILE");
    expect(dup.details).toMatchObject({ jobId: first.job!.id, status: "PENDING" });
    await expectRefusal(rpc.startCustomerImport({ platformId, content: csv(HEADER, individualRow("k-2")), fileName: "c.csv", idempotencyKey: "upload-1" }), "UNPROCESSABLE", "IDEMPOTENCY_KEY_REUSED");
    await runToEnd(instance());
    await expectRefusal(rpc.startCustomerImport({ platformId, content: file, fileName: "a.csv" }), "CONFLICT", "BULK_IMPORT_DUPLICATE_FILE");
    expect(await customersOf(platformId)).toHaveLength(1);
    // Another platform may upload the same bytes.
    expect((await rpc.startCustomerImport({ platformId: platform(), content: file, fileName: "a.csv" })).job!.status).toBe("PENDING");
  });

  it("stores nothing for a refused file, and keeps jobs to their platform", async () => {
    const platformId = platform();
    const refused = await expectRefusal(rpc.startCustomerImport({ platformId, content: Buffer.from('platformCustomerId,customerType\n"a,INDIVIDUAL\n'), fileName: "" }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(refused)).toEqual(["file"]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from customers_kyc.customer_imports where platform_id = ${platformId}`.execute(db.root);
    expect(rows[0]!.n).toBe(0);
    const { job } = await rpc.startCustomerImport({ platformId, content: csv(HEADER, individualRow("x-1")), fileName: "" });
    await expectRefusal(rpc.getCustomerImport({ platformId: platform(), jobId: job!.id }), "NOT_FOUND", "BULK_IMPORT_JOB_NOT_FOUND");
    await expectRefusal(rpc.getCustomerImport({ platformId, jobId: "Job:nope" }), "NOT_FOUND", "BULK_IMPORT_JOB_NOT_FOUND");
  });
});
