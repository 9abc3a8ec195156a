import { findCurrency, type CurrencyInfo } from "@corridor/kit";

export type { CurrencyInfo };

/**
 * Known currencies come from the shared registry (@corridor/kit); an account opened before a code
 * was refused by the platform configuration (or read from an old event) still gets a neutral description.
 */
export function currencyInfo(code: string): CurrencyInfo {
  return findCurrency(code) ?? { code, name: code, symbol: code, decimals: 2, crypto: false };
}

export const isCrypto = (code: string): boolean => currencyInfo(code).crypto;

/** The stablecoin of customers' crypto holdings and embedded wallets. */
export const WALLET_CURRENCY = "USDC";
