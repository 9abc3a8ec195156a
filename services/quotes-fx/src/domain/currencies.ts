import { allCurrencies as registry, findCurrency as registered } from "@corridor/kit";

/** A currency or asset as the public API shows it (spec: Currency object). */
export interface Currency {
  code: string;
  name: string;
  symbol: string;
  /** Digits of the minor unit: an amount of 1 is 10^-decimals of one major unit. */
  decimals: number;
}

/** Every currency quotes-fx can price: the shared registry of @corridor/kit. */
export function findCurrency(code: string): Currency | undefined {
  return registered(code);
}

export function allCurrencies(): readonly Currency[] {
  return registry();
}
