import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, requestHash } from "../src/index.js";

/** The recursive definition canonicalJson had before: hashes stored with it must stay valid. */
function recursiveCanonicalJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return Number.isFinite(value) ? JSON.stringify(value) : "null";
  if (typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : recursiveCanonicalJson(v))).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && typeof v !== "function")
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${recursiveCanonicalJson(v)}`).join(",")}}`;
  }
  return "null";
}

const values = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(null, undefined, true, false, Number.NaN, -0, Infinity),
    fc.double(),
    fc.bigInt(),
    fc.string({ unit: "binary" }),
    fc.date({ noInvalidDate: true }),
    fc.array(tie("value")),
    fc.dictionary(fc.string({ unit: "binary" }), tie("value")),
  ),
})).value;

describe("canonicalJson", () => {
  it("writes exactly what the recursive definition wrote, for any value", () => {
    fc.assert(
      fc.property(values, (v) => {
        expect(canonicalJson(v)).toBe(recursiveCanonicalJson(v));
      }),
      { seed: 14, numRuns: 500 },
    );
  });

  it("sorts keys and drops undefined members, at every depth", () => {
    expect(canonicalJson({ b: [1, undefined, { d: 1n, c: undefined }], a: "x" })).toBe('{"a":"x","b":[1,null,{"d":1}]}');
  });

  it("hashes a body nested 20,000 deep without overflowing the stack", () => {
    const deep = JSON.parse("[".repeat(20_000) + "]".repeat(20_000));
    expect(canonicalJson(deep)).toBe("[".repeat(20_000) + "]".repeat(20_000));
    expect(requestHash(deep)).toMatch(/^[0-9a-f]{64}$/);
    let obj: unknown = 1;
    for (let i = 0; i < 20_000; i++) obj = { a: obj };
    expect(() => requestHash(obj)).not.toThrow();
  });
});
