// Fixed-width field helpers shared by the writer and the reader. A NACHA record is 94 ASCII
// characters; alphanumeric fields are left-justified and space-filled, numeric fields
// right-justified and zero-filled.

export const RECORD_LENGTH = 94;
export const BLOCKING_FACTOR = 10;
export const FILLER_RECORD = "9".repeat(RECORD_LENGTH);

/** The characters NACHA allows in a record: printable ASCII, 0x20–0x7E. */
const PRINTABLE = /^[\x20-\x7e]*$/;

/** A field the writer was given that cannot be written. */
export class NachaWriteError extends Error {
  constructor(readonly field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = "NachaWriteError";
  }
}

/** Left-justified, space-filled; leading and trailing blanks are dropped (a left-justified field
 * never starts with one). `truncate` for names and descriptions, which banks expect cut;
 * identifiers (account numbers, company IDs) are never cut: too long is an error. */
export function alpha(field: string, value: string, width: number, opts: { truncate?: boolean; upper?: boolean } = {}): string {
  let v = (opts.upper ? value.toUpperCase() : value).trim();
  if (!PRINTABLE.test(v)) throw new NachaWriteError(field, "only printable ASCII characters (0x20-0x7E) may be written");
  if (v.length > width) {
    if (!opts.truncate) throw new NachaWriteError(field, `is ${v.length} characters; the field holds ${width}`);
    v = v.slice(0, width);
  }
  return v.padEnd(width, " ");
}

/** Right-justified, zero-filled digits. */
export function numeric(field: string, value: bigint | number | string, width: number): string {
  const s = typeof value === "string" ? value : value.toString();
  if (!/^[0-9]+$/.test(s)) throw new NachaWriteError(field, `must be digits only (got ${JSON.stringify(s)})`);
  if (s.length > width) throw new NachaWriteError(field, `${s} does not fit in ${width} digits`);
  return s.padStart(width, "0");
}

/** ABA routing number check digit over the first 8 digits: weights 3, 7, 1 repeating. */
export function routingCheckDigit(first8: string): number {
  const w = [3, 7, 1, 3, 7, 1, 3, 7];
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += Number(first8[i]) * w[i]!;
  return (10 - (sum % 10)) % 10;
}

/** A 9-digit ABA routing number whose check digit is right. */
export function isRoutingNumber(value: string): boolean {
  return /^[0-9]{9}$/.test(value) && routingCheckDigit(value.slice(0, 8)) === Number(value[8]);
}

/** The entry hash: the sum of the 8-digit RDFI identifications, its rightmost 10 digits. */
export function entryHashDigits(sum: bigint): string {
  return (sum % 10_000_000_000n).toString().padStart(10, "0");
}
