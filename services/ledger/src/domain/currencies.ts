/** What the ledger knows about a currency: display data and whether it is a crypto asset. */
export interface CurrencyInfo {
  code: string;
  name: string;
  symbol: string;
  decimals: number;
  crypto: boolean;
}

const KNOWN: CurrencyInfo[] = [
  { code: "USD", name: "US Dollar", symbol: "$", decimals: 2, crypto: false },
  { code: "EUR", name: "Euro", symbol: "€", decimals: 2, crypto: false },
  { code: "GBP", name: "Pound Sterling", symbol: "£", decimals: 2, crypto: false },
  { code: "MXN", name: "Mexican Peso", symbol: "$", decimals: 2, crypto: false },
  { code: "BRL", name: "Brazilian Real", symbol: "R$", decimals: 2, crypto: false },
  { code: "AED", name: "UAE Dirham", symbol: "د.إ", decimals: 2, crypto: false },
  { code: "CAD", name: "Canadian Dollar", symbol: "$", decimals: 2, crypto: false },
  { code: "INR", name: "Indian Rupee", symbol: "₹", decimals: 2, crypto: false },
  { code: "NGN", name: "Nigerian Naira", symbol: "₦", decimals: 2, crypto: false },
  { code: "PHP", name: "Philippine Peso", symbol: "₱", decimals: 2, crypto: false },
  { code: "JPY", name: "Japanese Yen", symbol: "¥", decimals: 0, crypto: false },
  { code: "USDC", name: "USD Coin", symbol: "USDC", decimals: 6, crypto: true },
  { code: "USDT", name: "Tether USD", symbol: "USDT", decimals: 6, crypto: true },
  { code: "BTC", name: "Bitcoin", symbol: "₿", decimals: 8, crypto: true },
];
const BY_CODE = new Map(KNOWN.map((c) => [c.code, c]));

/** Known currencies by code; an unknown ISO-looking code still gets a neutral description. */
export function currencyInfo(code: string): CurrencyInfo {
  return BY_CODE.get(code) ?? { code, name: code, symbol: code, decimals: 2, crypto: false };
}

export const isCrypto = (code: string): boolean => currencyInfo(code).crypto;

/** The stablecoin of customers' crypto holdings and embedded wallets. */
export const WALLET_CURRENCY = "USDC";
