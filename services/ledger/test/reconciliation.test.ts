import { create, fromBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId, topics } from "@corridor/kit";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { RailStatementSchema, ReconciliationReportedSchema } from "@corridor/proto/corridor/ledger/v1/rail_statements_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

// Issue 24 item 5 (docs/connectors.md, "Statements and reconciliation"): a connector's end-of-day
// bank statement reconciled against the transactions the ledger routed to it, on PostgreSQL.
describe("ledger: reconciliation of bank statements", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  let n = 0;
  /** A connector of its own per test: reconciliation looks at every transaction routed to a connector. */
  const newConnector = () => `ach-recon-${++n}`;

  async function productionPlatform(connector: string) {
    const platformId = await h.newPlatform({ environment: Environment.PRODUCTION });
    const { accounts } = await h.ledger.listInternalAccounts({ platformId, owner: "PLATFORM", currency: "USD" });
    const ext = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo() })).account!;
    await h.admin.bindPlatformRail({ platformId, currency: "USD", paymentRail: "ACH", connector });
    return { platformId, account: accounts[0]!, ext, connector };
  }
  /** A platform funded by a completed pull of 10,000 (which the day's statement must carry: `fundingEntry`). */
  async function fundedPlatform(connector: string) {
    const p = await productionPlatform(connector);
    const funding = await pull(p, 10_000n);
    return { ...p, fundingEntry: { bankEntryId: "F", direction: "CREDIT" as const, amount: 10_000n, transactionId: funding.id } };
  }
  type P = Awaited<ReturnType<typeof productionPlatform>>;
  const from = (p: P) => ({ connector: p.connector, environment: "PRODUCTION" });

  async function pull(p: P, amount: bigint, complete = true) {
    const tx = (await h.ledger.transferIn({ transfer: { platformId: p.platformId, sourceAccountId: p.ext.id, destinationAccountId: p.account.id, amount } })).result!.transaction!;
    if (complete) await h.outcome(p.platformId, tx.id, "COMPLETED", "", undefined, from(p));
    return tx;
  }
  async function payout(p: P, amount: bigint, complete = true) {
    const tx = (await h.ledger.transferOut({ transfer: { platformId: p.platformId, sourceAccountId: p.account.id, destinationAccountId: p.ext.id, amount } })).result!.transaction!;
    if (complete) await h.outcome(p.platformId, tx.id, "COMPLETED", "", undefined, from(p));
    return tx;
  }

  interface Entry {
    bankEntryId: string;
    direction: "CREDIT" | "DEBIT";
    amount: bigint;
    reference?: string;
    transactionId?: string;
    endToEndId?: string;
    traceNumber?: string;
  }
  const statement = (connector: string, o: { id?: string; date?: string; opening?: bigint; closing?: bigint; entries: Entry[]; environment?: string; eventId?: string }) => {
    const net = o.entries.reduce((s, e) => s + (e.direction === "CREDIT" ? e.amount : -e.amount), 0n);
    const opening = o.opening ?? 1_000_000n;
    const day = o.date ?? h.clock.now().toISOString().slice(0, 10);
    return create(RailStatementSchema, {
      eventId: o.eventId ?? newId("Event"),
      occurredAt: timestampFromDate(h.clock.now()),
      connector,
      environment: o.environment ?? "PRODUCTION",
      account: "123456789",
      statementId: o.id ?? `STMT-${connector}-${day}`,
      statementDate: day,
      timeZone: "UTC",
      currency: "USD",
      openingBooked: opening,
      closingBooked: o.closing ?? opening + net,
      sourceFile: "test.bai",
      entries: o.entries.map((e) => ({ status: "BOOK", ...e })),
    });
  };
  const deliver = (s: ReturnType<typeof statement>) => h.deliver("rail-statements", s);
  const reports = async (connector: string) => (await h.admin.listReconciliationReports({ connector })).reports;
  const operatorEvents = async (connector: string) => {
    const rows = (await h.db.forSchema<any>("ledger").selectFrom("outbox").select(["payload", "headers"]).where("topic", "=", topics.reconciliations).orderBy("id").execute()) as { payload: Uint8Array; headers: Record<string, string> }[];
    return rows.map((r) => ({ type: r.headers["event-type"], ...fromBinary(ReconciliationReportedSchema, r.payload) })).filter((e) => e.connector === connector);
  };

  it("a clean day: every entry matches a transaction of the connector and the balances move by the entries (CLEAN, announced)", async () => {
    const p = await productionPlatform(newConnector());
    const deposit = await pull(p, 10_000n);
    const out = await payout(p, 4_000n);
    await deliver(
      statement(p.connector, {
        entries: [
          { bankEntryId: "E1", direction: "CREDIT", amount: 10_000n, reference: deposit.reference!, traceNumber: "021000020000001" },
          { bankEntryId: "E2", direction: "DEBIT", amount: 4_000n, transactionId: out.id },
        ],
      }),
    );
    const [r] = await reports(p.connector);
    expect(r).toMatchObject({ status: "CLEAN", entryCount: 2, matchedCount: 2, breakCount: 0, openBreakCount: 0, statementDate: h.clock.now().toISOString().slice(0, 10), entriesNet: 6_000n });
    expect((await h.admin.getReconciliationReport({ reportId: r!.reportId })).breaks).toEqual([]);
    expect(await operatorEvents(p.connector)).toEqual([expect.objectContaining({ type: "RAIL_RECONCILIATION_CLEAN", status: "CLEAN", reportId: r!.reportId, matchedCount: 2 })]);
  });

  it("lists each kind of break: missing in the ledger, missing on the statement, amount, direction, duplicate and balance", async () => {
    const p = await fundedPlatform(newConnector());
    const d = await pull(p, 5_000n);
    const a = await payout(p, 300n);
    const b = await payout(p, 200n);
    const c = await payout(p, 100n);
    await payout(p, 50n, false); // still PENDING: not expected on the statement
    await deliver(
      statement(p.connector, {
        opening: 0n,
        closing: 999n, // not what the entries add up to
        entries: [
          p.fundingEntry,
          { bankEntryId: "A", direction: "DEBIT", amount: 310n, reference: a.reference! },
          { bankEntryId: "C1", direction: "DEBIT", amount: 100n, transactionId: c.id },
          { bankEntryId: "C2", direction: "DEBIT", amount: 100n, reference: c.reference! },
          { bankEntryId: "D", direction: "DEBIT", amount: 5_000n, reference: d.reference! },
          { bankEntryId: "X", direction: "CREDIT", amount: 77n, reference: "TXN-NOTOURS000", traceNumber: "091000010000009" },
        ],
      }),
    );
    const [r] = await reports(p.connector);
    expect(r).toMatchObject({ status: "BREAKS", entryCount: 6, matchedCount: 2, breakCount: 6, openBreakCount: 6 });
    const { breaks } = await h.admin.getReconciliationReport({ reportId: r!.reportId });
    const byKind = Object.fromEntries(breaks.map((x) => [x.kind, x]));
    expect(breaks.map((x) => x.kind).sort()).toEqual(["AMOUNT_MISMATCH", "BALANCE_MISMATCH", "DIRECTION_MISMATCH", "DUPLICATE", "MISSING_IN_LEDGER", "MISSING_ON_STATEMENT"]);
    expect(byKind.AMOUNT_MISMATCH).toMatchObject({ transactionId: a.id, bankEntryId: "A", ledgerAmount: 300n, statementAmount: 310n });
    expect(byKind.MISSING_ON_STATEMENT).toMatchObject({ transactionId: b.id, bankEntryId: "", ledgerAmount: 200n, ledgerDirection: "DEBIT" });
    expect(byKind.DUPLICATE).toMatchObject({ transactionId: c.id, bankEntryId: "C2" });
    expect(byKind.DIRECTION_MISMATCH).toMatchObject({ transactionId: d.id, ledgerDirection: "CREDIT", statementDirection: "DEBIT" });
    expect(byKind.MISSING_IN_LEDGER).toMatchObject({ transactionId: "", bankEntryId: "X", reference: "TXN-NOTOURS000", statementAmount: 77n });
    expect(byKind.BALANCE_MISMATCH).toMatchObject({ ledgerAmount: 10_000n - 310n - 100n - 100n - 5_000n + 77n, statementAmount: 999n });
    const [event] = await operatorEvents(p.connector);
    expect(event).toMatchObject({ type: "RAIL_RECONCILIATION_BREAKS", status: "BREAKS" });
    expect(event!.breaks).toEqual({ AMOUNT_MISMATCH: 1, BALANCE_MISMATCH: 1, DIRECTION_MISMATCH: 1, DUPLICATE: 1, MISSING_IN_LEDGER: 1, MISSING_ON_STATEMENT: 1 });
  });

  it("a statement delivered twice (the same event, or a new event of the same statement) changes nothing", async () => {
    const p = await fundedPlatform(newConnector());
    const out = await payout(p, 700n);
    const first = statement(p.connector, { entries: [p.fundingEntry, { bankEntryId: "E1", direction: "DEBIT", amount: 700n, reference: out.reference! }] });
    await deliver(first);
    const before = await h.admin.getReconciliationReport({ reportId: (await reports(p.connector))[0]!.reportId });
    await deliver(first);
    await deliver(create(RailStatementSchema, { ...first, eventId: newId("Event"), entries: [] })); // another report of the same statement id
    expect(await reports(p.connector)).toHaveLength(1);
    expect(await h.admin.getReconciliationReport({ reportId: before.report!.reportId })).toEqual(before);
    expect(await operatorEvents(p.connector)).toHaveLength(1);
  });

  it("across days: a payment booked on an earlier statement is neither missing nor matched again; booked twice is a DUPLICATE; a payout and its return match", async () => {
    const p = await fundedPlatform(newConnector());
    const day1 = h.clock.now().toISOString().slice(0, 10);
    const early = await payout(p, 100n); // completes on day 1
    const returned = await payout(p, 250n);
    await h.outcome(p.platformId, returned.id, "RETURNED", "R01", undefined, from(p)); // FAILED, money back
    await deliver(
      statement(p.connector, {
        date: day1,
        entries: [
          p.fundingEntry,
          { bankEntryId: "D1-1", direction: "DEBIT", amount: 100n, transactionId: early.id },
          { bankEntryId: "D1-2", direction: "DEBIT", amount: 250n, transactionId: returned.id },
          { bankEntryId: "D1-3", direction: "CREDIT", amount: 250n, transactionId: returned.id },
        ],
      }),
    );
    expect((await reports(p.connector))[0]).toMatchObject({ status: "CLEAN", matchedCount: 4 });

    h.clock.advance(24 * 3600_000); // day 2
    const day2Date = h.clock.now().toISOString().slice(0, 10);
    const late = await payout(p, 80n);
    await deliver(
      statement(p.connector, {
        date: day2Date,
        entries: [
          { bankEntryId: "D2-1", direction: "DEBIT", amount: 80n, reference: late.reference! },
          { bankEntryId: "D2-2", direction: "DEBIT", amount: 100n, transactionId: early.id },
        ],
      }),
    );
    const [day2] = await reports(p.connector);
    expect(day2).toMatchObject({ statementDate: day2Date, status: "BREAKS", matchedCount: 1, breakCount: 1 });
    const { breaks } = await h.admin.getReconciliationReport({ reportId: day2!.reportId });
    expect(breaks).toEqual([expect.objectContaining({ kind: "DUPLICATE", transactionId: early.id, bankEntryId: "D2-2" })]);
    expect(breaks[0]!.detail).toContain(`STMT-${p.connector}-${day1}`);
  });

  it("the operator resolves breaks with a note; the report is RESOLVED once none is open; bad input changes nothing", async () => {
    const p = await fundedPlatform(newConnector());
    const a = await payout(p, 300n);
    await payout(p, 200n); // missing on the statement
    await deliver(statement(p.connector, { entries: [p.fundingEntry, { bankEntryId: "A", direction: "DEBIT", amount: 301n, transactionId: a.id }] }));
    const [r] = await reports(p.connector);
    const { breaks } = await h.admin.getReconciliationReport({ reportId: r!.reportId });
    expect(breaks.map((b) => b.kind).sort()).toEqual(["AMOUNT_MISMATCH", "MISSING_ON_STATEMENT"]);

    expect(await publicError(h.admin.resolveReconciliationBreak({ breakId: breaks[0]!.breakId, note: "  " }))).toMatchObject({ code: "INVALID_INPUT" });
    expect(await publicError(h.admin.resolveReconciliationBreak({ breakId: "ReconciliationBreak:nope", note: "x" }))).toMatchObject({ code: "RECONCILIATION_BREAK_NOT_FOUND" });
    expect(await publicError(h.admin.getReconciliationReport({ reportId: "Reconciliation:nope" }))).toMatchObject({ code: "RECONCILIATION_NOT_FOUND" });
    expect(await publicError(h.admin.listReconciliationReports({ status: "OPEN" }))).toMatchObject({ code: "INVALID_INPUT" });
    expect((await h.admin.getReconciliationReport({ reportId: r!.reportId })).report).toMatchObject({ status: "BREAKS", openBreakCount: 2 });

    const first = await h.admin.resolveReconciliationBreak({ breakId: breaks[0]!.breakId, note: "bank fee of 1 cent; booked by hand" });
    expect(first.break).toMatchObject({ resolutionNote: "bank fee of 1 cent; booked by hand" });
    expect(first.break!.resolvedAt).toBeDefined();
    expect(first.report).toMatchObject({ status: "BREAKS", openBreakCount: 1 });
    const again = await h.admin.resolveReconciliationBreak({ breakId: breaks[0]!.breakId, note: "another note" });
    expect(again.break).toMatchObject({ resolutionNote: "bank fee of 1 cent; booked by hand" });
    const last = await h.admin.resolveReconciliationBreak({ breakId: breaks[1]!.breakId, note: "on the next day's statement" });
    expect(last.report).toMatchObject({ status: "RESOLVED", openBreakCount: 0, breakCount: 2 });
    expect((await h.admin.listReconciliationReports({ connector: p.connector, status: "RESOLVED" })).reports.map((x) => x.reportId)).toEqual([r!.reportId]);
    expect((await h.admin.listReconciliationReports({ connector: p.connector, status: "BREAKS" })).reports).toEqual([]);
  });

  it("micro-deposits (ownership verification) are matched like payouts: booked, returned, or missing on the statement, never MISSING_IN_LEDGER", async () => {
    const p = await productionPlatform(newConnector());
    const credits = async () => (await h.railInstructions()).filter((i) => i.externalAccountId === p.ext.id);
    await h.ledger.startOwnershipChallenge({ platformId: p.platformId, owner: "PLATFORM", accountId: p.ext.id, method: "" });
    const [a, b] = await credits();
    expect([a!.connector, b!.connector]).toEqual([p.connector, p.connector]);
    await h.outcome(p.platformId, a!.transactionId, "COMPLETED", "", undefined, from(p));
    await h.outcome(p.platformId, b!.transactionId, "COMPLETED", "", undefined, from(p));
    await h.outcome(p.platformId, b!.transactionId, "RETURNED", "R03", undefined, from(p)); // the money came back
    await deliver(
      statement(p.connector, {
        entries: [
          { bankEntryId: "MD-A", direction: "DEBIT", amount: a!.amount, transactionId: a!.transactionId, traceNumber: "121042880000001" },
          { bankEntryId: "MD-B", direction: "DEBIT", amount: b!.amount, reference: b!.reference },
          { bankEntryId: "MD-B-R03", direction: "CREDIT", amount: b!.amount, reference: b!.reference },
        ],
      }),
    );
    const [day1] = await reports(p.connector);
    expect(day1).toMatchObject({ status: "CLEAN", entryCount: 3, matchedCount: 3, breakCount: 0 });

    // The next day: a new challenge's two credits complete; the bank books one of them and one of
    // another amount. The other is missing on the statement (named a micro-deposit), nothing is
    // missing in the ledger.
    h.clock.advance(24 * 3600_000);
    await h.ledger.startOwnershipChallenge({ platformId: p.platformId, owner: "PLATFORM", accountId: p.ext.id, method: "" });
    const [, , c, d] = await credits();
    await h.outcome(p.platformId, c!.transactionId, "COMPLETED", "", undefined, from(p));
    await h.outcome(p.platformId, d!.transactionId, "COMPLETED", "", undefined, from(p));
    await deliver(statement(p.connector, { entries: [{ bankEntryId: "MD-C", direction: "DEBIT", amount: c!.amount + 1n, transactionId: c!.transactionId }] }));
    const [day2] = await reports(p.connector);
    expect(day2).toMatchObject({ status: "BREAKS", entryCount: 1, matchedCount: 0, breakCount: 2 });
    const { breaks } = await h.admin.getReconciliationReport({ reportId: day2!.reportId });
    const byKind = Object.fromEntries(breaks.map((x) => [x.kind, x]));
    expect(breaks.map((x) => x.kind).sort()).toEqual(["AMOUNT_MISMATCH", "MISSING_ON_STATEMENT"]);
    expect(byKind.AMOUNT_MISMATCH).toMatchObject({ transactionId: c!.transactionId, ledgerAmount: c!.amount, statementAmount: c!.amount + 1n });
    expect(byKind.MISSING_ON_STATEMENT).toMatchObject({ transactionId: d!.transactionId, ledgerAmount: d!.amount, ledgerDirection: "DEBIT" });
    expect(byKind.MISSING_ON_STATEMENT!.detail).toContain("micro-deposit");
  });

  it("refuses statements of the simulator or of another environment, and one with a bad day or zone (nothing stored)", async () => {
    const p = await productionPlatform(newConnector());
    await deliver(statement("sandbox", { entries: [] }));
    await deliver(statement(p.connector, { entries: [], environment: "SANDBOX" }));
    await deliver(statement(p.connector, { entries: [], date: "2026-13-01x" }));
    await deliver(create(RailStatementSchema, { ...statement(p.connector, { entries: [] }), timeZone: "Mars/Olympus" }));
    expect(await reports(p.connector)).toEqual([]);
    expect(await reports("sandbox")).toEqual([]);
  });
});
