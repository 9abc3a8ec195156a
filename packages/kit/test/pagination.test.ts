import { describe, expect, it } from "vitest";
import { AppError, decodeCursor, decodeKeysetCursor, encodeCursor, toPage } from "../src/index.js";

const raw = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");

/** The public error a bad cursor must raise: 400 INVALID_INPUT naming `cursor`. */
function expectCursorError(run: () => unknown) {
  let caught: unknown;
  try {
    run();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(AppError);
  const e = caught as AppError;
  expect(e.outcome).toBe("INVALID");
  expect(e.code).toBe("INVALID_INPUT");
  expect(e.details).toMatchObject({ errors: [{ field: "cursor" }] });
}

describe("decodeKeysetCursor", () => {
  const at = new Date("2026-01-02T03:04:05.678Z");

  it("answers undefined for no cursor (the first page)", () => {
    expect(decodeKeysetCursor(undefined, "timestamp")).toBeUndefined();
    expect(decodeKeysetCursor("", "timestamp")).toBeUndefined();
  });

  it("round-trips a timestamp cursor the API issued, as a Date", () => {
    const pos = decodeKeysetCursor(encodeCursor({ k: at.toISOString(), id: "Transaction:1" }), "timestamp");
    expect(pos).toEqual({ k: at, id: "Transaction:1" });
    expect(pos!.k).toBeInstanceOf(Date);
  });

  it("answers the cursor a page built by toPage hands out", () => {
    const rows = [0, 1, 2].map((n) => ({ id: `Row:${n}`, createdAt: new Date(at.getTime() - n * 1000) }));
    const page = toPage(rows, 2, (r) => ({ k: r.createdAt.toISOString(), id: r.id }), 3);
    expect(decodeKeysetCursor(page.nextCursor, "timestamp")).toEqual({ k: rows[1]!.createdAt, id: "Row:1" });
  });

  it("keeps a string key as it is", () => {
    expect(decodeKeysetCursor(encodeCursor({ k: "x", id: "y" }), "string")).toEqual({ k: "x", id: "y" });
  });

  it.each([
    ["a key that is no date", { k: "x", id: "y" }],
    ["a date Date.parse accepts but the API never issues", { k: "2026", id: "y" }],
    ["a local-time date", { k: "1/2/2026", id: "y" }],
    ["an impossible date", { k: "2026-02-30T00:00:00.000Z", id: "y" }],
    ["a numeric key", { k: 1767322800000, id: "y" }],
    ["a numeric id", { k: "2026-01-02T03:04:05.678Z", id: 7 }],
    ["an empty id", { k: "2026-01-02T03:04:05.678Z", id: "" }],
    ["a missing id", { k: "2026-01-02T03:04:05.678Z" }],
    ["JSON that is no object", [1, 2]],
    ["null", null],
  ])("refuses %s with 400 INVALID_INPUT on cursor", (_name, value) => {
    expectCursorError(() => decodeKeysetCursor(raw(value), "timestamp"));
  });

  it("refuses text that is not base64url JSON", () => {
    expectCursorError(() => decodeKeysetCursor("not a cursor!", "timestamp"));
    expectCursorError(() => decodeKeysetCursor(raw("{not json"), "timestamp"));
  });

  it("refuses a string-key cursor without a string id", () => {
    expectCursorError(() => decodeKeysetCursor(raw({ k: "x", id: 1 }), "string"));
    expectCursorError(() => decodeKeysetCursor(raw({ k: "x", id: "" }), "string"));
  });

  it("drops fields a forged cursor adds", () => {
    expect(decodeCursor(raw({ k: "x", id: "y", extra: { deep: true } }))).toEqual({ k: "x", id: "y" });
  });
});

describe("cursors a client forged to break the query (issue 14, defect 1)", () => {
  it.each([
    ["year -271821 (the smallest JS date)", { k: new Date(-8.64e15).toISOString(), id: "y" }],
    ["year +275760 (the largest JS date)", { k: new Date(8.64e15).toISOString(), id: "y" }],
    ["year 0", { k: "0000-01-01T00:00:00.000Z", id: "y" }],
    ["a NUL in the id", { k: "2026-01-02T03:04:05.678Z", id: "Row:\u0000" }],
    ["a NUL in the key", { k: "\u0000", id: "y" }],
    ["an id too long to be ours", { k: "2026-01-02T03:04:05.678Z", id: "i".repeat(1000) }],
  ])("refuses %s as a 400 on cursor", (_name, pos) => {
    expectCursorError(() => decodeKeysetCursor(raw(pos), "timestamp"));
  });

  it("refuses a lone surrogate in a string-keyed cursor", () => {
    expectCursorError(() => decodeKeysetCursor(raw('{"k":"\\ud800","id":"y"}'), "string"));
    expectCursorError(() => decodeKeysetCursor(raw('{"k":"a","id":"\\udc00"}'), "string"));
  });

  it("still accepts the first and last instants of years 0001 and 9999", () => {
    for (const k of ["0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"]) expect(decodeKeysetCursor(raw({ k, id: "y" }), "timestamp")?.k.toISOString()).toBe(k);
  });
});
