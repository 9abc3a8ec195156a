/** Largest amount the API accepts anywhere, in minor units (spec: lockedCurrencyAmount limit). */
export const MAX_AMOUNT = 9_000_000_000_000_000n;

/**
 * Turns a JSON number that must be a whole amount in minor units into a bigint, or null when it
 * is not one. JSON numbers above 2^53 lose precision before we see them, so anything that is not a
 * safe integer is refused rather than silently rounded.
 */
export function amountFromJson(value: unknown): bigint | null {
  if (typeof value === "bigint") return value;
  if (typeof value !== "number" || !Number.isSafeInteger(value)) return null;
  return BigInt(value);
}

/** Amounts go on the wire as JSON numbers; every amount we accept fits in a safe integer. */
export function amountToJson(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new RangeError(`amount ${value} does not fit a JSON number exactly`);
  }
  return Number(value);
}

export function isValidAmount(value: bigint, { min = 0n, max = MAX_AMOUNT } = {}): boolean {
  return value >= min && value <= max;
}
