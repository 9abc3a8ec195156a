import type { RailInstruction } from "@corridor/connector";
import { sepaText } from "../iso20022/text.js";

/** A transfer the connector will file, or why it cannot be sent at all. */
export type Admission =
  | { ok: true; endToEndId: string; creditorName: string; creditorIban: string; creditorBic?: string; remittance: string }
  | { ok: false; reason: string };

/** EPC: one SEPA credit transfer is at most 999,999,999.99 EUR. */
const MAX_SEPA_CENTS = 99_999_999_999n;
const IBAN = /^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{1,30}$/;
const BIC = /^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/;

/**
 * The end-to-end id of a transaction in SEPA's 35 characters: the transaction id's UUID without
 * its kind and dashes (32 hexadecimal characters). It travels to the creditor's bank and back in
 * status reports, notifications and returns.
 */
export const endToEndIdOf = (transactionId: string) => transactionId.replace(/^Transaction:/, "").replace(/-/g, "");

const str = (v: unknown) => (typeof v === "string" ? v : undefined);

/**
 * What the connector can send: a payout in EUR to an EUR_ACCOUNT with an IBAN and a name. A pull
 * (SEPA direct debit) is not offered by this connector: the operator binds only payouts to it, and
 * an instruction that is not one is rejected at once rather than sent.
 */
export function admit(i: RailInstruction): Admission {
  if (i.kind === "RETURN") return admitReturn(i);
  if (i.direction !== "PAYOUT") return { ok: false, reason: "SEPA_DIRECT_DEBIT_NOT_SUPPORTED" };
  if (i.currency !== "EUR") return { ok: false, reason: "CURRENCY_NOT_SUPPORTED" };
  if (i.amount < 1n || i.amount > MAX_SEPA_CENTS) return { ok: false, reason: "AMOUNT_OUT_OF_RANGE" };
  const info = i.accountInfo;
  const iban = str(info.iban)?.replace(/\s+/g, "").toUpperCase();
  if (info.accountType !== "EUR_ACCOUNT" || !iban || !IBAN.test(iban)) return { ok: false, reason: "INVALID_BANK_ACCOUNT" };
  const beneficiary = (info.beneficiary ?? {}) as Record<string, unknown>;
  const name = sepaText(str(beneficiary.fullName) ?? str(beneficiary.legalName) ?? str(info.accountHolderName) ?? "", 70);
  if (!name) return { ok: false, reason: "MISSING_BENEFICIARY_NAME" };
  const bic = str(info.swiftCode) ?? str(info.bic);
  return {
    ok: true,
    endToEndId: endToEndIdOf(i.transactionId),
    creditorName: name,
    creditorIban: iban,
    creditorBic: bic && BIC.test(bic) ? bic : undefined,
    remittance: sepaText(i.reference, 140),
  };
}

/**
 * A RETURN instruction (rail contract 1.3): a credit this connector reported goes back as a credit
 * transfer to the debtor's IBAN and name its camt entry carried, with remittance `RETURN ` and the
 * credit's reference (its end-to-end id first, then its remittance). Filed, reported and completed
 * as any payout.
 */
function admitReturn(i: RailInstruction): Admission {
  const rc = i.returnedCredit;
  if (!rc) return { ok: false, reason: "RETURN_WITHOUT_CREDIT" };
  if (i.currency !== "EUR") return { ok: false, reason: "CURRENCY_NOT_SUPPORTED" };
  if (i.amount < 1n || i.amount > MAX_SEPA_CENTS) return { ok: false, reason: "AMOUNT_OUT_OF_RANGE" };
  const iban = rc.senderAccount.replace(/\s+/g, "").toUpperCase();
  if (!IBAN.test(iban)) return { ok: false, reason: "SENDER_IBAN_UNKNOWN" };
  const name = sepaText(rc.senderName, 70);
  if (!name) return { ok: false, reason: "SENDER_NAME_UNKNOWN" };
  return {
    ok: true,
    endToEndId: endToEndIdOf(i.transactionId),
    creditorName: name,
    creditorIban: iban,
    remittance: sepaText(`RETURN ${rc.reference.trim() || rc.bankEntryId}`, 140),
  };
}
