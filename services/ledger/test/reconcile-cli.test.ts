import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ManualClock, appErrorInterceptor, newId, serveConnect, type ConnectServer } from "@corridor/kit";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { RailStatementSchema } from "@corridor/proto/corridor/ledger/v1/rail_statements_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildLedger } from "../src/server.js";
import { startLedgerHarness, walletSignaturesNotUsed, type LedgerHarness } from "./harness.js";

// `npm run admin -- reconcile list|show|resolve` (scripts/admin.ts) run as an operator runs it,
// against a ledger served over the network (its LedgerAdminService; the deployment probe answered
// by a stand-in of auth-sessions' GetDeployment on the same server).

const root = resolve(import.meta.dirname, "../../..");

function admin(args: string[], url: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", resolve(root, "scripts/admin.ts"), "--url", url, ...args],
      { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" }, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe("operator CLI: reconcile list|show|resolve", () => {
  let h: LedgerHarness;
  let server: ConnectServer;
  let url: string;
  beforeAll(async () => {
    h = await startLedgerHarness();
    const built = buildLedger({ db: h.db, clock: new ManualClock("2026-01-01T00:00:00Z"), directory: { environment: async () => "PRODUCTION", customer: async () => ({ platformCustomerId: "", verificationStatus: "", isDeleted: false }), transactionTypes: async () => undefined }, walletSignatures: walletSignaturesNotUsed });
    server = await serveConnect({
      routes: (router) => {
        built.routes(router);
        router.service(PlatformAdminService, { getDeployment: async () => ({ deploymentId: "Deployment:cli-test", name: "cli test", database: "postgres", platformCount: 0 }) } as never);
      },
      interceptors: [appErrorInterceptor],
      port: 0,
      host: "127.0.0.1",
    });
    url = `http://127.0.0.1:${server.port}`;
    // A statement of a connector the ledger routed nothing to: one entry missing in the ledger.
    await h.deliver(
      "rail-statements",
      create(RailStatementSchema, {
        eventId: newId("Event"),
        occurredAt: timestampFromDate(new Date()),
        connector: "ach-cli",
        environment: "PRODUCTION",
        account: "111",
        statementId: "S-CLI-1",
        statementDate: "2026-01-01",
        timeZone: "America/New_York",
        currency: "USD",
        openingBooked: 100n,
        closingBooked: 142n,
        entries: [{ bankEntryId: "B1", direction: "CREDIT", amount: 42n, reference: "TXN-UNKNOWN01", status: "BOOK" }],
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await h?.close();
  });

  it("lists the day with its open break, shows the break, resolves it with a note; refuses a resolve without a note", { timeout: 180_000 }, async () => {
    const list = await admin(["reconcile", "list", "--connector", "ach-cli", "--json"], url);
    expect(list.code, list.stderr).toBe(0);
    const [report] = JSON.parse(list.stdout) as { reportId: string; status: string; openBreakCount: number; statementDate: string }[];
    expect(report).toMatchObject({ status: "BREAKS", openBreakCount: 1, statementDate: "2026-01-01" });

    const show = await admin(["reconcile", "show", "--report", report!.reportId], url);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain("MISSING_IN_LEDGER");
    expect(show.stdout).toContain("TXN-UNKNOWN01");
    const breakId = /(ReconciliationBreak:\S+)/.exec(show.stdout)![1]!;

    expect((await admin(["reconcile", "resolve", "--break", breakId], url)).code).toBe(2);
    const done = await admin(["reconcile", "resolve", "--break", breakId, "--note", "bank interest, booked by hand"], url);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain("is RESOLVED (0 open)");
    const after = await admin(["reconcile", "list", "--status", "resolved", "--connector", "ach-cli"], url);
    expect(after.stdout).toContain(report!.reportId);
  });
});
