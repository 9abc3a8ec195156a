import canonicalize from "canonicalize";

/**
 * Canonical JSON (RFC 8785, JCS): the one entry point for request hashes (idempotency keys, the
 * gateway's fingerprints) and for payloads a wallet signs. The canonical form itself — keys sorted
 * by UTF-16 code units at every depth, no whitespace, ECMAScript number and string forms — is
 * written by the `canonicalize` library. This module only maps the values Corridor passes in onto
 * JSON values first, without recursion (a body nested 20,000 deep must not overflow the stack):
 *
 *   - undefined object members and function members are dropped (as JSON.stringify does);
 *   - Dates become their ISO string;
 *   - bigints (protobuf int64 fields) become JSON numbers when the number's RFC 8785 form is their
 *     plain digits (every integer up to 2^53, so every amount: amounts are at most 9e15);
 *   - other objects (class instances, typed arrays) are read through their own enumerable members.
 *
 * Two modes for values JSON has no form for (undefined where it cannot be dropped, NaN, ±Infinity):
 *
 *   - `"null"` (default, request hashes): they are written as `null`, as JSON.stringify does in an
 *     array. The output is byte-identical to the hand-written function the hashes stored before
 *     were made with, for every value whose strings are well-formed UTF-16 and whose bigints are
 *     written in their plain digits as numbers (all up to 2^53; test/canonical-json.test.ts compares
 *     the two). Outside that, RFC 8785 (I-JSON) has no form: a lone surrogate is written as U+FFFD
 *     (what Postgres and any UTF-8 encoder store in its place) and a larger bigint as a string of its
 *     digits.
 *     No stored hash is made from such a value: the gateway refuses a body with a lone surrogate
 *     (400, checkRequestText) before it claims a key, protobuf decodes every string as UTF-8
 *     (well-formed), and an amount beyond 9e15 is refused before its idempotency key completes.
 *   - `"throw"` (signed payloads: the bytes a wallet client rebuilds and compares): only JSON
 *     values are accepted (null, booleans, finite numbers, well-formed strings, arrays, plain
 *     objects; undefined members are dropped); anything else throws.
 */
export interface CanonicalJsonOptions {
  /** What a value JSON has no form for becomes: `null` (default) or an error. */
  unrepresentable?: "null" | "throw";
}

export function canonicalJson(value: unknown, options: CanonicalJsonOptions = {}): string {
  const strict = options.unrepresentable === "throw";
  const out = canonicalize(toJsonValue(value, strict));
  // toJsonValue returns only JSON values, so the library always has a form for them.
  if (out === undefined) throw new Error("canonical JSON: no form for the value");
  return out;
}

// String.prototype.toWellFormed (ES2024, in Node 20) is not in the ES2023 lib the project compiles against.
const wellFormed = (s: string): string => (s as string & { toWellFormed(): string }).toWellFormed();

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

const refuse = (what: string) => new Error(`canonical JSON has no form for ${what}`);

/** `value` as JSON values only, built with an explicit stack. */
function toJsonValue(value: unknown, strict: boolean): JsonValue {
  const root: { v?: JsonValue } = {};
  // Each task converts `v` and stores the result with `put`.
  const stack: { v: unknown; put: (j: JsonValue) => void }[] = [{ v: value, put: (j) => (root.v = j) }];
  while (stack.length > 0) {
    const { v, put } = stack.pop()!;
    if (v === null) put(null);
    else if (typeof v === "string") put(strict ? v : wellFormed(v));
    else if (typeof v === "boolean") put(v);
    else if (typeof v === "number") {
      if (Number.isFinite(v)) put(v);
      else if (strict) throw refuse("a non-finite number");
      else put(null);
    } else if (typeof v === "bigint") {
      if (strict) throw refuse("a bigint");
      // RFC 8785 writes a number in its shortest round-trip form: the same text as the digits for
      // every integer up to 2^53, and for larger ones only when their digits happen to be that form.
      const n = Number(v);
      put(JSON.stringify(n) === v.toString() ? n : v.toString());
    } else if (Array.isArray(v)) {
      const arr: JsonValue[] = new Array(v.length);
      put(arr);
      for (let i = 0; i < v.length; i++) {
        const m: unknown = v[i];
        if (m === undefined || typeof m === "function" || typeof m === "symbol") {
          if (strict) throw refuse(`${typeof m} in an array`);
          arr[i] = null;
        } else stack.push({ v: m, put: (j) => (arr[i] = j) });
      }
    } else if (v instanceof Date) {
      if (strict) throw refuse("a Date");
      put(v.toISOString());
    } else if (typeof v === "object") {
      if (strict && Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) throw refuse("an object that is not plain");
      // A null prototype: a member named like an Object.prototype method stays a plain member.
      const obj: { [key: string]: JsonValue } = Object.create(null);
      put(obj);
      for (const [k, m] of Object.entries(v)) {
        if (m === undefined || typeof m === "function") continue;
        if (strict && typeof m === "symbol") throw refuse("a symbol");
        const key = strict ? k : wellFormed(k);
        if (typeof m === "symbol") obj[key] = null;
        else stack.push({ v: m, put: (j) => (obj[key] = j) });
      }
    } else {
      // undefined at the top, a symbol or a function outside an object.
      if (strict) throw refuse(typeof v);
      put(null);
    }
  }
  return root.v ?? null;
}
