import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { emptyToUndefined, isoFromTimestamp, numberFromInt64, optionalIso, timestampFromIso } from "../src/rest-json/time.js";

describe("JSON time and int64 helpers", () => {
  it("round-trips an ISO instant through a proto timestamp", () => {
    const iso = "2025-10-13T10:00:00.123Z";
    expect(isoFromTimestamp(timestampFromIso(iso))).toBe(iso);
    expect(optionalIso(timestampFromDate(new Date(iso)))).toBe(iso);
    expect(optionalIso(undefined)).toBeUndefined();
    expect(timestampFromIso(undefined)).toBeUndefined();
  });

  it("refuses a missing required timestamp (a service bug)", () => {
    expect(() => isoFromTimestamp(undefined)).toThrow(/without a required timestamp/);
  });

  it("turns int64 into a JSON number only when exact", () => {
    expect(numberFromInt64(9_007_199_254_740_991n)).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => numberFromInt64(9_007_199_254_740_993n)).toThrow(/does not fit/);
  });

  it("maps an empty proto string to an absent member", () => {
    expect(emptyToUndefined("")).toBeUndefined();
    expect(emptyToUndefined("x")).toBe("x");
  });
});
