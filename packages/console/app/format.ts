// Amounts and dates as a person reads them. The API speaks integers in minor units; the console
// shows major units with the currency's own number of decimals (USD 2, JPY 0, BTC 8, USDC 6) and
// reads what a person types back into minor units exactly, without floating point.

export interface CurrencyLike {
  code: string;
  decimals: number;
  symbol?: string;
}

const known = new Map<string, number>();

/** Remembers a currency the API described (accounts and amounts carry {code, decimals}). */
export function rememberCurrency(c: CurrencyLike | undefined): void {
  if (c && typeof c.code === "string" && Number.isInteger(c.decimals)) known.set(c.code, c.decimals);
}

/**
 * The decimals of a currency known only by its code: one the API described, else the ISO 4217
 * minor unit the runtime knows, else 2.
 */
export function decimalsOf(code: string): number {
  const seen = known.get(code);
  if (seen !== undefined) return seen;
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** 123456 with 2 decimals → "1,234.56"; exact for any integer (number or bigint). */
export function formatMinor(amount: number | bigint, decimals: number): string {
  const value = typeof amount === "bigint" ? amount : BigInt(Math.trunc(amount));
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = decimals > 0 ? `.${digits.slice(digits.length - decimals)}` : "";
  return `${negative ? "-" : ""}${groupThousands(whole)}${fraction}`;
}

/** "1,234.56 USD" from minor units and a currency (a code or the API's Currency object). */
export function formatMoney(amount: number | bigint | undefined | null, currency: string | CurrencyLike | undefined): string {
  if (amount === undefined || amount === null) return "—";
  if (currency === undefined) return String(amount);
  const code = typeof currency === "string" ? currency : currency.code;
  const decimals = typeof currency === "string" ? decimalsOf(currency) : currency.decimals;
  return `${formatMinor(amount, decimals)} ${code}`;
}

/**
 * What a person typed ("1,234.5", "10") as minor units, or a reason it cannot be one: at most
 * `decimals` digits after the point, no sign, no exponent.
 */
export function parseMajor(text: string, decimals: number): { ok: true; minor: bigint } | { ok: false; reason: string } {
  const cleaned = text.trim().replace(/[,_\s]/g, "");
  if (cleaned === "") return { ok: false, reason: "Enter an amount." };
  const m = /^(\d*)(?:\.(\d*))?$/.exec(cleaned);
  if (!m || (m[1] === "" && (m[2] ?? "") === "")) return { ok: false, reason: `"${text}" is not an amount: use digits and at most one decimal point.` };
  const whole = m[1] || "0";
  const fraction = m[2] ?? "";
  if (fraction.length > decimals) {
    return { ok: false, reason: decimals === 0 ? "This currency has no decimals." : `At most ${decimals} digits after the decimal point.` };
  }
  return { ok: true, minor: BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, "0") || "0") };
}

/** An ISO timestamp as "2026-01-31 14:05:09" in the browser's time zone, "—" when absent. */
export function formatTime(iso: string | undefined | null): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "Customer:0199…a1b2" → a short form for tables (the full id stays in the title). */
export function shortId(id: string | undefined | null): string {
  if (!id) return "—";
  const colon = id.indexOf(":");
  const rest = colon >= 0 ? id.slice(colon + 1) : id;
  return rest.length > 13 ? `${id.slice(0, colon + 1)}…${rest.slice(-8)}` : id;
}

/** A ratio used as a percentage of a limit (0–100, clamped), for usage bars. */
export function percentOf(used: number, limit: number | undefined): number | undefined {
  if (!limit || limit <= 0) return undefined;
  return Math.max(0, Math.min(100, Math.round((used / limit) * 100)));
}
