import { findCurrency } from "@corridor/kit";
import { Iso20022Error } from "./errors.js";

/**
 * Digits of a currency's minor unit. Corridor's own registry first (so an amount means the same
 * here as in the ledger); for a currency only a bank statement names (CHF on a Swiss account), the
 * runtime's ISO 4217 data (ICU, through Intl).
 */
export function minorDigits(currency: string): number {
  const known = findCurrency(currency);
  if (known) return known.decimals;
  if (!/^[A-Z]{3}$/.test(currency)) throw new Iso20022Error(`currency ${JSON.stringify(currency)} is not an ISO 4217 code`);
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    throw new Iso20022Error(`currency ${currency} is not an ISO 4217 code`);
  }
}

/** ISO 20022 amounts: xs:decimal, at most 18 digits in all and 5 after the point, never negative. */
const DECIMAL = /^(\d{1,18})(?:\.(\d{1,5}))?$/;

/**
 * An amount as a file writes it ("1500.00", "4.5", "12") in minor units of its currency. Exact:
 * string arithmetic, never a float. Digits below the minor unit must be zeros, or the amount is not
 * one the ledger can hold and the file is refused.
 */
export function minorUnitsFromDecimal(text: string, currency: string): bigint {
  const m = DECIMAL.exec(text.trim());
  if (!m) throw new Iso20022Error(`amount ${JSON.stringify(text)} is not a non-negative decimal`);
  const digits = minorDigits(currency);
  const fraction = m[2] ?? "";
  if (/[1-9]/.test(fraction.slice(digits))) throw new Iso20022Error(`amount ${text} ${currency} has more decimals than ${currency}'s minor unit (${digits})`);
  return BigInt(m[1]! + fraction.slice(0, digits).padEnd(digits, "0"));
}

/** Minor units as the decimal text a file carries: 150000n EUR → "1500.00". */
export function decimalFromMinorUnits(amount: bigint, currency: string): string {
  if (amount < 0n) throw new Iso20022Error("amounts in ISO 20022 files are never negative");
  const digits = minorDigits(currency);
  if (digits === 0) return amount.toString();
  const text = amount.toString().padStart(digits + 1, "0");
  return `${text.slice(0, -digits)}.${text.slice(-digits)}`;
}
