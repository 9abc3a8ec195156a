/**
 * Usage windows: the UTC day and month of the platform's clock (docs/agents.md "Usage that can
 * never be overspent"). An action counts in the windows it was submitted in.
 */

/** 2026-11-23 */
export function dayKey(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** 2026-11 */
export function monthKey(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** The next UTC date after `at`'s: when the daily counters start again. */
export function nextDay(at: Date): string {
  return dayKey(new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1)));
}

/** The month after `at`'s: when the monthly counter starts again. */
export function nextMonth(at: Date): string {
  return monthKey(new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)));
}
