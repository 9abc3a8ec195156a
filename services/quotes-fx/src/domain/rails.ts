/**
 * The rail a payout in each currency goes by, as GET /exchange-rates names it
 * (`destinationPaymentRail`): the instant or standard domestic rail of the currency's bank
 * accounts, and for the crypto assets the network Corridor's wallets live on (Spark). The sandbox
 * simulates every rail alike; the name tells an integrator which one a real connector uses.
 */
const PAYOUT_RAILS: Readonly<Record<string, string>> = {
  USD: "ACH",
  EUR: "SEPA_INSTANT",
  GBP: "FASTER_PAYMENTS",
  MXN: "SPEI",
  BRL: "PIX",
  AED: "BANK_TRANSFER",
  INR: "UPI",
  CAD: "BANK_TRANSFER",
  NGN: "BANK_TRANSFER",
  PHP: "INSTAPAY",
  JPY: "BANK_TRANSFER",
  BTC: "LIGHTNING",
  USDC: "SPARK",
  USDT: "SPARK",
};

/** The payout rail of a currency; BANK_TRANSFER for one without a rail of its own. */
export function payoutRailOf(currency: string): string {
  return PAYOUT_RAILS[currency] ?? "BANK_TRANSFER";
}
