import { decodeCursor, errors, pageSize, toPage } from "@corridor/kit";
import type { After, Page, PageRequest } from "./types.js";

/** The limit and keyset position of a newest-first page request. */
export function pageStart(page: PageRequest): { limit: number; after?: After } {
  const limit = pageSize(page.limit);
  if (!page.cursor) return { limit };
  const pos = decodeCursor(page.cursor);
  const createdAt = new Date(pos.k);
  if (Number.isNaN(createdAt.getTime())) throw errors.invalidInput([{ field: "cursor", reason: "is not a cursor this API issued" }]);
  return { limit, after: { createdAt, id: pos.id } };
}

/** Builds the page from `limit + 1` rows fetched newest first. */
export function pageOf<T extends { createdAt: Date }>(rows: T[], limit: number, idOf: (row: T) => string, totalCount: number): Page<T> {
  const built = toPage(rows, limit, (r) => ({ k: r.createdAt.toISOString(), id: idOf(r) }), totalCount);
  return { items: built.data, hasMore: built.hasMore, nextCursor: built.nextCursor, totalCount };
}
