import { errors, formatAmount, type FieldError } from "@corridor/kit";
import { findCurrency } from "./currencies.js";
import { ROUND_UP, dec, pow10, toBigInt } from "./decimal.js";
import { CRYPTO_NETWORKS, addressProblem, type CryptoNetwork } from "./addresses.js";
import type { Fx } from "./fx.js";
import type { LedgerPort, PlatformDirectory } from "./ports.js";
import { amountOutOfRange } from "./pricing.js";
import { pairRate } from "./rates.js";

/** A network's fee asset and its smallest unit's digits. */
interface NetworkInfo {
  asset: string;
  decimals: number;
  /** Currencies that can leave on this network. */
  currencies: string[];
  /** Estimated network fee in the asset's smallest unit, for a withdrawal of `amount` (withdrawal minor units). */
  fee(amount: bigint): bigint;
}

/**
 * Static network fee estimates (what a token transfer typically costs, rounded up): EVM chains
 * charge gas for an ERC-20 transfer (65 000 gas at 20 gwei on Ethereum, 0.05 gwei on Base, 50 gwei
 * on Polygon), Solana a signature plus priority fee, Bitcoin a ~140 vB transaction at 10 sat/vB,
 * Lightning a routing fee of 1 sat + 0.05% (rounded up), Spark transfers are free.
 */
export const NETWORKS: Record<CryptoNetwork, NetworkInfo> = {
  ETHEREUM: { asset: "ETH", decimals: 18, currencies: ["USDC", "USDT"], fee: () => 65_000n * 20_000_000_000n },
  BASE: { asset: "ETH", decimals: 18, currencies: ["USDC"], fee: () => 65_000n * 50_000_000n },
  POLYGON: { asset: "POL", decimals: 18, currencies: ["USDC", "USDT"], fee: () => 65_000n * 50_000_000_000n },
  SOLANA: { asset: "SOL", decimals: 9, currencies: ["USDC", "USDT"], fee: () => 10_000n },
  BITCOIN: { asset: "BTC", decimals: 8, currencies: ["BTC"], fee: () => 1_400n },
  LIGHTNING: { asset: "BTC", decimals: 8, currencies: ["BTC"], fee: (amount) => 1n + (amount * 5n + 9_999n) / 10_000n },
  SPARK: { asset: "BTC", decimals: 8, currencies: ["BTC", "USDC"], fee: () => 0n },
};

/** Application fee per withdrawal currency, minor units: none today (spec: "zero if none"). */
const APPLICATION_FEES: Record<string, bigint> = {};

export interface WithdrawalRequest {
  internalAccountId: string;
  currency: string;
  cryptoNetwork: string;
  amount: bigint;
  destinationAddress: string;
}

export interface WithdrawalFeeEstimate {
  networkFee: bigint;
  networkFeeAsset: string;
  applicationFee: bigint;
  totalFee: bigint;
  netAmount: bigint;
}

export function createWithdrawals(deps: { fx: Fx; platforms: PlatformDirectory; ledger: LedgerPort }) {
  return {
    async estimate(platformId: string, req: WithdrawalRequest): Promise<WithdrawalFeeEstimate> {
      const errs: FieldError[] = [];
      const network = (CRYPTO_NETWORKS as readonly string[]).includes(req.cryptoNetwork) ? NETWORKS[req.cryptoNetwork as CryptoNetwork] : undefined;
      if (!network) errs.push({ field: "cryptoNetwork", reason: `must be one of ${CRYPTO_NETWORKS.join(", ")}` });
      const currency = findCurrency(req.currency);
      if (!currency) errs.push({ field: "currency", reason: `unknown currency ${req.currency}` });
      else if (network && !network.currencies.includes(currency.code)) errs.push({ field: "currency", reason: `${currency.code} cannot be withdrawn on ${req.cryptoNetwork}` });
      if (req.amount < 1n) errs.push({ field: "amount", reason: "must be a positive integer" });
      if (errs.length) throw errors.invalidInput(errs);

      const facts = await deps.platforms.facts(platformId);
      const problem = addressProblem(req.cryptoNetwork as CryptoNetwork, req.destinationAddress, facts.environment === "SANDBOX");
      if (problem) throw errors.invalidInput([{ field: "destinationAddress", reason: `${problem} (${req.cryptoNetwork})` }]);
      const account = await deps.ledger.internalAccount(platformId, req.internalAccountId);
      if (!account) throw errors.notFound("InternalAccount", req.internalAccountId);
      if (account.currency !== currency!.code) {
        throw errors.invalidInput([{ field: "currency", reason: `the account holds ${account.currency}, not ${currency!.code}` }]);
      }

      const networkFee = network!.fee(req.amount);
      // networkFee (asset smallest unit) → asset major → withdrawal major → withdrawal minor, rounded up.
      const table = await deps.fx.table(platformId, facts);
      const assetPerCurrency = network!.asset === currency!.code ? dec(1) : pairRate(table, network!.asset, currency!.code);
      const converted = toBigInt(
        dec(networkFee).div(pow10(network!.decimals)).div(assetPerCurrency).times(pow10(currency!.decimals)).toDecimalPlaces(0, ROUND_UP),
      );
      const applicationFee = APPLICATION_FEES[currency!.code] ?? 0n;
      const totalFee = converted + applicationFee;
      if (totalFee >= req.amount) {
        throw amountOutOfRange(`${formatAmount(req.amount, currency!.code)} does not cover the ${formatAmount(totalFee, currency!.code)} of fees`, { field: "amount", totalFee: Number(totalFee) });
      }
      return { networkFee, networkFeeAsset: network!.asset, applicationFee, totalFee, netAmount: req.amount - totalFee };
    },
  };
}
