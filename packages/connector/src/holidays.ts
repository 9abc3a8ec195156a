import { DateTime } from "luxon";

/**
 * Closing days of the payment systems banks take files for, computed by each system's published
 * rules, year by year (no table to keep up to date). A schedule names one with `calendar`
 * (cutoffs.ts); the operator's extra holidays are added on top.
 *
 * - `FEDERAL_RESERVE` (ACH, Fedwire): New Year's Day, Martin Luther King Jr. Day, Washington's
 *   Birthday, Memorial Day, Juneteenth, Independence Day, Labor Day, Columbus Day, Veterans Day,
 *   Thanksgiving, Christmas. A holiday on a Sunday is observed the Monday after; one on a Saturday
 *   is not moved (the Fed is open the Friday before).
 * - `TARGET2` (SEPA credit transfers settle in T2): New Year's Day, Good Friday, Easter Monday,
 *   1 May, 25 and 26 December.
 */
export type HolidayCalendar = "FEDERAL_RESERVE" | "TARGET2";
export const HOLIDAY_CALENDARS: readonly HolidayCalendar[] = ["FEDERAL_RESERVE", "TARGET2"];

const iso = (year: number, month: number, day: number) => DateTime.utc(year, month, day).toISODate()!;

/** The nth (1-based; -1 for the last) ISO weekday (1 = Monday) of a month. */
function nthWeekday(year: number, month: number, weekday: number, n: number): string {
  if (n > 0) {
    const first = DateTime.utc(year, month, 1);
    return first.plus({ days: ((weekday - first.weekday + 7) % 7) + (n - 1) * 7 }).toISODate()!;
  }
  const last = DateTime.utc(year, month, 1).endOf("month").startOf("day");
  return last.minus({ days: (last.weekday - weekday + 7) % 7 }).toISODate()!;
}

/** Federal Reserve holidays of a year as the Fed observes them. */
export function federalReserveHolidays(year: number): string[] {
  const fixed = (month: number, day: number) => {
    const d = DateTime.utc(year, month, day);
    return (d.weekday === 7 ? d.plus({ days: 1 }) : d).toISODate()!;
  };
  return [
    fixed(1, 1),
    nthWeekday(year, 1, 1, 3), // Martin Luther King Jr. Day
    nthWeekday(year, 2, 1, 3), // Washington's Birthday
    nthWeekday(year, 5, 1, -1), // Memorial Day
    fixed(6, 19), // Juneteenth
    fixed(7, 4),
    nthWeekday(year, 9, 1, 1), // Labor Day
    nthWeekday(year, 10, 1, 2), // Columbus Day
    fixed(11, 11), // Veterans Day
    nthWeekday(year, 11, 4, 4), // Thanksgiving
    fixed(12, 25),
  ];
}

/** Easter Sunday of a year in the Gregorian calendar (the anonymous Gregorian computus). */
export function easterSunday(year: number): string {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return iso(year, month, day);
}

/** TARGET2's closing days of a year. */
export function target2ClosingDays(year: number): string[] {
  const easter = DateTime.fromISO(easterSunday(year), { zone: "utc" });
  return [iso(year, 1, 1), easter.minus({ days: 2 }).toISODate()!, easter.plus({ days: 1 }).toISODate()!, iso(year, 5, 1), iso(year, 12, 25), iso(year, 12, 26)];
}

const cache = new Map<string, ReadonlySet<string>>();

/** The closing days of `calendar` in `year`, as YYYY-MM-DD. */
export function holidaysOf(calendar: HolidayCalendar, year: number): ReadonlySet<string> {
  const key = `${calendar}:${year}`;
  let set = cache.get(key);
  if (!set) cache.set(key, (set = new Set(calendar === "FEDERAL_RESERVE" ? federalReserveHolidays(year) : target2ClosingDays(year))));
  return set;
}
