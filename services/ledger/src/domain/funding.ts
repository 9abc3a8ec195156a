import { randomBytes } from "node:crypto";
import { sandboxSparkAddress, sandboxSparkInvoice } from "@corridor/kit";
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

/** The operator's bank account production platforms are paid into, in one currency (LEDGER_FUNDING_BANK_ACCOUNTS). */
export interface FundingBank {
  currency: string;
  bankName: string;
  accountNumber?: string;
  routingNumber?: string;
  iban?: string;
  bic?: string;
}

/** The sandbox bank that "holds" every sandbox fiat deposit. */
export const SANDBOX_BANK = { bankName: "Corridor Sandbox Bank", accountNumber: "000123456789", routingNumber: "021000021" };

/**
 * How to pay into an internal account: fiat through the pooled bank account with the account's
 * reference in the memo, crypto to a per-account Spark address derived from the reference, or by
 * paying the account's Spark invoice (spec: a SPARK_WALLET item carries `invoice`): an amountless,
 * non-expiring Spark invoice to the same identity key with the reference as its memo (kit
 * sandboxSparkInvoice; docs/ledger "Funding instructions").
 */
export function fundingInstructions(opts: { currency: string; reference: string; isPlatformAccount: boolean; bank?: FundingBank; production?: boolean }): Record<string, unknown>[] {
  // A production account is never told to pay into the sandbox's made-up bank account or Spark
  // address (real money would be lost): without the operator's bank for its currency
  // (LEDGER_FUNDING_BANK_ACCOUNTS) it has no funding instructions, and crypto has no real rail yet.
  if (opts.production && (isCrypto(opts.currency) || !opts.bank)) return [];
  if (isCrypto(opts.currency)) {
    return [sparkFundingInstruction(opts)];
  }
  const bank = opts.bank;
  if (bank?.iban) {
    return [
      {
        accountOrWalletInfo: {
          accountType: "EUR_ACCOUNT",
          paymentRails: ["SEPA", "SEPA_INSTANT"],
          iban: bank.iban,
          ...(bank.bic ? { swiftCode: bank.bic } : {}),
          bankName: bank.bankName,
          reference: opts.reference,
        },
        instructionsNotes: `Put the reference ${opts.reference} in the remittance information so the deposit reaches this ${opts.currency} account.`,
        isPlatformAccount: opts.isPlatformAccount,
      },
    ];
  }
  if (bank?.accountNumber && bank.routingNumber) {
    return [
      {
        accountOrWalletInfo: {
          accountType: "USD_ACCOUNT",
          paymentRails: ["ACH", "WIRE"],
          accountNumber: bank.accountNumber,
          routingNumber: bank.routingNumber,
          bankName: bank.bankName,
          reference: opts.reference,
        },
        instructionsNotes: `Put the reference ${opts.reference} in the memo (ACH: the individual identification number or the addenda) so the deposit reaches this ${opts.currency} account.`,
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

/** The SPARK_WALLET funding instruction of a crypto internal account (also what the backfill migrations write). */
export function sparkFundingInstruction(opts: { currency: string; reference: string; isPlatformAccount: boolean }): Record<string, unknown> {
  const assetType = opts.currency === "BTC" ? "BTC" : opts.currency;
  return {
    accountOrWalletInfo: {
      accountType: "SPARK_WALLET",
      assetType,
      // A well-formed Spark (regtest) address of this account, derived from its reference;
      // nobody holds its key (sandbox deposits are simulated: POST /sandbox/internal-accounts/{id}/fund).
      address: sandboxSparkAddress(opts.reference),
      // The account's Spark invoice: same key, no amount (the payer chooses it), the reference as memo.
      invoice: sandboxSparkInvoice(opts.reference, { assetType, memo: opts.reference }),
    },
    instructionsNotes: `Send ${opts.currency} on Spark to this address, or pay the invoice (any amount); both are this account's own (sandbox: not spendable, simulate deposits with the sandbox fund endpoint).`,
    isPlatformAccount: opts.isPlatformAccount,
  };
}
