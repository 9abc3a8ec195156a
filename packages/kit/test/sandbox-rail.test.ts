import { describe, expect, it } from "vitest";
import { sandboxIdentifierOf, sandboxSuffixOf, sandboxTransferOutcome } from "../src/sandbox-rail.js";

describe("sandbox transfer table (spec 'Transfer in (and transfer out, same patterns)')", () => {
  it("fails 002 (insufficient funds) and 003 (account closed or invalid) immediately", () => {
    expect(sandboxTransferOutcome("123456789002")).toEqual({ kind: "FAILS_IMMEDIATELY", cause: "INSUFFICIENT_FUNDS" });
    expect(sandboxTransferOutcome("123456789003")).toEqual({ kind: "FAILS_IMMEDIATELY", cause: "ACCOUNT_CLOSED_OR_INVALID" });
  });

  it("has the bank reject 004, keeps 005 pending 30 s then fails it, completes then returns 006, and succeeds otherwise", () => {
    expect(sandboxTransferOutcome("123456789004")).toEqual({ kind: "BANK_REJECTS", cause: "BANK_REJECTED" });
    expect(sandboxTransferOutcome("123456789005")).toEqual({ kind: "PENDING_THEN_FAILS", afterSeconds: 30, cause: "TIMED_OUT" });
    expect(sandboxTransferOutcome("123456789006")).toEqual({ kind: "COMPLETES_THEN_RETURNED", afterSeconds: 60, cause: "RETURNED_BY_RECEIVING_BANK" });
    for (const id of ["123456789000", "123456789001", "123456789007", ""]) expect(sandboxTransferOutcome(id)).toEqual({ kind: "SUCCEEDS" });
  });

  it("reads the suffix before a domain part and the identifier field of each account type", () => {
    expect(sandboxSuffixOf("ana002@example.com")).toBe("002");
    expect(sandboxTransferOutcome("ana003@example.com").kind).toBe("FAILS_IMMEDIATELY");
    expect(sandboxIdentifierOf({ accountType: "USD_ACCOUNT", accountNumber: "881234500002", routingNumber: "021000021" })).toBe("881234500002");
    expect(sandboxIdentifierOf({ accountType: "EUR_ACCOUNT", iban: "DE89370400440532013000" })).toBe("DE89370400440532013000");
    expect(sandboxIdentifierOf({ accountType: "BRL_ACCOUNT", pixKey: "ana002@example.com", taxId: "52998224725" })).toBe("ana002@example.com");
    expect(sandboxIdentifierOf(undefined)).toBe("");
  });
});
