import { addBusinessDays, federalReserveHolidays, isBusinessDay, localInstant } from "@corridor/connector";
import { describe, expect, it } from "vitest";
import { achConfigSchema } from "../src/config.js";
import { achWindowFor, completionTime, scheduleOf } from "../src/engine.js";

// The ACH connector's windows and banking days come from the package's one cut-off calendar
// (@corridor/connector cutoffs.ts, with the FEDERAL_RESERVE holiday calendar of holidays.ts).
const config = achConfigSchema.parse({
  ACH_ODFI_ROUTING: "121042882",
  ACH_IMMEDIATE_ORIGIN: "1234567890",
  ACH_IMMEDIATE_ORIGIN_NAME: "Corridor Test",
  ACH_COMPANY_NAME: "Corridor",
  ACH_COMPANY_ID: "1234567890",
  ACH_CUTOFF_TIMES: "10:30,14:45,20:00",
  ACH_SAME_DAY_CUTOFFS: "10:30,14:45",
  ACH_SFTP_HOST: "bank.example",
  ACH_SFTP_USERNAME: "corridor",
  ACH_SFTP_PASSWORD: "x",
  ACH_SFTP_HOST_KEY: "SHA256:abc",
});
const { schedule } = scheduleOf(config);
/** The test's settings as an environment (strings only), with overrides. */
const base = { ...config, ACH_CUTOFF_TIMES: undefined, ACH_SAME_DAY_CUTOFFS: undefined, ACH_SAME_DAY_LIMIT_CENTS: undefined, ACH_SFTP_PORT: undefined, ACH_BUSINESS_DAYS: undefined, ACH_CALENDAR: undefined };
const env = (over: Record<string, string>) => ({ ...Object.fromEntries(Object.entries(base).filter(([, v]) => typeof v === "string")), ...over });
const withHoliday = scheduleOf({ ...config, ACH_HOLIDAYS: ["2026-11-30"] }).schedule;

describe("ACH calendar and cut-off windows", () => {
  it("computes Federal Reserve holidays, moving a Sunday holiday to Monday and leaving a Saturday one", () => {
    expect(federalReserveHolidays(2026)).toEqual([
      "2026-01-01", "2026-01-19", "2026-02-16", "2026-05-25", "2026-06-19", "2026-07-04", "2026-09-07", "2026-10-12", "2026-11-11", "2026-11-26", "2026-12-25",
    ]);
    expect(federalReserveHolidays(2027)).toContain("2027-07-05"); // July 4th 2027 is a Sunday
    expect(isBusinessDay(schedule, "2026-07-03")).toBe(true); // July 4th 2026 is a Saturday: Friday stays open
    expect(isBusinessDay(schedule, "2026-11-26")).toBe(false);
    expect(isBusinessDay(schedule, "2026-11-30")).toBe(true);
    expect(isBusinessDay(withHoliday, "2026-11-30")).toBe(false); // ACH_HOLIDAYS
  });

  it("counts banking days over weekends and holidays", () => {
    expect(addBusinessDays(schedule, "2026-11-25", 1)).toBe("2026-11-27"); // Thanksgiving skipped
    expect(addBusinessDays(schedule, "2026-11-27", 1)).toBe("2026-11-30"); // weekend skipped
    expect(addBusinessDays(withHoliday, "2026-11-27", 1)).toBe("2026-12-01");
  });

  it("files an instruction in the first cut-off after it, in the bank's zone (DST-aware)", () => {
    // 09:00 in New York (EST, UTC-5) on Friday 2026-11-27: the 10:30 same-day window.
    const w = achWindowFor(config, new Date("2026-11-27T14:00:00Z"));
    expect(w).toMatchObject({ day: "2026-11-27", sameDay: true, effectiveDate: "2026-11-27", key: "2026-11-27T1030" });
    expect(w.cutoffAt.toISOString()).toBe("2026-11-27T15:30:00.000Z");
    // In summer (EDT, UTC-4) the same wall-clock cut-off is an hour earlier in UTC.
    expect(localInstant(schedule, "2026-07-01", "10:30").toISOString()).toBe("2026-07-01T14:30:00.000Z");
    // One millisecond before the cut-off makes it; exactly at the cut-off is the next window (the
    // window's file may already be built at that instant).
    expect(achWindowFor(config, new Date("2026-11-27T15:29:59.999Z")).key).toBe("2026-11-27T1030");
    expect(achWindowFor(config, new Date("2026-11-27T15:30:00Z")).key).toBe("2026-11-27T1445");
  });

  it("a next-day window settles the next banking day; after the last cut-off, the next banking day's first window", () => {
    const evening = achWindowFor(config, new Date("2026-11-27T20:00:00Z")); // 15:00 NY Friday
    expect(evening).toMatchObject({ key: "2026-11-27T2000", sameDay: false, effectiveDate: "2026-11-30" });
    const late = achWindowFor(config, new Date("2026-11-28T02:00:00Z")); // 21:00 NY Friday
    expect(late).toMatchObject({ day: "2026-11-30", key: "2026-11-30T1030", effectiveDate: "2026-11-30" });
    const holiday = achWindowFor(config, new Date("2026-11-26T15:00:00Z")); // Thanksgiving morning
    expect(holiday).toMatchObject({ day: "2026-11-27", key: "2026-11-27T1030" });
  });

  it("ACH_BUSINESS_DAYS and ACH_CALENDAR=NONE open weekends and the Fed's holidays (a bank that takes files every day)", () => {
    const everyDay = scheduleOf(achConfigSchema.parse({ ...env({}), ACH_BUSINESS_DAYS: "1,2,3,4,5,6,7", ACH_CALENDAR: "NONE" }));
    expect(isBusinessDay(everyDay.schedule, "2026-11-26")).toBe(true);
    expect(isBusinessDay(everyDay.schedule, "2026-11-28")).toBe(true);
    expect(achConfigSchema.safeParse({ ...env({}), ACH_BUSINESS_DAYS: "0" }).error?.issues.map((i) => i.path.join("."))).toEqual(["ACH_BUSINESS_DAYS"]);
  });

  it("an entry over the same-day limit skips the same-day windows", () => {
    expect(achWindowFor(config, new Date("2026-11-27T14:00:00Z"), false)).toMatchObject({ key: "2026-11-27T2000", sameDay: false, effectiveDate: "2026-11-30" });
  });

  it("a payout completes at settlement on its effective date; a pull after the availability days", () => {
    expect(completionTime(config, "PAYOUT", "2026-11-25").toISOString()).toBe("2026-11-25T22:00:00.000Z"); // 17:00 EST
    expect(completionTime(config, "PULL", "2026-11-25").toISOString()).toBe("2026-11-30T22:00:00.000Z"); // +2 banking days over Thanksgiving and the weekend
  });

  it("refuses cut-offs that are not HH:MM, or a same-day cut-off that is not a cut-off", () => {
    expect(achConfigSchema.safeParse(env({ ACH_CUTOFF_TIMES: "25:00" })).error?.issues.map((i) => i.path.join("."))).toContain("ACH_CUTOFF_TIMES.0");
    expect(achConfigSchema.safeParse(env({ ACH_CUTOFF_TIMES: "10:00", ACH_SAME_DAY_CUTOFFS: "11:00" })).error?.issues.map((i) => i.message)).toContain("11:00 is not one of ACH_CUTOFF_TIMES");
  });
});
