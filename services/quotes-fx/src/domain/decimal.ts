import { Decimal as DecimalJs } from "decimal.js";

/**
 * The one decimal type of this service. 60 significant digits hold any product of an amount
 * (≤ 9e15, 16 digits) and a rate or fee rate (≤ 20 digits) exactly, so no intermediate result is
 * ever rounded except where the fee and rate model says so (and then with an explicit mode).
 */
export const Decimal = DecimalJs.clone({ precision: 60, rounding: DecimalJs.ROUND_HALF_EVEN, toExpNeg: -30, toExpPos: 40 });
export type Decimal = InstanceType<typeof Decimal>;

export const ROUND_DOWN = DecimalJs.ROUND_DOWN;
export const ROUND_UP = DecimalJs.ROUND_UP;
export const ROUND_HALF_UP = DecimalJs.ROUND_HALF_UP;
export const ROUND_HALF_EVEN = DecimalJs.ROUND_HALF_EVEN;

/** A decimal from a bigint amount, exactly. */
export const dec = (v: bigint | string | number | Decimal): Decimal => new Decimal(typeof v === "bigint" ? v.toString() : v);

/** The integer part of a decimal that is already integral (after a rounding step). */
export function toBigInt(d: Decimal): bigint {
  if (!d.isInteger()) throw new RangeError(`${d.toString()} is not an integer`);
  return BigInt(d.toFixed(0));
}

/** 10^n as a decimal (unit conversion between minor and major units). */
export const pow10 = (n: number): Decimal => new Decimal(10).pow(n);
