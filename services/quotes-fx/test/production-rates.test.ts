import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { newId } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEcbDaily } from "../src/clients/ecb-feed.js";
import { parseFeed } from "../src/clients/feed-rate-source.js";
import { productionRateStore } from "../src/data/production-rates.js";
import { pullRateFeed, rateFeedWorker } from "../src/workers/rate-feed.js";
import { expectPublicError, startHarness, usdOnly, type Harness } from "./harness.js";

// Production platforms' rates (issue 25, item 3): the ECB's daily file pulled over loopback HTTP
// into the operator's table, every production price read from it, a rate past its age limit refused.

/** The ECB's eurofxref-daily.xml layout (a gesmes:Envelope, Cube > Cube@time > Cube@currency/@rate). */
const ecbDaily = (days: { time: string; rates: Record<string, string> }[]) => `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender>
		<gesmes:name>European Central Bank</gesmes:name>
	</gesmes:Sender>
	<Cube>
${days.map((d) => `		<Cube time='${d.time}'>\n${Object.entries(d.rates).map(([c, r]) => `			<Cube currency='${c}' rate='${r}'/>`).join("\n")}\n		</Cube>`).join("\n")}
	</Cube>
</gesmes:Envelope>`;

describe("the ECB daily reference rates", () => {
  it("reads the newest day of the file as units per euro, and rebases it to USD values exactly", () => {
    const xml = ecbDaily([
      { time: "2026-11-26", rates: { USD: "1.0500", GBP: "0.8000" } },
      { time: "2026-11-27", rates: { USD: "1.0567", JPY: "158.12", GBP: "0.8300", MXN: "21.5432" } },
    ]);
    const body = parseEcbDaily(xml);
    expect(body).toEqual({ base: "EUR", rates: { USD: "1.0567", JPY: "158.12", GBP: "0.8300", MXN: "21.5432" }, timestamp: Date.parse("2026-11-27T14:00:00Z") / 1000 });
    const t = parseFeed(body, new Date());
    expect(t.usdValue.get("EUR")!.toString()).toBe("1.0567");
    expect(t.usdValue.get("GBP")!.toString()).toBe("1.2731325301204819277"); // 1.0567 / 0.83, 20 significant digits
    expect(t.asOf.toISOString()).toBe("2026-11-27T14:00:00.000Z");
  });

  it("refuses a file without rates, without USD, with a DOCTYPE, or not XML", () => {
    expect(() => parseEcbDaily(ecbDaily([]))).toThrow(/no dated Cube/);
    expect(() => parseEcbDaily(ecbDaily([{ time: "2026-11-27", rates: { GBP: "0.83" } }]))).toThrow(/no USD/);
    expect(() => parseEcbDaily(`<!DOCTYPE x [<!ENTITY a "b">]>${ecbDaily([{ time: "2026-11-27", rates: { USD: "1" } }])}`)).toThrow(/DOCTYPE/);
    expect(() => parseEcbDaily("{}")).toThrow(/not well-formed|no dated Cube/);
  });
});

describe("production quotes priced from the operator's table", () => {
  const PROD = "Platform:prod-rates";
  let h: Harness;
  let server: Server;
  let url = "";
  let file = "";
  const customer = newId("Customer");
  const account = newId("InternalAccount");
  const payee = newId("ExternalAccount");

  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(200, { "content-type": "text/xml" }).end(file));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stats/eurofxref/eurofxref-daily.xml`;
    h = await startHarness({ env: { CORRIDOR_FX_RATE_MAX_AGE_SECONDS: String(96 * 3600) } });
    h.clock.set(new Date("2026-11-27T16:30:00Z"));
    h.platforms.set(PROD, usdOnly({ environment: "PRODUCTION" }));
    h.internal.set(account, { id: account, platformId: PROD, customerId: customer, type: "INTERNAL_FIAT", currency: "USD", available: 1_000_000n });
    h.external.set(payee, { id: payee, platformId: PROD, customerId: customer, status: "ACTIVE", currency: "EUR", accountType: "EUR_ACCOUNT" });
    // The operator bound the platform's EUR payouts to a connector: pricing is what is left to test.
    h.boundRails.add(`${PROD} EUR`);
  });
  afterAll(async () => {
    await h.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const rates = () => h.client.listExchangeRates({ platformId: PROD, sourceCurrency: "USD", destinationCurrencies: ["EUR"], sendingAmount: 10_000n });
  const quote = () =>
    h.client.createQuote({
      platformId: PROD,
      source: { sourceType: "ACCOUNT", accountId: account },
      destination: { destinationType: "ACCOUNT", accountId: payee },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 10_000n,
      counterpartyInformation: { FULL_NAME: "Grace Hopper" },
    });
  const pull = () => pullRateFeed({ url, format: "ecb-xml", timeoutMs: 2_000 }, productionRateStore(h.db.forSchema("quotes_fx")), h.clock);

  it("refuses to price before any rate has arrived: 503 RATES_UNAVAILABLE naming the currency, never a made-up rate", async () => {
    const err = await expectPublicError(rates(), "UNAVAILABLE", "RATES_UNAVAILABLE");
    expect(err.details).toMatchObject({ currency: "EUR" });
    await expectPublicError(quote(), "UNAVAILABLE", "RATES_UNAVAILABLE");
  });

  it("prices GET /exchange-rates and a quote from the pulled ECB rate (with the platform's markup)", async () => {
    file = ecbDaily([{ time: "2026-11-27", rates: { USD: "1.0800", GBP: "0.8300" } }]);
    // The worker pulls at once when it starts.
    const worker = rateFeedWorker({ url, format: "ecb-xml", timeoutMs: 2_000, pollMs: 3_600_000 }, productionRateStore(h.db.forSchema("quotes_fx")), h.clock, { warn: () => {}, debug: () => {} });
    worker.start();
    await worker.stop();
    const [r] = (await rates()).rates;
    // 1.08 USD per EUR × 1.002 markup, as the sandbox's table gives for the same rate.
    expect(r).toMatchObject({ exchangeRate: "1.08216", receivingAmount: 9_196n });
    expect(r!.updatedAt).toBeDefined();
    const { quote: q } = await quote();
    expect(q).toMatchObject({ exchangeRate: "1.08216", totalReceivingAmount: 9_196n });
  });

  it("refuses a rate older than the limit with its source and age, and prices again once a fresh one arrives", async () => {
    h.clock.advance(96 * 3600_000); // the rate was set 2026-11-27T14:00Z; now it is 98.5 h old
    const err = await expectPublicError(rates(), "UNAVAILABLE", "RATES_UNAVAILABLE");
    expect(err.details).toMatchObject({ currency: "EUR", source: "feed", asOf: "2026-11-27T14:00:00.000Z", maxAgeSeconds: 345_600 });
    await expectPublicError(quote(), "UNAVAILABLE", "RATES_UNAVAILABLE");
    file = ecbDaily([{ time: "2026-12-01", rates: { USD: "1.1000" } }]);
    await pull();
    expect((await rates()).rates[0]!.exchangeRate).toBe("1.1022");
  });
});
