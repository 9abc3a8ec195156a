import { decodeKeysetCursor, pageSize, toPage } from "@corridor/kit";
import type { After, Page, PageRequest } from "./types.js";

/** The limit and keyset position of a newest-first page request (400 on `cursor` for a forged one). */
export function pageStart(page: PageRequest): { limit: number; after?: After } {
  const limit = pageSize(page.limit);
  const pos = decodeKeysetCursor(page.cursor, "timestamp");
  return pos ? { limit, after: { createdAt: pos.k, id: pos.id } } : { limit };
}

/** Builds the page from `limit + 1` rows fetched newest first. */
export function pageOf<T extends { createdAt: Date }>(rows: T[], limit: number, idOf: (row: T) => string, totalCount: number): Page<T> {
  const built = toPage(rows, limit, (r) => ({ k: r.createdAt.toISOString(), id: idOf(r) }), totalCount);
  return { items: built.data, hasMore: built.hasMore, nextCursor: built.nextCursor, totalCount };
}
