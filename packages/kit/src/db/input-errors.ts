import { errors, type AppError } from "../errors.js";

/**
 * SQLSTATEs Postgres answers for a value it cannot take, which only a client's input can produce
 * once the services check what they build themselves: a NUL or untranslatable character in text or
 * jsonb (22021, 22P05), a date or time out of range or malformed (22008, 22009, 22007), a value too big
 * for an index row (54000). The gateway refuses these at the edge; this is the defence in depth
 * for whatever slips past it (a field decoded inside a service, a new route): a 400, not a 500.
 */
const CLIENT_VALUE_SQLSTATES: Record<string, string> = {
  "22021": "contains a character that cannot be stored (NUL or invalid Unicode)",
  "22P05": "contains a character that cannot be stored (NUL or invalid Unicode)",
  "22008": "contains a date or time out of the supported range",
  "22007": "contains a malformed date or time",
  "22009": "contains a date or time out of the supported range",
  "54000": "contains a value too large to store",
};

/** The SQLSTATE of a database error (pg or PGlite), looking through `cause`; undefined otherwise. */
export function sqlStateOf(err: unknown): string | undefined {
  for (let e: unknown = err, i = 0; e && typeof e === "object" && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code;
    // SQLSTATEs are five characters of digits and upper-case letters; other `code`s (Node's ECONNRESET) are not.
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/** A 400 INVALID_INPUT for a database error a client's value caused, or undefined for any other error. */
export function inputErrorFromDatabase(err: unknown): AppError | undefined {
  const state = sqlStateOf(err);
  const reason = state === undefined ? undefined : CLIENT_VALUE_SQLSTATES[state];
  if (!reason) return undefined;
  return errors.invalidInput([], `The request ${reason}`);
}
