import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addBusinessDays, parseCutoffs, windowFor } from "../src/index.js";

const ach = parseCutoffs({ times: "16:45, 10:30,14:45", zone: "America/New_York", holidays: "2026-11-26,2026-12-25" });
const at = (iso: string) => new Date(iso);

describe("cut-off windows", () => {
  it("puts an instruction in the next cut-off of the bank's day, in the bank's zone", () => {
    // 09:00 New York (14:00 UTC, EST) on Friday 27 November 2026 → the 10:30 window that day.
    expect(windowFor(ach, at("2026-11-27T14:00:00Z"))).toEqual({ id: "2026-11-27T1030", closesAt: at("2026-11-27T15:30:00Z"), businessDate: "2026-11-27", minute: 630 });
    expect(windowFor(ach, at("2026-11-27T17:00:00Z")).id).toBe("2026-11-27T1445");
  });

  it("an instruction at exactly a cut-off misses it; one a millisecond before makes it", () => {
    expect(windowFor(ach, at("2026-11-27T15:30:00Z")).id).toBe("2026-11-27T1445");
    expect(windowFor(ach, at("2026-11-27T15:29:59.999Z")).id).toBe("2026-11-27T1030");
  });

  it("after the last cut-off, over a weekend and a holiday, it waits for the next business day's first window", () => {
    // Friday 17:00 New York → Monday 30 November 10:30.
    expect(windowFor(ach, at("2026-11-27T22:00:00Z")).id).toBe("2026-11-30T1030");
    // Wednesday 25 November after the last window → Thursday is Thanksgiving (a holiday) → Friday.
    expect(windowFor(ach, at("2026-11-25T23:00:00Z")).id).toBe("2026-11-27T1030");
  });

  it("follows the zone's daylight-saving changes (Europe/Berlin, last Sunday of March)", () => {
    const sepa = parseCutoffs({ times: "09:00", zone: "Europe/Berlin", weekdays: "1,2,3,4,5,6,7" });
    expect(windowFor(sepa, at("2026-03-28T12:00:00Z")).closesAt).toEqual(at("2026-03-29T07:00:00Z")); // CEST: UTC+2
    expect(windowFor(sepa, at("2026-03-27T12:00:00Z")).closesAt).toEqual(at("2026-03-28T08:00:00Z")); // CET: UTC+1
  });

  it("refuses settings an operator could mistype, naming the part", () => {
    expect(() => parseCutoffs({ times: "25:00", zone: "UTC" })).toThrow(/25:00/);
    expect(() => parseCutoffs({ times: "", zone: "UTC" })).toThrow(/at least one/);
    expect(() => parseCutoffs({ times: "10:00", zone: "Mars/Olympus" })).toThrow(/IANA/);
    expect(() => parseCutoffs({ times: "10:00", zone: "UTC", weekdays: "0" })).toThrow(/weekday/);
    expect(() => parseCutoffs({ times: "10:00", zone: "UTC", holidays: "27.11.2026" })).toThrow(/holiday/);
  });

  it("counts business days over weekends and holidays", () => {
    expect(addBusinessDays(ach, "2026-11-25", 1)).toBe("2026-11-27");
    expect(addBusinessDays(ach, "2026-11-27", 2)).toBe("2026-12-01");
  });

  it("property: the window closes strictly after the arrival, on a business day, and is the first such cut-off", () => {
    fc.assert(
      fc.property(fc.date({ min: at("2020-01-01T00:00:00Z"), max: at("2030-12-31T00:00:00Z"), noInvalidDate: true }), (arrival) => {
        const w = windowFor(ach, arrival);
        expect(w.closesAt.getTime()).toBeGreaterThan(arrival.getTime());
        expect([1, 2, 3, 4, 5]).toContain(new Date(`${w.businessDate}T12:00:00Z`).getUTCDay() || 7);
        // Nothing earlier: one millisecond before the cut-off still lands in the same window, and
        // a window computed from any instant between arrival and cut-off is this one.
        expect(windowFor(ach, new Date(w.closesAt.getTime() - 1)).id).toBe(w.id);
        const mid = new Date(arrival.getTime() + Math.floor((w.closesAt.getTime() - arrival.getTime()) / 2));
        expect(windowFor(ach, mid).id).toBe(w.id);
      }),
      { numRuns: 300 },
    );
  });
});
