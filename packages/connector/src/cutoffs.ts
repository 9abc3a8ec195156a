import { DateTime, IANAZone } from "luxon";
import { HOLIDAY_CALENDARS, holidaysOf, type HolidayCalendar } from "./holidays.js";

/**
 * Cut-off windows: banks take payment files by deadlines (ACH's same-day and next-day windows,
 * SEPA's execution cut-offs), on business days, in the bank's time zone. An instruction belongs to
 * the first window whose cut-off is strictly after it arrived; a window is named after its cut-off
 * in the bank's zone (`2026-11-27T1430`), so every replica and every restart computes the same
 * window — and the same file name — for the same instruction.
 */
export interface CutoffSchedule {
  /** IANA time zone of the bank (America/New_York, Europe/Berlin). */
  zone: string;
  /** Cut-off times of day in that zone, ascending, as minutes after midnight. */
  minutes: readonly number[];
  /** Days files are taken, ISO weekday numbers (1 = Monday … 7 = Sunday). */
  weekdays: ReadonlySet<number>;
  /** Dates (YYYY-MM-DD, in the zone) the bank is closed on: no window that day. */
  holidays: ReadonlySet<string>;
  /** A payment system's closing days, computed by its rules (holidays.ts), on top of `holidays`. */
  calendar?: HolidayCalendar;
}

export interface CutoffWindow {
  /** Stable name of the window: its cut-off in the bank's zone, `YYYY-MM-DDTHHmm`. */
  id: string;
  /** The instant the window closes (its cut-off). */
  closesAt: Date;
  /** The business date of the window, in the bank's zone (effective entry date / execution date). */
  businessDate: string;
  /** The cut-off's time of day in the bank's zone, as minutes after midnight (one of the schedule's `minutes`). */
  minute: number;
}

/** What an operator writes: `"10:30,14:45,16:45"`, a zone, optionally weekdays and holidays. */
export interface CutoffSettings {
  times: string;
  zone: string;
  /** Comma-separated ISO weekday numbers; default Monday to Friday. */
  weekdays?: string;
  /** Comma-separated YYYY-MM-DD dates. */
  holidays?: string;
  /** A payment system's closing days on top of `holidays`: FEDERAL_RESERVE (ACH), TARGET2 (SEPA). */
  calendar?: HolidayCalendar;
}

/** Parses settings into a schedule; throws a message naming the bad part (for the config schema). */
export function parseCutoffs(s: CutoffSettings): CutoffSchedule {
  if (!IANAZone.isValidZone(s.zone)) throw new Error(`cut-off time zone ${JSON.stringify(s.zone)} is not an IANA time zone`);
  const minutes = s.times
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean)
    .map((t) => {
      const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(t);
      if (!m) throw new Error(`cut-off time ${JSON.stringify(t)} is not HH:MM`);
      return Number(m[1]) * 60 + Number(m[2]);
    });
  if (minutes.length === 0) throw new Error("at least one cut-off time is needed");
  const sorted = [...new Set(minutes)].sort((a, b) => a - b);
  const weekdays = new Set(
    (s.weekdays ?? "1,2,3,4,5").split(",").map((d) => {
      const n = Number(d.trim());
      if (!Number.isInteger(n) || n < 1 || n > 7) throw new Error(`weekday ${JSON.stringify(d)} is not 1 (Monday) to 7 (Sunday)`);
      return n;
    }),
  );
  if (weekdays.size === 0) throw new Error("at least one business weekday is needed");
  const holidays = new Set(
    (s.holidays ?? "")
      .split(",")
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => {
        if (!DateTime.fromISO(d, { zone: s.zone }).isValid || !/^\d{4}-\d{2}-\d{2}$/.test(d)) throw new Error(`holiday ${JSON.stringify(d)} is not YYYY-MM-DD`);
        return d;
      }),
  );
  if (s.calendar !== undefined && !HOLIDAY_CALENDARS.includes(s.calendar)) throw new Error(`holiday calendar ${JSON.stringify(s.calendar)} is not one of ${HOLIDAY_CALENDARS.join(", ")}`);
  return { zone: s.zone, minutes: sorted, weekdays, holidays, ...(s.calendar ? { calendar: s.calendar } : {}) };
}

const isOpen = (s: CutoffSchedule, day: DateTime) => {
  const date = day.toISODate()!;
  return s.weekdays.has(day.weekday) && !s.holidays.has(date) && !(s.calendar && holidaysOf(s.calendar, day.year).has(date));
};

/** Whether the bank takes files on `date` (YYYY-MM-DD): a business weekday, not a holiday of its own nor of its calendar. */
export function isBusinessDay(s: CutoffSchedule, date: string): boolean {
  return isOpen(s, DateTime.fromISO(date, { zone: s.zone }));
}

/** The instant of a wall-clock time (`HH:MM`) on a date in the bank's zone (a time in a DST gap: the next valid instant). */
export function localInstant(s: CutoffSchedule, date: string, time: string): Date {
  const [hour, minute] = time.split(":").map(Number) as [number, number];
  return DateTime.fromISO(date, { zone: s.zone }).set({ hour, minute, second: 0, millisecond: 0 }).toJSDate();
}

/** An instant's date (YYYY-MM-DD) and time (HHmm) in the bank's zone. */
export function localParts(s: CutoffSchedule, at: Date): { date: string; time: string } {
  const t = DateTime.fromJSDate(at, { zone: s.zone });
  return { date: t.toISODate()!, time: t.toFormat("HHmm") };
}

/**
 * The window an instruction that arrived at `at` goes into: the first cut-off strictly after `at`
 * on a business day (an instruction at exactly 14:30 misses the 14:30 window: that window's file
 * may already be built). `skip` leaves cut-offs out (ACH: an entry over the same-day limit skips
 * the same-day windows). Looks at most a year ahead, which a schedule with any business day
 * always satisfies.
 */
export function windowFor(s: CutoffSchedule, at: Date, opts: { skip?: (minute: number) => boolean } = {}): CutoffWindow {
  const start = DateTime.fromJSDate(at, { zone: s.zone });
  let day = start.startOf("day");
  for (let i = 0; i < 370; i++, day = day.plus({ days: 1 }).startOf("day")) {
    if (!isOpen(s, day)) continue;
    for (const m of s.minutes) {
      if (opts.skip?.(m)) continue;
      // A cut-off in a DST gap (02:30 on a spring-forward day) is taken at the next valid instant.
      const cutoff = day.set({ hour: Math.floor(m / 60), minute: m % 60, second: 0, millisecond: 0 });
      if (cutoff > start) return { id: cutoff.toFormat("yyyy-MM-dd'T'HHmm"), closesAt: cutoff.toJSDate(), businessDate: day.toISODate()!, minute: m };
    }
  }
  throw new Error("the cut-off schedule has no business day within a year");
}

/** The business date `days` business days after `date` (YYYY-MM-DD), for settlement dates and return windows (0: `date` itself). */
export function addBusinessDays(s: CutoffSchedule, date: string, days: number): string {
  let day = DateTime.fromISO(date, { zone: s.zone });
  let left = days;
  while (left > 0) {
    day = day.plus({ days: 1 });
    if (isOpen(s, day)) left--;
  }
  return day.toISODate()!;
}
