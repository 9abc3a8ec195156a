import { describe, expect, it } from "vitest";
import { immediateRailFailure } from "../src/domain/sandbox-admission.js";

const account = (accountNumber: string) => ({ account_info: { accountType: "USD_ACCOUNT", accountNumber, routingNumber: "021000021" } });

describe("immediate rail failures at transfer admission", () => {
  it("fails a sandbox transfer to or from an account ending 002 or 003 with the reason of its direction", () => {
    expect(immediateRailFailure("SANDBOX", "OUTGOING", account("123456789002"))).toEqual({ reason: "OFFRAMP_FAILED", detail: "INSUFFICIENT_FUNDS" });
    expect(immediateRailFailure("SANDBOX", "INCOMING", account("123456789003"))).toEqual({ reason: "COLLECTION_FAILED", detail: "ACCOUNT_CLOSED_OR_INVALID" });
  });

  it("leaves the delayed suffixes and every other account to the rail", () => {
    for (const n of ["123456789000", "123456789004", "123456789005"]) expect(immediateRailFailure("SANDBOX", "OUTGOING", account(n))).toBeUndefined();
  });

  it("never applies sandbox magic to a production platform (or one whose environment is unknown)", () => {
    expect(immediateRailFailure("PRODUCTION", "OUTGOING", account("123456789002"))).toBeUndefined();
    expect(immediateRailFailure(undefined, "INCOMING", account("123456789003"))).toBeUndefined();
  });
});
