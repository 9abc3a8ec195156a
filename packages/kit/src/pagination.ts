import { errors } from "./errors.js";

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

export function decodeCursor(cursor: string): CursorPosition {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (typeof parsed?.k === "string" && typeof parsed?.id === "string") return parsed;
  } catch {
    // fall through to the public error
  }
  throw errors.invalidInput([{ field: "cursor", reason: "is not a cursor this API issued" }]);
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
