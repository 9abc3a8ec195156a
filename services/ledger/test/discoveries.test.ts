import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicError, startLedgerHarness, type LedgerHarness } from "./harness.js";

/** GET /discoveries at the ledger (issue 27): what payouts accept, per country and currency. */
describe("ledger: ListDiscoveries", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  const rails = (list: { country: string; currency: string; paymentRail: string }[]) => list.map((d) => `${d.country}/${d.currency}/${d.paymentRail}`);

  it("a sandbox platform: every rail of each currency it pays out in, in each country of the account type", async () => {
    const platformId = await h.newPlatform();
    h.transactionTypes.set(platformId, { USD: ["OUTGOING", "INCOMING"], EUR: ["INCOMING"], MXN: ["OUTGOING"] });
    const all = (await h.ledger.listDiscoveries({ platformId })).discoveries;
    expect(rails(all)).toEqual(["MX/MXN/", "US/USD/ACH", "US/USD/FEDNOW", "US/USD/RTP", "US/USD/WIRE"]);
    expect(all[0]).toMatchObject({ accountType: "MXN_ACCOUNT", displayName: "Mexican Peso bank account (MX)" });
    expect((await h.ledger.listDiscoveries({ platformId, country: "US", currency: "MXN" })).discoveries).toEqual([]);
    expect(rails((await h.ledger.listDiscoveries({ platformId, currency: "USD" })).discoveries)).toHaveLength(4);
    expect((await publicError(h.ledger.listDiscoveries({ platformId, country: "usa" }))).code).toBe("INVALID_INPUT");
    expect((await publicError(h.ledger.listDiscoveries({ platformId, currency: "XXX" }))).code).toBe("INVALID_INPUT");
  });

  it("a production platform: only the rails the operator bound, none for a currency without a binding", async () => {
    const platformId = await h.newPlatform({ environment: Environment.PRODUCTION });
    h.transactionTypes.set(platformId, { USD: ["OUTGOING"], EUR: ["OUTGOING"], BRL: ["OUTGOING"] });
    expect((await h.ledger.listDiscoveries({ platformId })).discoveries).toEqual([]);
    await h.admin.bindPlatformRail({ platformId, currency: "USD", paymentRail: "ACH", connector: "ach-test" });
    await h.admin.bindPlatformRail({ platformId, currency: "EUR", paymentRail: "SEPA", connector: "sepa-test" });
    const all = (await h.ledger.listDiscoveries({ platformId })).discoveries;
    expect(all.filter((d) => d.currency === "USD").map((d) => d.paymentRail)).toEqual(["ACH"]);
    expect(new Set(all.filter((d) => d.currency === "EUR").map((d) => d.paymentRail))).toEqual(new Set(["SEPA"]));
    expect(all.filter((d) => d.currency === "EUR").map((d) => d.country)).toContain("DE");
    expect(all.some((d) => d.currency === "BRL")).toBe(false);
  });
});
