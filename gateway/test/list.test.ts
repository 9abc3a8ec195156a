import { create } from "@bufbuild/protobuf";
import { PageInfoSchema } from "@corridor/proto/corridor/common/v1/paging_pb.js";
import { describe, expect, it } from "vitest";
import { DEFAULT_PAGE_SIZE, listEnvelope, pageOf } from "../src/routes/list.js";

describe("the list route shape", () => {
  it("asks for the query's page, 20 items from the start when it names none", () => {
    expect(pageOf({})).toEqual({ limit: DEFAULT_PAGE_SIZE, cursor: "" });
    expect(DEFAULT_PAGE_SIZE).toBe(20);
    expect(pageOf({ limit: 5, cursor: "c1" })).toEqual({ limit: 5, cursor: "c1" });
  });

  it("answers {data, hasMore, nextCursor, totalCount}, nextCursor only while there is more", () => {
    expect(listEnvelope([1, 2], create(PageInfoSchema, { hasMore: true, nextCursor: "n", totalCount: 7n }))).toEqual({ data: [1, 2], hasMore: true, nextCursor: "n", totalCount: 7 });
    expect(listEnvelope([1], create(PageInfoSchema, { hasMore: false, nextCursor: "n", totalCount: 1n }))).toEqual({ data: [1], hasMore: false, totalCount: 1 });
    expect(listEnvelope([], undefined)).toEqual({ data: [], hasMore: false, totalCount: 0 });
  });
});
