import type { PageInfo } from "@corridor/proto/corridor/common/v1/paging_pb.js";
import { numberFromInt64 } from "@corridor/kit/rest-json";

/**
 * The shape every list route shares: the query's `limit` and `cursor` become the page asked of the
 * service (pageOf), the service's page comes back as the public list envelope
 * `{data, hasMore, nextCursor?, totalCount}` (listEnvelope). Filters are each route's own.
 */

/** Page size when the query names none (the spec's default). */
export const DEFAULT_PAGE_SIZE = 20;

/** The page a list route asks its service for. */
export function pageOf(q: { limit?: number; cursor?: string }): { limit: number; cursor: string } {
  return { limit: q.limit ?? DEFAULT_PAGE_SIZE, cursor: q.cursor ?? "" };
}

/** The public list envelope from a page of items and its PageInfo; nextCursor only while hasMore. */
export function listEnvelope<T>(data: T[], info: PageInfo | undefined) {
  const hasMore = info?.hasMore ?? false;
  return {
    data,
    hasMore,
    ...(hasMore && info?.nextCursor ? { nextCursor: info.nextCursor } : {}),
    totalCount: numberFromInt64(info?.totalCount ?? 0n),
  };
}
