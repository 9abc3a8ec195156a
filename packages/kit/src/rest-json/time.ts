import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";

// The one set of JSON time/int64 helpers of the public JSON mappers (gateway and services that
// build public JSON, such as webhook data): proto values in, JSON values out.

/** Proto timestamp -> ISO 8601 string (UTC). A missing timestamp is a service bug, not a client's. */
export function isoFromTimestamp(ts: Timestamp | undefined): string {
  if (!ts) throw new Error("service answered without a required timestamp");
  return timestampDate(ts).toISOString();
}

/** ISO string (already validated as date-time) -> proto timestamp. */
export function timestampFromIso(iso: string | undefined): Timestamp | undefined {
  return iso === undefined ? undefined : timestampFromDate(new Date(iso));
}

export function optionalIso(ts: Timestamp | undefined): string | undefined {
  return ts ? timestampDate(ts).toISOString() : undefined;
}

/** int64 from proto arrives as bigint; the public API uses JSON numbers (amounts are capped well below 2^63). */
export function numberFromInt64(value: bigint): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`int64 ${value} does not fit a JSON number exactly`);
  return n;
}

export const emptyToUndefined = (s: string): string | undefined => (s === "" ? undefined : s);
