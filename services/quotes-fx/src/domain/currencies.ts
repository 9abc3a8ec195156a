/** A currency or asset as the public API shows it (spec: Currency object). */
export interface Currency {
  code: string;
  name: string;
  symbol: string;
  /** Digits of the minor unit: an amount of 1 is 10^-decimals of one major unit. */
  decimals: number;
}

/**
 * The registry: every currency quotes-fx can price. BTC amounts are in satoshis (8 decimals),
 * USDC/USDT in micro-units (6 decimals, as on chain). Same data as the ledger's table, so an
 * account's currency and a quote's currency always describe a code the same way.
 */
const REGISTRY: readonly Currency[] = [
  { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 },
  { code: "EUR", name: "Euro", symbol: "€", decimals: 2 },
  { code: "GBP", name: "Pound Sterling", symbol: "£", decimals: 2 },
  { code: "MXN", name: "Mexican Peso", symbol: "$", decimals: 2 },
  { code: "BRL", name: "Brazilian Real", symbol: "R$", decimals: 2 },
  { code: "AED", name: "UAE Dirham", symbol: "د.إ", decimals: 2 },
  { code: "INR", name: "Indian Rupee", symbol: "₹", decimals: 2 },
  { code: "CAD", name: "Canadian Dollar", symbol: "$", decimals: 2 },
  { code: "NGN", name: "Nigerian Naira", symbol: "₦", decimals: 2 },
  { code: "PHP", name: "Philippine Peso", symbol: "₱", decimals: 2 },
  { code: "JPY", name: "Japanese Yen", symbol: "¥", decimals: 0 },
  { code: "BTC", name: "Bitcoin", symbol: "₿", decimals: 8 },
  { code: "USDC", name: "USD Coin", symbol: "USDC", decimals: 6 },
  { code: "USDT", name: "Tether USD", symbol: "USDT", decimals: 6 },
];
const BY_CODE = new Map(REGISTRY.map((c) => [c.code, c]));

export function findCurrency(code: string): Currency | undefined {
  return BY_CODE.get(code);
}

export function allCurrencies(): readonly Currency[] {
  return REGISTRY;
}
