import { createNoticePublisher, createStatementPublisher, createOutcomePublisher } from "@corridor/connector";
import { ManualClock, createLogger, type DatabaseHandle } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { publishedNotices } from "@corridor/connector/testing";
import { readFileSync } from "node:fs";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { achConfigSchema } from "../src/config.js";
import { MIGRATIONS_DIR, SCHEMA } from "../src/connector.js";
import { readBankFiles, type EngineDeps } from "../src/engine.js";
import { achFixture } from "./fixtures.js";

// Rail contract 1.2 (docs/connectors.md "Notices"): the bank's real files (../shared/fixtures/ach)
// read by the connector become INCOMING_CREDIT notices (live credits received as RDFI) and
// ACCOUNT_CORRECTION notices (NOCs of our entries), each once per bank entry, through the outbox.
describe("ACH connector: rail notices from the bank's files", () => {
  let handle: DatabaseHandle;
  let db: Kysely<any>;
  let drop: () => Promise<void>;
  const clock = new ManualClock("2026-01-05T14:00:00.000Z");
  /** The bank's outbox as the engine sees it: files the test puts there (by name), read from the fixtures. */
  const outbox = new Map<string, string>();
  const archived: string[] = [];
  let deps: EngineDeps;

  beforeAll(async () => {
    ({ db: handle, drop } = await openServiceTestDatabase({ schema: SCHEMA, migrationsDir: MIGRATIONS_DIR }));
    db = handle.forSchema<any>(SCHEMA);
    const config = achConfigSchema.parse({
      ACH_ODFI_ROUTING: "121042882", ACH_IMMEDIATE_ORIGIN: "1234567890", ACH_IMMEDIATE_ORIGIN_NAME: "Corridor Test", ACH_COMPANY_NAME: "Corridor", ACH_COMPANY_ID: "1234567890",
      ACH_SFTP_HOST: "127.0.0.1", ACH_SFTP_USERNAME: "corridor", ACH_SFTP_HOST_KEY: "SHA256:AAAA", ACH_SFTP_PASSWORD: "x",
    });
    deps = {
      db, clock, config, log: createLogger("ach-notices-test", "silent"),
      outcomes: createOutcomePublisher({ connector: "ach-nacha", clock }),
      notices: createNoticePublisher({ connector: "ach-nacha", clock }),
      statements: createStatementPublisher({ connector: "ach-nacha", clock }),
      transport: {
        upload: async () => { throw new Error("nothing is uploaded here"); },
        listInbox: async () => [],
        listOutbox: async () => [...outbox.keys()].map((name) => ({ name, size: 0, modifiedAt: new Date(0) })) as never,
        download: async (name: string) => readFileSync(outbox.get(name)!),
        archive: async (name: string) => { outbox.delete(name); archived.push(name); },
      },
    };
  });
  afterAll(async () => drop?.());

  const notices = () => publishedNotices(db);

  it("20110805A.ach: its 20 live credits (two batches repeat trace numbers) are 20 INCOMING_CREDIT notices; its debits none", async () => {
    outbox.set("in-1.ach", achFixture("valid", "20110805A.ach"));
    await readBankFiles(deps);
    const credits = (await notices()).filter((n) => n.notice.case === "incomingCredit");
    expect(credits).toHaveLength(20);
    expect(new Set(credits.map((n) => n.bankEntryId)).size).toBe(20);
    const first = credits[0]!;
    expect(first).toMatchObject({ connector: "ach-nacha", environment: "PRODUCTION", bankEntryId: expect.stringMatching(/^110808-.+-042000010000001$/) });
    expect(first.notice.value).toMatchObject({ amount: 8n, currency: "USD", paymentRail: "ACH", creditedAccount: "998412345", reference: "A251", senderName: "EXAMPLE COMPANY", valueDate: "2011-08-08" });
    expect(first.key).toBe(`ach-nacha:${first.bankEntryId}`);
    expect(credits.reduce((a, n) => a + (n.notice.value as { amount: bigint }).amount, 0n)).toBe(8n + 10n + 2n + 12n + 2n + 11n + 13n + 4n + 9n + 5n + 19n + 15n + 6n + 15n + 14n + 9n + 13n + 9n + 18n + 6n);
  });

  it("the same file again, under another name, reports nothing new", async () => {
    const before = (await notices()).length;
    outbox.set("in-1-again.ach", achFixture("valid", "20110805A.ach"));
    await readBankFiles(deps);
    expect(await notices()).toHaveLength(before);
    expect(archived).toContain("in-1-again.ach");
  });

  it("ppd-mixedDebitCredit and two-micro-deposits: credits only (savings credits too), with the sender's company and the addenda", async () => {
    const before = (await notices()).length;
    outbox.set("in-2.ach", achFixture("valid", "ppd-mixedDebitCredit.ach"));
    outbox.set("in-3.ach", achFixture("valid", "two-micro-deposits.ach"));
    await readBankFiles(deps);
    const fresh = (await notices()).slice(before).map((n) => n.notice.value as { amount: bigint; creditedAccount: string; reference: string; senderName: string });
    expect(fresh.map((n) => n.amount)).toEqual([100_000_000n, 100_000_000n, 44n, 32n, 2n, 42n]);
    expect(fresh[2]).toMatchObject({ creditedAccount: "322580734", senderName: "Moov - paygate m", reference: expect.stringContaining("paygate transaction") });
  });

  it("cor-example.ach: a C01 NOC of our entry is an ACCOUNT_CORRECTION with the corrected account number; the same NOC in cor-read.ach is not reported again", async () => {
    const now = clock.now();
    await db.insertInto("ach_entries").values({
      transaction_id: "Transaction:019a0000-0000-7000-8000-000000000001", platform_id: "Platform:p1", direction: "PAYOUT", amount: 100n, reference: "TXN-1", sec_code: "PPD",
      // The entry the NOC is about: its addenda names the RDFI 12104288, its entry the account 744-5678-99.
      routing_number: "121042882", account_number: "744-5678-99", account_type: "CHECKING", receiver_name: "Jane", window_key: "w", cutoff_at: now, effective_date: "2019-06-25",
      status: "COMPLETED", trace_number: "121042880000001", created_at: now,
    }).execute();
    const before = (await notices()).length;
    outbox.set("cor-1.ach", achFixture("returns", "cor-example.ach"));
    await readBankFiles(deps);
    const fresh = (await notices()).slice(before);
    expect(fresh).toHaveLength(1);
    expect(fresh[0]!.notice.case).toBe("accountCorrection");
    expect(fresh[0]!.notice.value).toMatchObject({ transactionId: "Transaction:019a0000-0000-7000-8000-000000000001", platformId: "Platform:p1", code: "C01", corrected: { accountNumber: "1918171614" } });
    outbox.set("cor-2.ach", achFixture("returns", "cor-read.ach"));
    await readBankFiles(deps);
    expect(await notices()).toHaveLength(before + 1);
    const kept = await db.selectFrom("connector_notices").select(["kind"]).execute();
    expect(kept.filter((k: { kind: string }) => k.kind === "ACCOUNT_CORRECTION")).toHaveLength(1);
  });
});
