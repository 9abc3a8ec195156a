import { describe, expect, it } from "vitest";
import { addBusinessDays, easterSunday, federalReserveHolidays, isBusinessDay, parseCutoffs, target2ClosingDays, windowFor } from "../src/index.js";

describe("payment systems' closing days", () => {
  it("computes Easter by the Gregorian computus", () => {
    expect(["2024", "2025", "2026", "2027", "2038"].map((y) => easterSunday(Number(y)))).toEqual(["2024-03-31", "2025-04-20", "2026-04-05", "2027-03-28", "2038-04-25"]);
  });

  it("TARGET2 closes on New Year, Good Friday, Easter Monday, 1 May and 25-26 December", () => {
    expect(target2ClosingDays(2026)).toEqual(["2026-01-01", "2026-04-03", "2026-04-06", "2026-05-01", "2026-12-25", "2026-12-26"]);
  });

  it("the Federal Reserve observes a Sunday holiday on Monday and does not move a Saturday one", () => {
    expect(federalReserveHolidays(2027)).toContain("2027-07-05");
    expect(federalReserveHolidays(2026)).toContain("2026-07-04");
    expect(federalReserveHolidays(2026)).not.toContain("2026-07-03");
  });

  it("a schedule with a calendar has no window on its closing days, nor on the operator's own", () => {
    const sepa = parseCutoffs({ times: "09:00", zone: "Europe/Berlin", calendar: "TARGET2", holidays: "2026-04-07" });
    // Thursday 2 April 2026 after the cut-off → Good Friday, Easter Monday and the operator's Tuesday closed → Wednesday.
    expect(windowFor(sepa, new Date("2026-04-02T12:00:00Z")).id).toBe("2026-04-08T0900");
    expect(isBusinessDay(sepa, "2026-04-03")).toBe(false);
    expect(addBusinessDays(sepa, "2026-04-02", 1)).toBe("2026-04-08");
    const plain = parseCutoffs({ times: "09:00", zone: "Europe/Berlin" });
    expect(windowFor(plain, new Date("2026-04-02T12:00:00Z")).id).toBe("2026-04-03T0900");
    expect(() => parseCutoffs({ times: "09:00", zone: "UTC", calendar: "BOE" as never })).toThrow(/holiday calendar/);
  });
});
