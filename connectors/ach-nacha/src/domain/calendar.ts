// Banking days and cut-off windows in the ODFI's time zone. An instruction belongs to the first
// cut-off at or after the moment it arrives, on a banking day; each window's entries make one file.
// A same-day window's entries settle that banking day, any other window's the next banking day.
// Banking days are weekdays that are not Federal Reserve holidays (computed by the Fed's rules)
// nor in the operator's extra holiday list.

/** A calendar date in the bank's zone, "YYYY-MM-DD". */
export type LocalDate = string;

export interface CutoffWindow {
  /** The cut-off as "HH:MM" in the bank's zone. */
  readonly time: string;
  /** Entries of a same-day window settle on the day of the cut-off. */
  readonly sameDay: boolean;
}

export interface WindowSchedule {
  readonly timeZone: string;
  /** Ascending within the day. */
  readonly cutoffs: readonly CutoffWindow[];
  readonly extraHolidays: ReadonlySet<LocalDate>;
}

/** The window an instruction is filed in. */
export interface FileWindow {
  /** The cut-off instant (the file is built when it has passed). */
  readonly cutoffAt: Date;
  /** The banking day of the cut-off, in the bank's zone. */
  readonly day: LocalDate;
  readonly time: string;
  /** A, B, C, … by the cut-off's place in the day: the file ID modifier of its file. */
  readonly modifier: string;
  /** The banking day its entries settle (the batch's effective entry date). */
  readonly effectiveDate: LocalDate;
  /** A stable key: day and time. */
  readonly key: string;
}

const pad = (n: number) => String(n).padStart(2, "0");

/** The calendar date and time of an instant in a zone. */
export function zonedParts(at: Date, timeZone: string): { date: LocalDate; hh: number; mm: number } {
  const f = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]));
  return { date: `${p.year}-${p.month}-${p.day}`, hh: Number(p.hour), mm: Number(p.minute) };
}

/** The instant of a wall-clock time on a date in a zone (DST-aware: the offset at that moment). */
export function zonedInstant(date: LocalDate, time: string, timeZone: string): Date {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const [hh, mm] = time.split(":").map(Number) as [number, number];
  let guess = Date.UTC(y, m - 1, d, hh, mm);
  // Two corrections settle the zone's offset (the second for instants near a DST change).
  for (let i = 0; i < 2; i++) {
    const p = zonedParts(new Date(guess), timeZone);
    const [py, pm, pd] = p.date.split("-").map(Number) as [number, number, number];
    const shown = Date.UTC(py, pm - 1, pd, p.hh, p.mm);
    guess += Date.UTC(y, m - 1, d, hh, mm) - shown;
  }
  return new Date(guess);
}

const toDate = (d: LocalDate) => new Date(`${d}T00:00:00Z`);
const fromDate = (d: Date): LocalDate => d.toISOString().slice(0, 10);
export const addDays = (d: LocalDate, n: number): LocalDate => fromDate(new Date(toDate(d).getTime() + n * 86_400_000));
const weekday = (d: LocalDate) => toDate(d).getUTCDay(); // 0 Sunday … 6 Saturday

/** The nth (1-based; -1 for the last) given weekday of a month. */
function nthWeekday(year: number, month: number, dow: number, n: number): LocalDate {
  if (n > 0) {
    const first = new Date(Date.UTC(year, month - 1, 1)).getUTCDay();
    return fromDate(new Date(Date.UTC(year, month - 1, 1 + ((dow - first + 7) % 7) + (n - 1) * 7)));
  }
  const lastDay = new Date(Date.UTC(year, month, 0));
  return fromDate(new Date(Date.UTC(year, month - 1, lastDay.getUTCDate() - ((lastDay.getUTCDay() - dow + 7) % 7))));
}

/** Federal Reserve holidays of a year as the Fed observes them: a holiday on a Sunday is observed
 * the Monday after; one on a Saturday is not moved (the Fed is open the Friday before). */
export function federalReserveHolidays(year: number): LocalDate[] {
  const fixed = (m: number, d: number) => {
    const day = `${year}-${pad(m)}-${pad(d)}`;
    return weekday(day) === 0 ? addDays(day, 1) : day;
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

const holidayCache = new Map<number, Set<LocalDate>>();

export function isBankingDay(d: LocalDate, extra: ReadonlySet<LocalDate>): boolean {
  const w = weekday(d);
  if (w === 0 || w === 6 || extra.has(d)) return false;
  const year = Number(d.slice(0, 4));
  let set = holidayCache.get(year);
  if (!set) holidayCache.set(year, (set = new Set(federalReserveHolidays(year))));
  return !set.has(d);
}

/** The banking day `n` banking days after `d` (n = 0: d itself if a banking day, else the next). */
export function bankingDayAfter(d: LocalDate, n: number, extra: ReadonlySet<LocalDate>): LocalDate {
  let day = d;
  while (!isBankingDay(day, extra)) day = addDays(day, 1);
  for (let i = 0; i < n; i++) {
    day = addDays(day, 1);
    while (!isBankingDay(day, extra)) day = addDays(day, 1);
  }
  return day;
}

/** The window an instruction arriving at `at` is filed in: the first cut-off at or after it on a
 * banking day (skipping same-day windows when `sameDayAllowed` is false: an entry over the
 * same-day limit). */
export function windowFor(at: Date, s: WindowSchedule, sameDayAllowed = true): FileWindow {
  if (s.cutoffs.length === 0) throw new Error("no cut-off windows configured");
  let day = zonedParts(at, s.timeZone).date;
  for (let guard = 0; guard < 30; guard++) {
    if (isBankingDay(day, s.extraHolidays)) {
      for (const [i, c] of s.cutoffs.entries()) {
        if (c.sameDay && !sameDayAllowed) continue;
        const cutoffAt = zonedInstant(day, c.time, s.timeZone);
        if (cutoffAt.getTime() >= at.getTime()) {
          return {
            cutoffAt,
            day,
            time: c.time,
            modifier: String.fromCharCode(65 + i),
            effectiveDate: c.sameDay ? day : bankingDayAfter(day, 1, s.extraHolidays),
            key: `${day}T${c.time}`,
          };
        }
      }
    }
    day = addDays(day, 1);
  }
  throw new Error("no banking day within 30 days");
}

/** Parses "10:30,14:45,16:30" and the same-day subset into ascending windows. */
export function parseCutoffs(times: readonly string[], sameDay: readonly string[]): CutoffWindow[] {
  const ok = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;
  for (const t of [...times, ...sameDay]) if (!ok.test(t)) throw new Error(`cut-off ${JSON.stringify(t)} is not HH:MM`);
  for (const t of sameDay) if (!times.includes(t)) throw new Error(`same-day cut-off ${t} is not one of the cut-offs ${times.join(",")}`);
  const sorted = [...new Set(times)].sort();
  if (sorted.length > 26) throw new Error("at most 26 cut-offs a day (file ID modifiers A-Z)");
  return sorted.map((time) => ({ time, sameDay: sameDay.includes(time) }));
}
