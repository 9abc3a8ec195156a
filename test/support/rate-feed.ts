import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An exchange-rate feed for end-to-end tests: the European Central Bank's daily reference-rate
 * file (`eurofxref-daily.xml`: units of each currency per euro), served on loopback HTTP. Its day
 * is yesterday (UTC), so the rates (dated 14:00 UTC of their day, as the ECB publishes them) are
 * never in the future and well inside quotes-fx's default age limit. quotes-fx pulls it when
 * pointed at it with CORRIDOR_FX_RATE_FEED_URL and CORRIDOR_FX_RATE_FEED_FORMAT=ecb-xml.
 */
export interface RateFeed {
  url: string;
  /** How many times the file was fetched. */
  fetches: () => number;
  close(): Promise<void>;
}

export function ecbDailyXml(day: string, rates: Record<string, string>): string {
  const cubes = Object.entries(rates)
    .map(([c, r]) => `      <Cube currency='${c}' rate='${r}'/>`)
    .join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
  <gesmes:subject>Reference rates</gesmes:subject>
  <gesmes:Sender>
    <gesmes:name>European Central Bank</gesmes:name>
  </gesmes:Sender>
  <Cube>
    <Cube time='${day}'>
${cubes}
    </Cube>
  </Cube>
</gesmes:Envelope>`;
}

/** The rates the e2e systems are priced with: 1.08 USD per euro (so 1 USD = 0.925925… EUR). */
export const E2E_ECB_RATES = { USD: "1.0800", GBP: "0.8300", MXN: "19.5000" };

export async function startRateFeed(rates: Record<string, string> = E2E_ECB_RATES): Promise<RateFeed> {
  let fetches = 0;
  const server: Server = createServer((req, res) => {
    if (req.url !== "/stats/eurofxref/eurofxref-daily.xml") return void res.writeHead(404).end();
    fetches++;
    const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    res.writeHead(200, { "content-type": "text/xml" }).end(ecbDailyXml(day, rates));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/stats/eurofxref/eurofxref-daily.xml`,
    fetches: () => fetches,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
