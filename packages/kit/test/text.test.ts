import { describe, expect, it } from "vitest";
import { isStorableTime, textProblem } from "../src/index.js";

describe("textProblem", () => {
  it("accepts any well-formed text, astral characters and controls other than NUL included", () => {
    for (const s of ["", "plain", "é漢字", "\u{1F600}", "tab\tnew\nline\u0001", "\uFFFD"]) expect(textProblem(s)).toBeUndefined();
  });
  it("names a NUL", () => {
    expect(textProblem("a\u0000b")).toContain("NUL");
  });
  it("names lone surrogates, high or low, anywhere", () => {
    for (const s of ["\uD800", "x\uD800y", "\uDC00", "a\uDC00\uD800", "\uD83D"]) expect(textProblem(s)).toContain("lone surrogate");
  });
});

describe("isStorableTime", () => {
  it("holds for years 0001 to 9999 only", () => {
    expect(isStorableTime(new Date("0001-01-01T00:00:00.000Z"))).toBe(true);
    expect(isStorableTime(new Date("9999-12-31T23:59:59.999Z"))).toBe(true);
    expect(isStorableTime(new Date("0000-12-31T23:59:59.999Z"))).toBe(false);
    expect(isStorableTime(new Date(8.64e15))).toBe(false);
    expect(isStorableTime(new Date(Number.NaN))).toBe(false);
  });
});
