/**
 * What text and times the system can store. Postgres `text` and `jsonb` refuse NUL (U+0000), and a
 * lone UTF-16 surrogate has no UTF-8 form (drivers silently write U+FFFD instead); `timestamptz`
 * and the protobuf Timestamp hold far less than a JS Date. Inputs are checked against these at the
 * edge (gateway) and where a service decodes something a client sent (cursors), so a client's value
 * is a 400 naming it, never a failing query.
 */

// A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `s` cannot be stored as text, or undefined when it can. */
export function textProblem(s: string): string | undefined {
  const m = UNSTORABLE.exec(s);
  if (!m) return undefined;
  return m[0] === "\u0000" ? "must not contain the NUL character (U+0000)" : "must be valid Unicode (it contains a lone surrogate)";
}

/** The earliest instant the API stores: 0001-01-01T00:00:00Z (ISO 8601 years 0001–9999, like RFC 3339). */
export const MIN_STORABLE_TIME_MS = Date.parse("0001-01-01T00:00:00.000Z");
/** The latest instant the API stores: 9999-12-31T23:59:59.999Z. */
export const MAX_STORABLE_TIME_MS = Date.parse("9999-12-31T23:59:59.999Z");

/** Whether `at` is a real instant within what Postgres, protobuf Timestamps and RFC 3339 all hold. */
export function isStorableTime(at: Date | number): boolean {
  const ms = typeof at === "number" ? at : at.getTime();
  return Number.isFinite(ms) && ms >= MIN_STORABLE_TIME_MS && ms <= MAX_STORABLE_TIME_MS;
}
