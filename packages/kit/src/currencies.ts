/** A currency or asset as the public API shows it (spec: Currency object), plus whether it is crypto. */
export interface CurrencyInfo {
  code: string;
  name: string;
  symbol: string;
  /** Digits of the minor unit: an amount of 1 is 10^-decimals of one major unit. */
  decimals: number;
  /** Crypto assets are held in INTERNAL_CRYPTO accounts and embedded wallets. */
  crypto: boolean;
}

/**
 * The one registry of currencies Corridor transacts in, shared by every service so that an
 * account, a quote and a platform's configuration describe a code the same way. BTC amounts are in
 * satoshis (8 decimals), USDC/USDT in micro-units (6 decimals, as on chain).
 */
const REGISTRY: readonly CurrencyInfo[] = [
  { code: "USD", name: "US Dollar", symbol: "$", decimals: 2, crypto: false },
  { code: "EUR", name: "Euro", symbol: "€", decimals: 2, crypto: false },
  { code: "GBP", name: "Pound Sterling", symbol: "£", decimals: 2, crypto: false },
  { code: "MXN", name: "Mexican Peso", symbol: "$", decimals: 2, crypto: false },
  { code: "BRL", name: "Brazilian Real", symbol: "R$", decimals: 2, crypto: false },
  { code: "AED", name: "UAE Dirham", symbol: "د.إ", decimals: 2, crypto: false },
  { code: "INR", name: "Indian Rupee", symbol: "₹", decimals: 2, crypto: false },
  { code: "CAD", name: "Canadian Dollar", symbol: "$", decimals: 2, crypto: false },
  { code: "NGN", name: "Nigerian Naira", symbol: "₦", decimals: 2, crypto: false },
  { code: "PHP", name: "Philippine Peso", symbol: "₱", decimals: 2, crypto: false },
  { code: "JPY", name: "Japanese Yen", symbol: "¥", decimals: 0, crypto: false },
  { code: "BTC", name: "Bitcoin", symbol: "₿", decimals: 8, crypto: true },
  { code: "USDC", name: "USD Coin", symbol: "USDC", decimals: 6, crypto: true },
  { code: "USDT", name: "Tether USD", symbol: "USDT", decimals: 6, crypto: true },
];
const BY_CODE = new Map(REGISTRY.map((c) => [c.code, c]));

/** The registered currency with this code, or undefined. */
export function findCurrency(code: string): CurrencyInfo | undefined {
  return BY_CODE.get(code);
}

/** Every registered currency, in a stable order. */
export function allCurrencies(): readonly CurrencyInfo[] {
  return REGISTRY;
}

/**
 * An amount in minor units as people read it, for messages: major units with the currency's
 * decimals and its code (`10000` USD → `100.00 USD`, `500` JPY → `500 JPY`, `1` BTC →
 * `0.00000001 BTC`, `-250` USD → `-2.50 USD`). Exact (bigint arithmetic, no floats). An unknown
 * code keeps the minor units and says so. Machine-readable amounts (details, bodies) stay integers.
 */
export function formatAmount(amount: bigint | number, code: string): string {
  const minor = typeof amount === "bigint" ? amount : BigInt(Math.trunc(amount));
  const currency = findCurrency(code);
  if (!currency) return `${minor} ${code} minor units`;
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(currency.decimals + 1, "0");
  const whole = currency.decimals === 0 ? digits : `${digits.slice(0, -currency.decimals)}.${digits.slice(-currency.decimals)}`;
  return `${negative ? "-" : ""}${whole} ${currency.code}`;
}
