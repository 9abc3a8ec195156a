// Public JSON of a resource, shared by the gateway (its GET answers) and notifications (a
// webhook's data is the resource as its GET returns it, decisions §8). Pure: proto in, JSON out.
import type { Invitation } from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { emptyToUndefined, isoFromTimestamp, numberFromInt64, optionalIso } from "./time.js";

/** Display data of the currency objects in answers; unknown codes get a neutral description. */
const CURRENCIES: Record<string, { name: string; symbol: string; decimals: number }> = {
  USD: { name: "US Dollar", symbol: "$", decimals: 2 },
  EUR: { name: "Euro", symbol: "€", decimals: 2 },
  GBP: { name: "Pound Sterling", symbol: "£", decimals: 2 },
  MXN: { name: "Mexican Peso", symbol: "$", decimals: 2 },
  BRL: { name: "Brazilian Real", symbol: "R$", decimals: 2 },
  CAD: { name: "Canadian Dollar", symbol: "$", decimals: 2 },
  INR: { name: "Indian Rupee", symbol: "₹", decimals: 2 },
  PHP: { name: "Philippine Peso", symbol: "₱", decimals: 2 },
  NGN: { name: "Nigerian Naira", symbol: "₦", decimals: 2 },
  JPY: { name: "Japanese Yen", symbol: "¥", decimals: 0 },
  USDC: { name: "USD Coin", symbol: "USDC", decimals: 6 },
  BTC: { name: "Bitcoin", symbol: "₿", decimals: 8 },
};

export function currencyObject(code: string) {
  return { code, ...(CURRENCIES[code] ?? { name: code, symbol: code, decimals: 2 }) };
}

export function invitationToJson(i: Invitation | undefined) {
  if (!i) throw new Error("service answered without an invitation");
  return {
    code: i.code,
    createdAt: isoFromTimestamp(i.createdAt),
    url: i.url,
    inviterUma: i.inviterUma,
    status: i.status,
    claimedAt: optionalIso(i.claimedAt),
    expiresAt: optionalIso(i.expiresAt),
    inviteeUma: emptyToUndefined(i.inviteeUma),
    firstName: emptyToUndefined(i.firstName),
    amountToSend: i.amountToSend === undefined ? undefined : { amount: numberFromInt64(i.amountToSend), currency: currencyObject(i.amountCurrency) },
  };
}
