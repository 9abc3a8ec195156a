// The restore drill (issue 26, docs/operations.md "Backups and restore"): money through the system,
// a backup taken with scripts/backup.sh while it serves, restored into a new database, the system
// started on the restored one. The books must be exactly what they were, and the work in flight at
// the backup must carry on from the restored rows: a transfer still pending settles, the outboxes
// publish, and outbox rows published again after the restore (the procedure for events the bus
// lost with the restore) change nothing, because every consumer's inbox drops what it handled.
// Runs with real PostgreSQL (DATABASE_URL) and the Debian client tools (pg_dump, pg_restore, psql);
// without them it skips and says why, except in CI.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createClient } from "@connectrpc/connect";
import { SERVICE_NAMES } from "@corridor/kit";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestSystem, type Caller, type TestSystem } from "../e2e/harness.js";
import { advanceClock, balanceOf, fund, platformAccount, platformExternal, txStatus } from "../e2e/ledger-helpers.js";
import { createFreshDatabase } from "../infra/databases.js";

const root = resolve(import.meta.dirname, "../..");
const BACKUP = join(root, "scripts", "backup.sh");

function skipReason(): string {
  if (!process.env.DATABASE_URL) return "DATABASE_URL is not set (the drill needs a real PostgreSQL)";
  for (const tool of ["pg_dump", "pg_restore", "psql"]) {
    if (spawnSync(tool, ["--version"]).status !== 0) return `${tool} is not installed (Debian: postgresql-client)`;
  }
  return "";
}
const skip = skipReason();
if (skip && process.env.CI === "true") throw new Error(`restore drill cannot run in CI: ${skip}`);
if (skip) console.warn(`[ops] restore drill skipped: ${skip}`);

const backup = (...args: string[]) => execFileSync(BACKUP, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, values)).rows;
  } finally {
    await c.end();
  }
}

/** Corridor's schemas in a database: those with a migration table, as scripts/backup.sh finds them. */
const corridorSchemas = async (url: string) =>
  (await query<{ s: string }>(url, "select table_schema as s from information_schema.tables where table_name = 'kysely_migration' order by 1")).map((r) => r.s);

/** Unpublished outbox rows per schema. */
async function outboxBacklog(url: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const s of await corridorSchemas(url)) {
    out[s] = (await query<{ n: number }>(url, `select count(*)::int as n from "${s}".outbox where published_at is null`))[0]!.n;
  }
  return out;
}

/** Every table of Corridor's schemas with its row count and an order-independent digest of its rows. */
async function contents(url: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const tables = await query<{ s: string; t: string }>(
    url,
    "select table_schema as s, table_name as t from information_schema.tables where table_type = 'BASE TABLE' and table_schema = any($1) order by 1, 2",
    [await corridorSchemas(url)],
  );
  for (const { s, t } of tables) {
    const [row] = await query<{ n: number; digest: string | null }>(
      url,
      `select count(*)::int as n, md5(string_agg(md5(x::text), ',' order by md5(x::text))) as digest from "${s}"."${t}" x`,
    );
    out[`${s}.${t}`] = `${row!.n}:${row!.digest ?? ""}`;
  }
  return out;
}

/** Waits until no schema's outbox holds an unpublished row, failing with the backlog per schema. */
async function outboxesDrained(url: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const backlog = await outboxBacklog(url);
    if (Object.values(backlog).every((n) => n === 0)) return;
    if (Date.now() > deadline) expect(backlog, "unpublished outbox rows per schema").toEqual(Object.fromEntries(Object.keys(backlog).map((k) => [k, 0])));
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(!!skip)("restore drill: pg_dump of every schema, pg_restore into a new database, the system resumes on it", () => {
  const work = mkdtempSync(join(tmpdir(), "corridor-drill-"));
  const dumpFile = join(work, "corridor.dump");
  let source: { url: string; drop(): Promise<void> };
  let target: { url: string; drop(): Promise<void> };
  let before: TestSystem | undefined;
  let after: TestSystem | undefined;
  let p: Caller;
  let usdId: string;
  let pendingId: string;
  let outId: string;
  let paidId: string;
  let platformBalance: number;
  let trialBalanceAtBackup: unknown;
  let contentsAtBackup: Record<string, string>;
  let contentsAfterDump: Record<string, string>;

  const trialBalance = async (system: TestSystem) => {
    const res = await createClient(LedgerAdminService, system.transportFor("ledger")).getTrialBalance({ platformId: "" });
    return res.currencies.map((c) => ({
      currency: c.currency,
      balanceSum: c.balanceSum,
      postingSum: c.postingSum,
      mismatched: c.mismatchedAccountCount,
      groups: c.groups.map((g) => ({ owner: g.ownerKind, type: g.accountType, sum: g.balanceSum })).sort((a, b) => `${a.owner}/${a.type}`.localeCompare(`${b.owner}/${b.type}`)),
    }));
  };
  const expectBalanced = (tb: Awaited<ReturnType<typeof trialBalance>>) => {
    expect(tb.length).toBeGreaterThan(0);
    for (const c of tb) {
      expect(c.balanceSum, `${c.currency} balances sum to zero`).toBe(0n);
      expect(c.postingSum, `${c.currency} postings sum to zero`).toBe(0n);
      expect(c.mismatched, `${c.currency} accounts whose balance is not their postings`).toBe(0n);
    }
  };

  beforeAll(async () => {
    source = await createFreshDatabase(process.env.DATABASE_URL!, "corridor_drill_src", { migrated: true });
    target = await createFreshDatabase(process.env.DATABASE_URL!, "corridor_drill_dst");
  }, 60_000);
  afterAll(async () => {
    await before?.stop().catch(() => {});
    await after?.stop();
    await source?.drop();
    await target?.drop();
    rmSync(work, { recursive: true, force: true });
  });

  it("puts money through the system and backs it up while it serves", async () => {
    before = await startTestSystem({ databaseUrl: source.url });
    p = await before.createPlatform({ name: "restore drill" });
    const usd = await platformAccount(p);
    usdId = usd.id;
    await fund(p, usdId, 1_000_000);
    const paid = await platformExternal(p, "000");
    const slow = await platformExternal(p, "005"); // the sandbox keeps it in flight ~30 s of its clock, then fails it
    paidId = paid.id;
    const out = await p.call("POST", "/transfer-out", { source: { accountId: usdId }, destination: { accountId: paid.id }, amount: 2_500 }, { "idempotency-key": "drill-out" });
    expect(out.status, JSON.stringify(out.body)).toBe(201);
    outId = out.body.id;
    const pull = await p.call("POST", "/transfer-in", { source: { accountId: paid.id }, destination: { accountId: usdId }, amount: 4_200 });
    expect(pull.status, JSON.stringify(pull.body)).toBe(201);
    await txStatus(p, out.body.id, "COMPLETED");
    await txStatus(p, pull.body.id, "COMPLETED");
    const pending = await p.call("POST", "/transfer-out", { source: { accountId: usdId }, destination: { accountId: slow.id }, amount: 1_000 });
    expect(pending.status, JSON.stringify(pending.body)).toBe(201);
    pendingId = pending.body.id;
    // Quiet: every event published, the expected balance reached (the 005 transfer's 10.00 held).
    await eventually(async () => ((await balanceOf(p)) === 1_000_000 - 2_500 + 4_200 - 1_000 ? true : undefined), 30_000);
    await outboxesDrained(source.url, 30_000);
    platformBalance = await balanceOf(p);
    trialBalanceAtBackup = await trialBalance(before);
    expectBalanced(trialBalanceAtBackup as never);
    const inFlight = (await p.call("GET", `/transactions/${pendingId}`)).body;
    expect(["PENDING", "PROCESSING"], JSON.stringify(inFlight)).toContain(inFlight.status);

    // Every service schema is in the backup: one per service (the gateway has no database).
    const schemas = backup("schemas", source.url).trim().split("\n");
    expect(schemas).toEqual(await corridorSchemas(source.url));
    expect(schemas.length).toBe(SERVICE_NAMES.length);
    contentsAtBackup = await contents(source.url);
    // Online: the system keeps running while pg_dump reads one snapshot of every schema.
    backup("dump", source.url, dumpFile);
    expect(statSync(dumpFile).size).toBeGreaterThan(0);
    contentsAfterDump = await contents(source.url);
    // The dump lists every schema and the tables in them (pg_restore --list reads its table of contents).
    const toc = execFileSync("pg_restore", ["--list", dumpFile], { encoding: "utf8" });
    for (const s of schemas) expect(toc, `schema ${s} in the dump`).toMatch(new RegExp(`SCHEMA - ${s} `));
    await before.stop();
    before = undefined;
  }, 180_000);

  it("restores every schema into a new database, row for row, and refuses a database that already holds them", async () => {
    backup("restore", dumpFile, target.url);
    expect(await corridorSchemas(target.url)).toEqual(await corridorSchemas(source.url));
    // Row for row: each table's count and digest as they were when the dump was taken. The system
    // was idle, so the digests before and after the dump agree; should a background worker have
    // written in between, the snapshot is one side of that write.
    const restored = await contents(target.url);
    if (JSON.stringify(contentsAfterDump) === JSON.stringify(contentsAtBackup)) expect(restored).toEqual(contentsAtBackup);
    else expect([JSON.stringify(contentsAtBackup), JSON.stringify(contentsAfterDump)], "the restored rows are the snapshot's").toContain(JSON.stringify(restored));
    // The migration bookkeeping came along: the restored schemas are at the code's migrations.
    for (const s of await corridorSchemas(target.url)) {
      const names = async (url: string) => (await query<{ name: string }>(url, `select name from "${s}".kysely_migration order by name`)).map((r) => r.name);
      expect(await names(target.url), s).toEqual(await names(source.url));
    }
    // A second restore over it is refused, changing nothing.
    const again = spawnSync(BACKUP, ["restore", dumpFile, target.url], { encoding: "utf8" });
    expect(again.status).not.toBe(0);
    expect(again.stderr).toMatch(/already holds Corridor schemas/);
  }, 120_000);

  it("starts the system on the restored database: the trial balance is the backup's, the pending transfer settles, new money moves, the outboxes drain", async () => {
    after = await startTestSystem({ databaseUrl: target.url });
    const q = after.as(p.clientId, p.clientSecret);
    // The same books, to the minor unit, in every currency and every group of accounts.
    expect(await trialBalance(after)).toEqual(trialBalanceAtBackup);
    expect(await balanceOf(q)).toBe(platformBalance);
    // A client retrying a request from before the backup with its Idempotency-Key gets the stored
    // answer (the keys were restored too), not a second transfer.
    const replay = await q.call("POST", "/transfer-out", { source: { accountId: usdId }, destination: { accountId: paidId }, amount: 2_500 }, { "idempotency-key": "drill-out" });
    expect(replay.status, JSON.stringify(replay.body)).toBe(201);
    expect(replay.body.id).toBe(outId);
    expect(await balanceOf(q)).toBe(platformBalance);

    // The transfer in flight at the backup carries on from the restored rows: the sandbox clock
    // passes its 30 s, it fails, the hold comes back.
    await advanceClock(q, 60);
    const failed = await txStatus(q, pendingId, "FAILED");
    expect(failed.failureReason).toBe("OFFRAMP_FAILED");
    await eventually(async () => ((await balanceOf(q)) === platformBalance + 1_000 ? true : undefined), 30_000);

    // New money through the restored system: relays publish, the simulator settles, the ledger applies it.
    const ext = await platformExternal(q, "000");
    const fresh = await q.call("POST", "/transfer-out", { source: { accountId: usdId }, destination: { accountId: ext.id }, amount: 700 }, { "idempotency-key": "drill-after" });
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(201);
    await txStatus(q, fresh.body.id, "COMPLETED");
    await outboxesDrained(target.url, 30_000);
    const settled = platformBalance + 1_000 - 700;
    expect(await balanceOf(q)).toBe(settled);
    const tb = await trialBalance(after);
    expectBalanced(tb);

    // Events the bus lost with the restore are published again from the outboxes (backup.sh
    // republish): here every event ever published. The consumers' inboxes drop each one they
    // already handled, so nothing is applied twice and the books do not move.
    const republished = Number(backup("republish", target.url, "1970-01-01T00:00:00Z").trim());
    expect(republished).toBeGreaterThan(0);
    await outboxesDrained(target.url, 60_000);
    // Let the consumers finish with what was just published: every consumer's inbox stops growing.
    const inboxes = async () => {
      let n = 0;
      for (const s of await corridorSchemas(target.url)) n += (await query<{ n: number }>(target.url, `select count(*)::int as n from "${s}".inbox`))[0]!.n;
      return n;
    };
    for (let last = -1, now = await inboxes(), rounds = 0; now !== last; last = now, now = await inboxes()) {
      expect(++rounds, "the inboxes stop growing").toBeLessThan(60);
      await new Promise((r) => setTimeout(r, 1_000));
    }
    expect(await trialBalance(after)).toEqual(tb);
    expect(await balanceOf(q)).toBe(settled);
    expect((await txStatus(q, pendingId, "FAILED")).status).toBe("FAILED");
  }, 180_000);
});
