import { createServer } from "node:net";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { ManualClock, appErrorInterceptor, openDatabase, type DatabaseHandle } from "@corridor/kit";
import { expectRefusal } from "@corridor/kit/testing";
import { QuotesFxService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import { afterAll, beforeAll, describe, it } from "vitest";
import { quoteLedgerPort } from "../src/clients/quote-ledger.js";
import { walletSignaturePort } from "../src/clients/wallet-auth.js";
import { buildQuotesFx } from "../src/server.js";
import { usdOnly } from "./harness.js";

/** A local port nothing listens on: connecting to it is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("quotes-fx with its database unreachable", () => {
  let db: DatabaseHandle;
  beforeAll(async () => {
    db = await openDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:${await closedPort()}/corridor`, poolSize: 1 });
  });
  afterAll(async () => db.close());

  it("answers UNAVAILABLE SERVICE_UNAVAILABLE (the gateway's 503) for a refused connection (ECONNREFUSED), not an unknown error (500)", async () => {
    // Other services are never reached: the request fails at its first query.
    const nowhere = createRouterTransport(() => {});
    const built = buildQuotesFx({
      db,
      clock: new ManualClock("2025-10-13T12:00:00.000Z"),
      env: {},
      platforms: { facts: async () => usdOnly() },
      ledger: { internalAccount: async () => undefined, externalAccount: async () => undefined },
      quoteLedger: quoteLedgerPort(() => nowhere),
      signer: walletSignaturePort(() => nowhere),
    });
    const client = createClient(QuotesFxService, createRouterTransport(built.routes, { router: { interceptors: [appErrorInterceptor] } }));
    await expectRefusal(client.getQuote({ platformId: "Platform:down", quoteId: "Quote:0190b3c4-0000-7000-8000-000000000000" }), "UNAVAILABLE", "SERVICE_UNAVAILABLE");
    await expectRefusal(client.listQuotes({ platformId: "Platform:down", page: { limit: 10 } }), "UNAVAILABLE", "SERVICE_UNAVAILABLE");
  });
});
