import { randomBytes } from "node:crypto";
import { isCrypto } from "./currencies.js";

// Base32 without look-alikes: references are read aloud and typed into bank memo fields.
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/** A short random reference (CRD-XXXXXXXXXX), unique enough to be the key of a deposit. */
export function newReference(prefix = "CRD"): string {
  const bytes = randomBytes(10);
  let out = "";
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return `${prefix}-${out}`;
}

/** The sandbox bank that "holds" every sandbox fiat deposit. */
export const SANDBOX_BANK = { bankName: "Corridor Sandbox Bank", accountNumber: "000123456789", routingNumber: "021000021" };

/**
 * How to pay into an internal account: fiat through the pooled bank account with the account's
 * reference in the memo, crypto to a per-account Spark address derived from the reference.
 */
export function fundingInstructions(opts: { currency: string; reference: string; isPlatformAccount: boolean }): Record<string, unknown>[] {
  if (isCrypto(opts.currency)) {
    return [
      {
        accountOrWalletInfo: {
          accountType: "SPARK_WALLET",
          assetType: opts.currency === "BTC" ? "BTC" : opts.currency,
          address: `sp1${opts.reference.toLowerCase().replace(/[^a-z0-9]/g, "").replace(/[bio1]/g, "q")}q${"x".repeat(40)}`.slice(0, 64),
        },
        instructionsNotes: `Send ${opts.currency} on Spark to this address; it is this account's own address.`,
        isPlatformAccount: opts.isPlatformAccount,
      },
    ];
  }
  return [
    {
      accountOrWalletInfo: {
        accountType: "USD_ACCOUNT",
        paymentRails: ["ACH", "WIRE"],
        accountNumber: SANDBOX_BANK.accountNumber,
        routingNumber: SANDBOX_BANK.routingNumber,
        bankName: SANDBOX_BANK.bankName,
        reference: opts.reference,
      },
      instructionsNotes: `Put the reference ${opts.reference} in the memo so the deposit reaches this ${opts.currency} account.`,
      isPlatformAccount: opts.isPlatformAccount,
    },
  ];
}
