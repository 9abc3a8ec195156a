import { errors } from "./errors.js";
import { isStorableTime, textProblem } from "./text.js";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/**
 * Cursors are opaque to clients: base64url of JSON naming the last row's sort key and id.
 * Keyset paging (not offsets) keeps pages stable while rows are inserted.
 */
export interface CursorPosition {
  /** Sort key of the last row returned (ISO timestamp or other comparable string). */
  k: string;
  /** Id of the last row returned, the tie-breaker. */
  id: string;
}

export function encodeCursor(pos: CursorPosition): string {
  return Buffer.from(JSON.stringify(pos)).toString("base64url");
}

const notOurs = () => errors.invalidInput([{ field: "cursor", reason: "is not a cursor this API issued" }]);

/** Longest sort key or id a cursor may carry (ids are `Kind:<uuid>`; keys are timestamps or short strings). */
const MAX_CURSOR_FIELD = 256;

/**
 * Decodes a cursor. Anything that is not one we issued — not base64url JSON, no string `k` and `id`,
 * a field that is too long or is not storable text (NUL, lone surrogates) — is a 400 INVALID_INPUT
 * on `cursor`, so a forged cursor never reaches a query.
 */
export function decodeCursor(cursor: string): CursorPosition {
  if (cursor.length <= 2048) {
    try {
      const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
      const { k, id } = (parsed ?? {}) as { k?: unknown; id?: unknown };
      if (typeof k === "string" && typeof id === "string" && fits(k) && fits(id)) return { k, id };
    } catch {
      // fall through to the public error
    }
  }
  throw notOurs();
}

const fits = (s: string) => s.length <= MAX_CURSOR_FIELD && textProblem(s) === undefined;

/** The kinds of sort key a list pages on, and what each decodes to. */
export interface CursorKeyKinds {
  /** A timestamp (createdAt and the like), issued as `Date.toISOString()`. */
  timestamp: Date;
  /** Any other comparable string. */
  string: string;
}

/** A decoded keyset position whose sort key has been checked against the list's kind. */
export interface KeysetPosition<K> {
  k: K;
  id: string;
}

/**
 * Decodes a cursor for a list sorted on a key of `kind`; undefined for no cursor (the first page).
 * A cursor that is not ours, or whose key does not fit the list (forged, or another list's), is a
 * 400 INVALID_INPUT on `cursor`, never a failing query later: a timestamp key must be exactly the
 * ISO form this API issues (so it names a real instant) within the years 0001–9999 (Postgres
 * refuses JS dates such as year -271821 or +275760), and the id must be a non-empty string.
 */
export function decodeKeysetCursor<Kind extends keyof CursorKeyKinds>(cursor: string | undefined, kind: Kind): KeysetPosition<CursorKeyKinds[Kind]> | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  const pos = decodeCursor(cursor);
  if (pos.id === "") throw notOurs();
  if (kind === "string") return pos as KeysetPosition<CursorKeyKinds[Kind]>;
  const at = new Date(pos.k);
  // The round trip refuses what Date parses leniently ("2020", "1/2/2020") and invalid dates.
  if (!isStorableTime(at) || at.toISOString() !== pos.k) throw notOurs();
  return { k: at, id: pos.id } as KeysetPosition<CursorKeyKinds[Kind]>;
}

export function pageSize(limit: number | undefined): number {
  if (limit === undefined || limit === 0) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw errors.invalidInput([{ field: "limit", reason: `must be an integer from 1 to ${MAX_PAGE_SIZE}` }]);
  }
  return limit;
}

/** The list envelope of the public API. */
export interface ListEnvelope<T> {
  data: T[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount: number;
}

/**
 * Builds a page from `limit + 1` fetched rows: the extra row only tells whether more follow.
 */
export function toPage<T>(rows: T[], limit: number, positionOf: (row: T) => CursorPosition, totalCount: number) {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  const last = data[data.length - 1];
  return {
    data,
    hasMore,
    nextCursor: hasMore && last ? encodeCursor(positionOf(last)) : undefined,
    totalCount,
  };
}
