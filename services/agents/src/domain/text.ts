import type { FieldError } from "@corridor/kit";

// A NUL cannot be stored in a Postgres text column and a lone surrogate is no character: both are
// the caller's mistake (400), never a failing statement (500).
const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A field error when `value` is not text of `min` to `max` characters; undefined when it is. */
export function textError(field: string, value: string, min: number, max: number): FieldError | undefined {
  if (NUL.test(value) || LONE_SURROGATE.test(value)) return { field, reason: "must be valid text without NUL characters" };
  const length = [...value].length;
  if (length < min || length > max) return { field, reason: min > 0 ? `must be ${min} to ${max} characters` : `must be at most ${max} characters` };
  return undefined;
}
