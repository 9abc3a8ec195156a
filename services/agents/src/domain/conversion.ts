import { findCurrency } from "@corridor/kit";

/**
 * Converting an amount into the policy's currency (docs/agents.md, evaluation step 3) in exact
 * integer arithmetic: rates are decimal strings and never become binary floats.
 */

/** A positive decimal string ("1.0850", "17") as numerator / denominator. */
export function parseRate(rate: string): { num: bigint; den: bigint } {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(rate.trim());
  if (!m) throw new Error(`not a decimal rate: ${JSON.stringify(rate)}`);
  const frac = m[2] ?? "";
  const num = BigInt(m[1]! + frac);
  if (num === 0n) throw new Error("a rate of zero converts nothing");
  return { num, den: 10n ** BigInt(frac.length) };
}

function decimalsOf(code: string): bigint {
  const c = findCurrency(code);
  if (!c) throw new Error(`unknown currency ${code}`);
  return BigInt(c.decimals);
}

/**
 * `amount` minor units of `from` in minor units of `to`, rounded up (a limit is never passed by
 * rounding). `rate` is `from` major units per one `to` major unit, as quotes-fx quotes it.
 */
export function convertAmount(amount: bigint, from: string, to: string, rate: string): bigint {
  if (from === to) return amount;
  const { num, den } = parseRate(rate);
  const numerator = amount * den * 10n ** decimalsOf(to);
  const denominator = num * 10n ** decimalsOf(from);
  return (numerator + denominator - 1n) / denominator;
}
