import { createNoticePublisher, createOutcomePublisher } from "@corridor/connector";
import { publishedNotices } from "@corridor/connector/testing";
import { ManualClock, createLogger, type DatabaseHandle } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SEPA_MIGRATIONS_DIR, SEPA_SCHEMA, sepaConfigSchema, sepaWork, type BankFileDrop } from "../src/index.js";
import type { SepaTables } from "../src/runtime/tables.js";
import { FIXTURES } from "./fixtures.js";

// Rail contract 1.2 (docs/connectors.md "Notices"): booked credits of the bank's camt.054
// notifications and camt.053 statements (real files in ../shared/fixtures/iso20022/samples) become
// INCOMING_CREDIT notices, once per bank entry id whatever file reports them.
describe("SEPA connector: rail notices from the bank's camt files", () => {
  let handle: DatabaseHandle;
  let db: Kysely<SepaTables>;
  let drop: () => Promise<void>;
  const clock = new ManualClock("2026-01-05T08:00:00.000Z");
  const waiting: string[] = [];
  let work: ReturnType<typeof sepaWork>;

  beforeAll(async () => {
    ({ db: handle, drop } = await openServiceTestDatabase({ schema: SEPA_SCHEMA, migrationsDir: SEPA_MIGRATIONS_DIR }));
    db = handle.forSchema<SepaTables>(SEPA_SCHEMA);
    // The bank's outbox: fixture files the test puts there, read as they are.
    const fileDrop: BankFileDrop = {
      upload: async () => {
        throw new Error("nothing is uploaded here");
      },
      listInbox: async () => [],
      listOutbox: async () => waiting.map((name) => ({ name, size: 0, modifiedAt: new Date(0) })),
      download: async (name: string) => readFileSync(join(FIXTURES, "samples", name)),
      archive: async (name: string) => void waiting.splice(waiting.indexOf(name), 1),
    };
    const config = sepaConfigSchema.parse({ SEPA_DEBTOR_NAME: "Corridor", SEPA_DEBTOR_IBAN: "DE89370400440532013000", SEPA_FILE_DROP_DIR: "/nonexistent" });
    work = sepaWork({ db, clock, log: createLogger("sepa-notices-test", "silent"), config, drop: fileDrop, outcomes: createOutcomePublisher({ connector: "sepa", clock }), notices: createNoticePublisher({ connector: "sepa", clock }) });
  });
  afterAll(async () => drop?.());

  const notices = () => publishedNotices(db as Kysely<any>);
  const credits = async () => (await notices()).map((n) => ({ id: n.bankEntryId, ...(n.notice.value as { amount: bigint; currency: string; creditedAccount: string; reference: string; senderName: string; senderAccount: string; valueDate: string; paymentRail: string }) }));

  it("camt.054 credit notifications: each booked credit once, with its debtor and remittance; debit notifications none", async () => {
    waiting.push(
      "200519_camt054-ESR-ASR_P_CH2909000000250094239_1110092704_0_2019042500372179.xml",
      "200519_camt.054-Debit_P_CH2909000000250094239_1110092692_0_2019042401501580.xml",
    );
    await work.read();
    const got = await credits();
    expect(got).toHaveLength(5);
    expect(got[0]).toMatchObject({ id: "180315CH02ZX5RI3", amount: 25_000n, currency: "CHF", paymentRail: "SEPA", creditedAccount: "CH2909000000250094239", senderName: "Bernasconi Maria", valueDate: "2019-04-25" });
    expect(got[0]!.reference).toContain("EndToEndId-001-02-02");
    // Kept for the operator as before, too.
    expect((await db.selectFrom("sepa_received_credits").select("amount").execute()).length).toBeGreaterThanOrEqual(5);
  });

  it("the same notification sent twice (two files) reports its two credits once", async () => {
    const before = (await notices()).length;
    waiting.push(
      "200519_camt.054_P_CH2909000000250094239_1111091335_0_2020061900081727.xml",
      "200924_camt.054_P_CH2909000000250094239_1111091335_0_2020061900081727.xml",
    );
    await work.read();
    const fresh = (await credits()).slice(before);
    expect(fresh.map((c) => [c.id, c.amount])).toEqual([
      ["2000000000000000", 77_829n],
      ["3000000000000000", 91_393n],
    ]);
  });

  it("camt.053 statements: their booked credits; every bank entry id once over all the files read", async () => {
    const before = (await notices()).length;
    waiting.push("FI_camt_053_sample.xml.xml");
    await work.read();
    const fresh = (await credits()).slice(before);
    expect(fresh).toHaveLength(6);
    expect(fresh[0]).toMatchObject({ id: "091029ACCTSTMTARCH04", amount: 200_000n, currency: "EUR", creditedAccount: "FI7433010001222090", valueDate: "2009-10-29" });
    const all = await notices();
    expect(new Set(all.map((n) => n.bankEntryId)).size).toBe(all.length);
    expect(all.every((n) => n.connector === "sepa" && n.environment === "PRODUCTION" && n.key === `sepa:${n.bankEntryId}`)).toBe(true);
  });
});
