import { createClient, createRouterTransport } from "@connectrpc/connect";
import { appErrorInterceptor } from "@corridor/kit";
import { QuotesFxAdminService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_admin_service_pb.js";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectPublicError, startHarness, usdOnly, type Harness } from "./harness.js";

// QuotesFxAdminService: the operator's pushed rates are what production platforms are priced with.

describe("QuotesFxAdminService", () => {
  const PROD = "Platform:prod-admin";
  let h: Harness;
  let admin: ReturnType<typeof createClient<typeof QuotesFxAdminService>>;
  beforeAll(async () => {
    h = await startHarness({ env: { CORRIDOR_FX_RATE_MAX_AGE_SECONDS: "3600" } });
    h.platforms.set(PROD, usdOnly({ environment: "PRODUCTION" }));
    admin = createClient(QuotesFxAdminService, createRouterTransport(h.built.routes, { router: { interceptors: [appErrorInterceptor] } }));
  });
  afterAll(async () => h.close());

  it("records a push, prices production quotes with it, and shows its source and freshness", async () => {
    const res = await admin.pushRates({ base: "USD", rates: { EUR: "0.8", MXN: "20" } });
    expect(res.changed).toBe(2);
    expect(res.rates.map((r) => [r.currency, r.usdValue, r.source, r.fresh])).toEqual([
      ["EUR", "1.25", "operator", true],
      ["MXN", "0.05", "operator", true],
    ]);
    const { rates } = await h.client.listExchangeRates({ platformId: PROD, sourceCurrency: "USD", destinationCurrencies: ["EUR"] });
    expect(rates[0]!.exchangeRate).toBe("1.2525"); // 1.25 × 1.002
    h.clock.advance(3_601_000);
    expect((await admin.listRates({})).rates.every((r) => !r.fresh)).toBe(true);
  });

  it("keeps a newer rate over an older push, and refuses bad input whole without recording any of it", async () => {
    const before = (await admin.listRates({})).rates;
    const old = await admin.pushRates({ base: "USD", rates: { EUR: "0.5" }, asOf: timestampFromDate(new Date(h.clock.now().getTime() - 86_400_000)) });
    expect(old.changed).toBe(0);
    const pushes: { base: string; rates: Record<string, string>; asOf?: ReturnType<typeof timestampFromDate> }[] = [
      { base: "USD", rates: { EUR: "-1", GBP: "0.7" } },
      { base: "USD", rates: {} },
      { base: "", rates: { EUR: "0.9" } },
      { base: "EUR", rates: { GBP: "0.9" } }, // no USD to rebase on
      { base: "USD", rates: { EUR: "0.9" }, asOf: timestampFromDate(new Date(h.clock.now().getTime() + 3_600_000)) },
    ];
    for (const bad of pushes) {
      await expectPublicError(admin.pushRates(bad), "INVALID", "INVALID_INPUT");
    }
    expect((await admin.listRates({})).rates).toEqual(before);
  });
});
