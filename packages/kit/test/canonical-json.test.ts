import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, requestHash } from "../src/index.js";

/**
 * The hand-written function request hashes were made with before canonical JSON came from an RFC
 * 8785 library (recursive form of the same definition). Hashes stored with it must stay valid.
 */
function handWrittenCanonicalJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return Number.isFinite(value) ? JSON.stringify(value) : "null";
  if (typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : handWrittenCanonicalJson(v))).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && typeof v !== "function")
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${handWrittenCanonicalJson(v)}`).join(",")}}`;
  }
  return "null";
}

/** auth-sessions' own copy, which payloadToSign was written with (wallet clients compare its bytes). */
function handWrittenSignedJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new Error("canonical JSON has no form for a non-finite number");
    if (value === undefined) throw new Error("canonical JSON has no form for undefined");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(handWrittenSignedJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${handWrittenSignedJson(v)}`).join(",")}}`;
}

// Keys from the whole of Unicode, and UTF-16 strings that mix surrogate pairs with other units, so
// that sorting by code units (not code points) is exercised.
const text = fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: fc.constantFrom("a", "Z", "é", "\uffff", "😀", "\ud7ff", "\ue000") }));

/** Every value the hand-written function accepted, short of the two outside RFC 8785 (below). */
const values = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(null, undefined, true, false, Number.NaN, -0, Infinity, -Infinity, 2 ** 53, 1e21, 5e-324),
    fc.double(),
    // Every integer up to 2^53 (so every int64 amount), and larger ones whose digits are their number's form.
    fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }),
    fc.integer({ min: 0, max: 69 }).map((e) => 2n ** BigInt(e)).filter((b) => JSON.stringify(Number(b)) === b.toString()),
    fc.constantFrom(10n ** 20n, -(10n ** 18n)),
    text,
    fc.date({ noInvalidDate: true }),
    fc.array(tie("value")),
    fc.dictionary(text, tie("value")),
    fc.dictionary(text, tie("value")).map((d) => ({ ...d, f: () => 1, u: undefined })),
  ),
})).value;

/** What a wallet signs: JSON values (no undefined but as an object member). */
const jsonValues = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(null, true, false, -0, 2 ** 53, 1e21, 5e-324),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    text,
    fc.array(tie("value")),
    fc.dictionary(text, tie("value")),
    fc.dictionary(text, tie("value")).map((d) => ({ ...d, gone: undefined })),
  ),
})).value;

describe("canonicalJson (request hashes)", () => {
  it("writes exactly what the hand-written function wrote, for any value it accepted within RFC 8785", () => {
    fc.assert(
      fc.property(values, (v) => {
        expect(canonicalJson(v)).toBe(handWrittenCanonicalJson(v));
      }),
      { seed: 14, numRuns: 2000 },
    );
  });

  it("also for a body as JSON.parse gives it (what the gateway fingerprints)", () => {
    fc.assert(
      fc.property(fc.json(), (s) => {
        const body = JSON.parse(s) as unknown;
        expect(canonicalJson(body)).toBe(handWrittenCanonicalJson(body));
      }),
      { seed: 15, numRuns: 1000 },
    );
  });

  it("sorts keys and drops undefined members, at every depth", () => {
    expect(canonicalJson({ b: [1, undefined, { d: 1n, c: undefined }], a: "x" })).toBe('{"a":"x","b":[1,null,{"d":1}]}');
    // RFC 8785 §3.2.3: by UTF-16 code units, so U+1F600 (D83D DE00) sorts before U+FFFF.
    expect(canonicalJson({ "\uffff": 1, "😀": 2, a: 3 })).toBe('{"a":3,"😀":2,"\uffff":1}');
    expect(canonicalJson({ n: 1e21, m: 1e-7, z: -0 })).toBe('{"m":1e-7,"n":1e+21,"z":0}');
  });

  it("keeps a member named like an Object.prototype method, and ignores toJSON as JSON.parse gives it", () => {
    const body = JSON.parse('{"toJSON":"x","__proto__":{"a":1},"constructor":2}') as unknown;
    expect(canonicalJson(body)).toBe('{"__proto__":{"a":1},"constructor":2,"toJSON":"x"}');
  });

  it("gives values outside RFC 8785 a fixed form: a lone surrogate as U+FFFD, a bigint beyond double precision as its digits in a string", () => {
    expect(canonicalJson({ s: "a\ud800b" })).toBe('{"s":"a\ufffdb"}');
    expect(canonicalJson({ n: 2n ** 64n + 1n })).toBe('{"n":"18446744073709551617"}');
    expect(canonicalJson(2n ** 69n)).toBe('"590295810358705651712"');
    expect(canonicalJson(10n ** 20n)).toBe("100000000000000000000");
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

describe("canonicalJson (signed payloads, unrepresentable: throw)", () => {
  const signed = (v: unknown) => canonicalJson(v, { unrepresentable: "throw" });

  it("writes exactly what auth-sessions' hand-written function wrote, for any JSON value", () => {
    fc.assert(
      fc.property(jsonValues, (v) => {
        expect(signed(v)).toBe(handWrittenSignedJson(v));
      }),
      { seed: 16, numRuns: 2000 },
    );
  });

  it("throws where the hand-written function threw: non-finite numbers, undefined outside a member, bigints", () => {
    for (const v of [Number.NaN, Infinity, -Infinity, undefined, [1, undefined], { a: [Number.NaN] }, 1n]) {
      expect(() => handWrittenSignedJson(v)).toThrow();
      expect(() => signed(v)).toThrow();
    }
  });

  it("refuses a lone surrogate, which no client can sign the same way", () => {
    expect(() => signed({ s: "\udc00" })).toThrow();
  });
});
