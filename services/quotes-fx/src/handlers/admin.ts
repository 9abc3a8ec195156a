import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, errors, type Clock } from "@corridor/kit";
import type { QuotesFxAdminService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_admin_service_pb.js";
import { parseFeed } from "../clients/feed-rate-source.js";
import type { ProductionRateStore, StoredRate } from "../domain/production-rates.js";

/**
 * QuotesFxAdminService: the operator's production rates (docs/fx.md). A push is the common feed
 * shape, checked whole by the feed's own parser before anything is recorded; the gateway routes
 * none of it.
 */
export function createAdminHandler(deps: { store: ProductionRateStore; clock: Clock; maxAgeMs: number }): ServiceImpl<typeof QuotesFxAdminService> {
  const view = (rows: StoredRate[]) => {
    const now = deps.clock.now().getTime();
    return rows.map((r) => ({ currency: r.currency, usdValue: r.usd_value, source: r.source, asOf: timestampFromDate(r.as_of), fresh: now - r.as_of.getTime() <= deps.maxAgeMs }));
  };
  return {
    async pushRates(req) {
      const now = deps.clock.now();
      const asOf = req.asOf ? timestampDate(req.asOf) : now;
      if (asOf.getTime() > now.getTime() + 5 * 60_000) throw errors.invalidInput([{ field: "asOf", reason: "is in the future" }]);
      if (Object.keys(req.rates).length === 0) throw errors.invalidInput([{ field: "rates", reason: "must name at least one currency" }]);
      let table;
      try {
        table = parseFeed({ base: req.base, rates: req.rates, timestamp: Math.floor(asOf.getTime() / 1000) }, now);
      } catch (err) {
        // The feed's parser speaks of a feed that is down (503); a push with a bad rate is the operator's input.
        if (err instanceof AppError && err.code === "RATES_UNAVAILABLE") throw errors.invalidInput([{ field: "rates", reason: err.message.replace("The exchange-rate feed", "the push") }]);
        throw err;
      }
      const changed = await deps.store.record(
        [...table.usdValue].filter(([c]) => c !== "USD").map(([currency, v]) => ({ currency, usd_value: v.toString(), source: "operator", as_of: asOf })),
        now,
      );
      return { changed, rates: view(await deps.store.all()) };
    },
    async listRates() {
      return { rates: view(await deps.store.all()) };
    },
  };
}
