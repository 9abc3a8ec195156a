import { z } from "@corridor/kit";
import { Decimal, dec } from "./decimal.js";
import type { FeeSchedule } from "./pricing.js";

/**
 * Where a pair's fee parameters come from. Rules are keyed "default", "<SEND>:*", "*:<RECV>" and
 * "<SEND>:<RECV>"; for a pair, those four are merged in that order, field by field, so the most
 * specific rule wins. Fixed fees are minor units (serviceApiFixedFee of the sending currency,
 * counterpartyFixedFee of the receiving one); rates and multipliers are decimal strings.
 */
export interface FeeRule {
  serviceApiMultiplier?: string;
  counterpartyMultiplier?: string;
  serviceApiFixedFee?: number;
  serviceApiVariableFeeRate?: string;
  counterpartyFixedFee?: number;
}
export type FeeRules = Record<string, FeeRule>;

/**
 * Built-in rules, overridable with CORRIDOR_QUOTE_FEES: a 0.2% service markup on the market rate,
 * a 0.1% variable fee, no counterparty markup, and fixed fees only where the currency makes a
 * flat fee meaningful (0.10 in the major fiat currencies; counterparty 0.25 for euro and pound
 * payouts, 5.00 for peso payouts).
 */
export const DEFAULT_FEE_RULES: FeeRules = {
  default: { serviceApiMultiplier: "1.002", counterpartyMultiplier: "1", serviceApiFixedFee: 0, serviceApiVariableFeeRate: "0.001", counterpartyFixedFee: 0 },
  "USD:*": { serviceApiFixedFee: 10 },
  "EUR:*": { serviceApiFixedFee: 10 },
  "GBP:*": { serviceApiFixedFee: 10 },
  "*:EUR": { counterpartyFixedFee: 25 },
  "*:GBP": { counterpartyFixedFee: 25 },
  "*:MXN": { counterpartyFixedFee: 500 },
};

const decimalString = z.string().regex(/^\d+(\.\d+)?$/, "a non-negative decimal string such as \"1.002\"");
const feeRuleSchema = z
  .object({
    serviceApiMultiplier: decimalString.optional(),
    counterpartyMultiplier: decimalString.optional(),
    serviceApiFixedFee: z.number().int().min(0).max(1_000_000_000).optional(),
    serviceApiVariableFeeRate: decimalString.refine((v) => new Decimal(v).lt("0.5"), "must be below 0.5").optional(),
    counterpartyFixedFee: z.number().int().min(0).max(1_000_000_000).optional(),
  })
  .strict();
export const feeRulesSchema = z.record(z.string().regex(/^(default|[A-Z]{3,5}:\*|\*:[A-Z]{3,5}|[A-Z]{3,5}:[A-Z]{3,5})$/), feeRuleSchema);

/**
 * The operator's rules for one platform, kept by the service (data/platform-fees.ts). They are
 * merged over the deployment's rules the same way the deployment's are over the built-in ones.
 */
export interface PlatformFeeStore {
  get(platformId: string): Promise<FeeRules | undefined>;
  set(platformId: string, rules: FeeRules, now: Date): Promise<void>;
  /** Removes the platform's rules; false when it had none. */
  clear(platformId: string): Promise<boolean>;
}

/**
 * The schedule of one pair: per key from least to most specific, the built-in rule, then the
 * deployment's, then the platform's. Specificity beats origin: a configured "default" does not
 * undo a built-in "*:EUR", and a platform's "default" does not undo the deployment's "USD:EUR";
 * an operator who means a pair sets that pair's key.
 */
export function feeScheduleFor(rules: FeeRules, sendingCode: string, receivingCode: string, platformRules: FeeRules = {}): FeeSchedule {
  const merged: FeeRule = {};
  for (const key of ["default", `${sendingCode}:*`, `*:${receivingCode}`, `${sendingCode}:${receivingCode}`]) {
    Object.assign(merged, DEFAULT_FEE_RULES[key] ?? {}, rules[key] ?? {}, platformRules[key] ?? {});
  }
  return {
    serviceApiMultiplier: dec(merged.serviceApiMultiplier ?? "1"),
    counterpartyMultiplier: dec(merged.counterpartyMultiplier ?? "1"),
    serviceApiFixedFee: BigInt(merged.serviceApiFixedFee ?? 0),
    serviceApiVariableFeeRate: dec(merged.serviceApiVariableFeeRate ?? "0"),
    counterpartyFixedFee: BigInt(merged.counterpartyFixedFee ?? 0),
  };
}
