import { describe, expect, it } from "vitest";
import { bankingDayAfter, federalReserveHolidays, isBankingDay, parseCutoffs, windowFor, zonedInstant, type WindowSchedule } from "../src/domain/calendar.js";

const schedule: WindowSchedule = {
  timeZone: "America/New_York",
  cutoffs: parseCutoffs(["10:30", "14:45", "20:00"], ["10:30", "14:45"]),
  extraHolidays: new Set(),
};

describe("ACH calendar and cut-off windows", () => {
  it("computes Federal Reserve holidays, moving a Sunday holiday to Monday and leaving a Saturday one", () => {
    expect(federalReserveHolidays(2026)).toEqual([
      "2026-01-01", "2026-01-19", "2026-02-16", "2026-05-25", "2026-06-19", "2026-07-04", "2026-09-07", "2026-10-12", "2026-11-11", "2026-11-26", "2026-12-25",
    ]);
    expect(federalReserveHolidays(2027)).toContain("2027-07-05"); // July 4th 2027 is a Sunday
    expect(isBankingDay("2026-07-03", new Set())).toBe(true); // July 4th 2026 is a Saturday: Friday stays open
    expect(isBankingDay("2026-11-26", new Set())).toBe(false);
    expect(isBankingDay("2026-11-30", new Set(["2026-11-30"]))).toBe(false);
  });

  it("counts banking days over weekends and holidays", () => {
    expect(bankingDayAfter("2026-11-25", 1, new Set())).toBe("2026-11-27"); // Thanksgiving skipped
    expect(bankingDayAfter("2026-11-27", 1, new Set())).toBe("2026-11-30"); // weekend skipped
    expect(bankingDayAfter("2026-11-28", 0, new Set())).toBe("2026-11-30");
  });

  it("files an instruction in the first cut-off at or after it, in the bank's zone (DST-aware)", () => {
    // 09:00 in New York (EST, UTC-5) on Friday 2026-11-27: the 10:30 same-day window.
    const w = windowFor(new Date("2026-11-27T14:00:00Z"), schedule);
    expect(w).toMatchObject({ day: "2026-11-27", time: "10:30", modifier: "A", effectiveDate: "2026-11-27", key: "2026-11-27T10:30" });
    expect(w.cutoffAt.toISOString()).toBe("2026-11-27T15:30:00.000Z");
    // In summer (EDT, UTC-4) the same wall-clock cut-off is an hour earlier in UTC.
    expect(zonedInstant("2026-07-01", "10:30", "America/New_York").toISOString()).toBe("2026-07-01T14:30:00.000Z");
    // Exactly at the cut-off still makes it.
    expect(windowFor(new Date("2026-11-27T15:30:00Z"), schedule).time).toBe("10:30");
  });

  it("a next-day window settles the next banking day; after the last cut-off, the next banking day's first window", () => {
    const evening = windowFor(new Date("2026-11-27T20:00:00Z"), schedule); // 15:00 NY Friday
    expect(evening).toMatchObject({ time: "20:00", modifier: "C", effectiveDate: "2026-11-30" });
    const late = windowFor(new Date("2026-11-28T02:00:00Z"), schedule); // 21:00 NY Friday
    expect(late).toMatchObject({ day: "2026-11-30", time: "10:30", effectiveDate: "2026-11-30" });
    const holiday = windowFor(new Date("2026-11-26T15:00:00Z"), schedule); // Thanksgiving morning
    expect(holiday).toMatchObject({ day: "2026-11-27", time: "10:30" });
  });

  it("refuses cut-offs that are not HH:MM, or a same-day cut-off that is not a cut-off", () => {
    expect(() => parseCutoffs(["25:00"], [])).toThrow(/not HH:MM/);
    expect(() => parseCutoffs(["10:00"], ["11:00"])).toThrow(/not one of the cut-offs/);
  });
});
