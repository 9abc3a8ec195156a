import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, errors, type Clock } from "@corridor/kit";
import type { QuotesFxAdminService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_admin_service_pb.js";
import { parseFeed } from "../clients/feed-rate-source.js";
import { feeRulesSchema, feeScheduleFor, type FeeRules, type PlatformFeeStore } from "../domain/fees.js";
import type { PlatformDirectory } from "../domain/ports.js";
import type { ProductionRateStore, StoredRate } from "../domain/production-rates.js";

/**
 * QuotesFxAdminService: the operator's production rates (docs/fx.md). A push is the common feed
 * shape, checked whole by the feed's own parser before anything is recorded; the gateway routes
 * none of it.
 */
export function createAdminHandler(deps: {
  store: ProductionRateStore;
  clock: Clock;
  maxAgeMs: number;
  /** The operator's fee rules per platform, and the deployment's they are merged over. */
  fees: { store: PlatformFeeStore; deploymentRules: FeeRules; platforms: PlatformDirectory };
}): ServiceImpl<typeof QuotesFxAdminService> {
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
    async setPlatformFees(req) {
      await requirePlatform(req.platformId);
      const rules = parseRules(req.rulesJson);
      await deps.fees.store.set(req.platformId, rules, deps.clock.now());
      return { fees: { platformId: req.platformId, rulesJson: JSON.stringify(rules), updatedAt: timestampFromDate(deps.clock.now()) } };
    },
    async getPlatformFees(req) {
      await requirePlatform(req.platformId);
      const send = req.sendingCurrency.toUpperCase();
      const receive = req.receivingCurrency.toUpperCase();
      if (Boolean(send) !== Boolean(receive)) throw errors.invalidInput([{ field: send ? "receivingCurrency" : "sendingCurrency", reason: "a pair needs both currencies" }]);
      const own = await deps.fees.store.get(req.platformId);
      const s = send ? feeScheduleFor(deps.fees.deploymentRules, send, receive, own) : undefined;
      return {
        fees: {
          platformId: req.platformId,
          rulesJson: JSON.stringify(own ?? {}),
          schedule: s && {
            serviceApiMultiplier: s.serviceApiMultiplier.toString(),
            counterpartyMultiplier: s.counterpartyMultiplier.toString(),
            serviceApiFixedFee: s.serviceApiFixedFee,
            serviceApiVariableFeeRate: s.serviceApiVariableFeeRate.toString(),
            counterpartyFixedFee: s.counterpartyFixedFee,
          },
        },
      };
    },
    async clearPlatformFees(req) {
      await requirePlatform(req.platformId);
      return { cleared: await deps.fees.store.clear(req.platformId) };
    },
  };

  /** The platform must exist (auth-sessions answers NOT_FOUND otherwise); rules are never kept for a typo. */
  async function requirePlatform(platformId: string): Promise<void> {
    if (!/^Platform:[A-Za-z0-9._-]{1,100}$/.test(platformId)) throw errors.invalidInput([{ field: "platformId", reason: "must be a platform id (Platform:...)" }]);
    await deps.fees.platforms.facts(platformId);
  }
}

/** The operator's rules: JSON in CORRIDOR_QUOTE_FEES's shape, checked whole by the same schema. */
function parseRules(json: string): FeeRules {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw errors.invalidInput([{ field: "rules", reason: "must be a JSON object" }]);
  }
  const parsed = feeRulesSchema.safeParse(value);
  if (!parsed.success) {
    throw errors.invalidInput(parsed.error.issues.slice(0, 20).map((i) => ({ field: ["rules", ...i.path].join("."), reason: i.message })));
  }
  return parsed.data;
}
