import { randomBytes } from "node:crypto";
import { sandboxSparkAddress } from "@corridor/kit";
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
 * reference in the memo, crypto to a per-account Spark address derived from the reference. A
 * standing account instruction carries no `invoice`: a Lightning invoice is for one payment of one
 * amount and expires (quote instructions carry one).
 */
export function fundingInstructions(opts: { currency: string; reference: string; isPlatformAccount: boolean }): Record<string, unknown>[] {
  if (isCrypto(opts.currency)) {
    return [
      {
        accountOrWalletInfo: {
          accountType: "SPARK_WALLET",
          assetType: opts.currency === "BTC" ? "BTC" : opts.currency,
          // A well-formed Spark (regtest) address of this account, derived from its reference;
          // nobody holds its key (sandbox deposits are simulated: POST /sandbox/internal-accounts/{id}/fund).
          address: sandboxSparkAddress(opts.reference),
        },
        instructionsNotes: `Send ${opts.currency} on Spark to this address; it is this account's own address (sandbox: not spendable, simulate deposits with the sandbox fund endpoint).`,
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
