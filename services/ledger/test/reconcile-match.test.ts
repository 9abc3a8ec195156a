import { describe, expect, it } from "vitest";
import { reconcile, transactionIdOfEndToEnd, type Statement, type StatementEntry } from "../src/domain/reconciliation.js";

// The matching rules without a database (the PostgreSQL path: reconciliation.test.ts).

const entry = (e: Partial<StatementEntry> & Pick<StatementEntry, "bankEntryId" | "direction" | "amount">): StatementEntry => ({
  valueDate: "",
  bookingDate: "",
  endToEndId: "",
  reference: "",
  traceNumber: "",
  transactionId: "",
  description: "",
  ...e,
});
const statement = (entries: StatementEntry[], opening: bigint, closing: bigint): Statement => ({
  eventId: "Event:x",
  connector: "sepa",
  environment: "PRODUCTION",
  account: "DE89370400440532013000",
  statementId: "S1",
  statementDate: "2026-01-06",
  timeZone: "Europe/Berlin",
  currency: "EUR",
  openingBooked: opening,
  closingBooked: closing,
  entries,
  sourceFile: "f",
});
const none = { routed: [], settledThatDay: [], earlier: [] };

describe("reconcile(): balance conventions", () => {
  const entries = [entry({ bankEntryId: "a", direction: "CREDIT", amount: 100n, valueDate: "2026-01-06" }), entry({ bankEntryId: "b", direction: "CREDIT", amount: 40n, valueDate: "2026-01-07" })];
  const kinds = (closing: bigint) => reconcile(statement(entries, 1_000n, closing), none).breaks.map((b) => b.kind);

  it("accepts a closing balance that includes entries valued later (the Finnish sample) or leaves them out (PostFinance)", () => {
    expect(kinds(1_140n)).not.toContain("BALANCE_MISMATCH");
    expect(kinds(1_100n)).not.toContain("BALANCE_MISMATCH");
  });

  it("refuses any other closing balance", () => {
    expect(kinds(1_139n)).toContain("BALANCE_MISMATCH");
    expect(kinds(1_040n)).toContain("BALANCE_MISMATCH");
  });
});

describe("reconcile(): matching by end-to-end id", () => {
  it("reads a SEPA end-to-end id (the UUID without dashes) as the transaction it came from", () => {
    expect(transactionIdOfEndToEnd("019b8f2e7c1a7d3e8f00112233445566")).toBe("Transaction:019b8f2e-7c1a-7d3e-8f00-112233445566");
    expect(transactionIdOfEndToEnd("NOTPROVIDED")).toBeUndefined();
    expect(transactionIdOfEndToEnd("EndToEndIdSCT01")).toBeUndefined();
  });

  it("matches an entry by its end-to-end id and sees a payout booked as a credit as a DIRECTION_MISMATCH unless the payout FAILED (its return)", () => {
    const tx = { id: "Transaction:019b8f2e-7c1a-7d3e-8f00-112233445566", platformId: "Platform:p", type: "OUTGOING" as const, status: "COMPLETED", amount: 500n, currency: "EUR", reference: "TXN-AAAAAAAAAA", settledAt: new Date("2026-01-06T10:00:00Z") };
    const e = entry({ bankEntryId: "r", direction: "CREDIT", amount: 500n, endToEndId: "019b8f2e7c1a7d3e8f00112233445566" });
    expect(reconcile(statement([e], 0n, 500n), { routed: [tx], settledThatDay: [], earlier: [] }).breaks.map((b) => b.kind)).toEqual(["DIRECTION_MISMATCH"]);
    expect(reconcile(statement([e], 0n, 500n), { routed: [{ ...tx, status: "FAILED" }], settledThatDay: [], earlier: [] }).breaks).toEqual([]);
  });
});
