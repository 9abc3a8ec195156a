// NACHA code tables: return reason codes (R-codes), notification-of-change codes (C-codes),
// transaction codes and standard entry class codes, and what each means to Corridor.

/** Why a payment failed, as the connector reports it on a FAILED or RETURNED outcome. */
export type AchFailureReason =
  | "INSUFFICIENT_FUNDS"
  | "ACCOUNT_CLOSED"
  | "ACCOUNT_NOT_FOUND"
  | "INVALID_ACCOUNT_NUMBER"
  | "INVALID_ROUTING_NUMBER"
  | "NOT_AUTHORIZED"
  | "PAYMENT_STOPPED"
  | "ACCOUNT_FROZEN"
  | "ACCOUNT_HOLDER_DECEASED"
  | "REFUSED_BY_RECEIVER"
  | "NON_TRANSACTION_ACCOUNT"
  | "ORIGINATION_ERROR"
  | "RETURN_DISHONORED"
  | "OTHER";

export interface ReturnCodeInfo {
  readonly description: string;
  readonly reason: AchFailureReason;
  /** Dishonored (R61–R69) and contested dishonored (R70–R77) returns use the type 99 addenda differently. */
  readonly kind: "return" | "dishonored" | "contested";
}

const r = (description: string, reason: AchFailureReason, kind: ReturnCodeInfo["kind"] = "return"): ReturnCodeInfo => ({ description, reason, kind });

/** The return reason codes the NACHA Operating Rules assign. A code outside this table is refused
 * unless the operator lists it as one of the bank's custom codes (ACH_CUSTOM_RETURN_CODES). */
export const RETURN_CODES: Readonly<Record<string, ReturnCodeInfo>> = {
  R01: r("Insufficient funds", "INSUFFICIENT_FUNDS"),
  R02: r("Account closed", "ACCOUNT_CLOSED"),
  R03: r("No account / unable to locate account", "ACCOUNT_NOT_FOUND"),
  R04: r("Invalid account number structure", "INVALID_ACCOUNT_NUMBER"),
  R05: r("Unauthorized debit to consumer account using corporate SEC code", "NOT_AUTHORIZED"),
  R06: r("Returned per ODFI's request", "OTHER"),
  R07: r("Authorization revoked by customer", "NOT_AUTHORIZED"),
  R08: r("Payment stopped", "PAYMENT_STOPPED"),
  R09: r("Uncollected funds", "INSUFFICIENT_FUNDS"),
  R10: r("Customer advises not authorized, improper, ineligible or part of an incomplete transaction", "NOT_AUTHORIZED"),
  R11: r("Customer advises entry not in accordance with the terms of the authorization", "NOT_AUTHORIZED"),
  R12: r("Account sold to another DFI", "ACCOUNT_NOT_FOUND"),
  R13: r("Invalid ACH routing number", "INVALID_ROUTING_NUMBER"),
  R14: r("Representative payee deceased or unable to continue in that capacity", "ACCOUNT_HOLDER_DECEASED"),
  R15: r("Beneficiary or account holder deceased", "ACCOUNT_HOLDER_DECEASED"),
  R16: r("Account frozen / entry returned per OFAC instruction", "ACCOUNT_FROZEN"),
  R17: r("File record edit criteria / entry with invalid account number initiated under questionable circumstances", "ORIGINATION_ERROR"),
  R18: r("Improper effective entry date", "ORIGINATION_ERROR"),
  R19: r("Amount field error", "ORIGINATION_ERROR"),
  R20: r("Non-transaction account", "NON_TRANSACTION_ACCOUNT"),
  R21: r("Invalid company identification", "ORIGINATION_ERROR"),
  R22: r("Invalid individual ID number", "ORIGINATION_ERROR"),
  R23: r("Credit entry refused by receiver", "REFUSED_BY_RECEIVER"),
  R24: r("Duplicate entry", "ORIGINATION_ERROR"),
  R25: r("Addenda error", "ORIGINATION_ERROR"),
  R26: r("Mandatory field error", "ORIGINATION_ERROR"),
  R27: r("Trace number error", "ORIGINATION_ERROR"),
  R28: r("Routing number check digit error", "INVALID_ROUTING_NUMBER"),
  R29: r("Corporate customer advises not authorized", "NOT_AUTHORIZED"),
  R30: r("RDFI not participant in check truncation program", "OTHER"),
  R31: r("Permissible return entry (CCD and CTX only)", "OTHER"),
  R32: r("RDFI non-settlement", "OTHER"),
  R33: r("Return of XCK entry", "OTHER"),
  R34: r("Limited participation DFI", "OTHER"),
  R35: r("Return of improper debit entry", "ORIGINATION_ERROR"),
  R36: r("Return of improper credit entry", "ORIGINATION_ERROR"),
  R37: r("Source document presented for payment", "OTHER"),
  R38: r("Stop payment on source document", "PAYMENT_STOPPED"),
  R39: r("Improper source document / source document presented for payment", "OTHER"),
  R40: r("Return of ENR entry by federal government agency", "OTHER"),
  R41: r("Invalid transaction code (ENR)", "ORIGINATION_ERROR"),
  R42: r("Routing number / check digit error (ENR)", "INVALID_ROUTING_NUMBER"),
  R43: r("Invalid DFI account number (ENR)", "INVALID_ACCOUNT_NUMBER"),
  R44: r("Invalid individual ID number / identification number (ENR)", "ORIGINATION_ERROR"),
  R45: r("Invalid individual name / company name (ENR)", "ORIGINATION_ERROR"),
  R46: r("Invalid representative payee indicator (ENR)", "ORIGINATION_ERROR"),
  R47: r("Duplicate enrollment (ENR)", "ORIGINATION_ERROR"),
  R50: r("State law affecting RCK acceptance", "OTHER"),
  R51: r("Item related to RCK entry is ineligible or RCK entry is improper", "NOT_AUTHORIZED"),
  R52: r("Stop payment on item related to RCK entry", "PAYMENT_STOPPED"),
  R53: r("Item and RCK entry presented for payment", "OTHER"),
  R61: r("Misrouted return", "RETURN_DISHONORED", "dishonored"),
  R62: r("Return of erroneous or reversing debit", "RETURN_DISHONORED", "dishonored"),
  R67: r("Duplicate return", "RETURN_DISHONORED", "dishonored"),
  R68: r("Untimely return", "RETURN_DISHONORED", "dishonored"),
  R69: r("Field error(s)", "RETURN_DISHONORED", "dishonored"),
  R70: r("Permissible return entry not accepted / return not requested by ODFI", "RETURN_DISHONORED", "dishonored"),
  R71: r("Misrouted dishonored return", "OTHER", "contested"),
  R72: r("Untimely dishonored return", "OTHER", "contested"),
  R73: r("Timely original return", "OTHER", "contested"),
  R74: r("Corrected return", "OTHER", "contested"),
  R75: r("Return not a duplicate", "OTHER", "contested"),
  R76: r("No errors found", "OTHER", "contested"),
  R77: r("Non-acceptance of R62 dishonored return", "OTHER", "contested"),
  R80: r("IAT entry coding error", "ORIGINATION_ERROR"),
  R81: r("Non-participant in IAT program", "OTHER"),
  R82: r("Invalid foreign receiving DFI identification", "INVALID_ROUTING_NUMBER"),
  R83: r("Foreign receiving DFI unable to settle", "OTHER"),
  R84: r("Entry not processed by gateway", "OTHER"),
  R85: r("Incorrectly coded outbound international payment", "ORIGINATION_ERROR"),
};

/** What a notification of change corrects: which fields of the external account change. */
export type ChangeField = "accountNumber" | "routingNumber" | "accountType" | "name" | "individualId" | "transactionCode";

export interface ChangeCodeInfo {
  readonly description: string;
  /** The fields the corrected data replaces, in the order they appear in it. Empty for a refused NOC. */
  readonly fields: readonly ChangeField[];
  readonly refused: boolean;
}

const c = (description: string, fields: readonly ChangeField[], refused = false): ChangeCodeInfo => ({ description, fields, refused });

/** Notification-of-change codes (C01–C14) and refused-NOC codes (C61–C69). */
export const CHANGE_CODES: Readonly<Record<string, ChangeCodeInfo>> = {
  C01: c("Incorrect DFI account number", ["accountNumber"]),
  C02: c("Incorrect routing number", ["routingNumber"]),
  C03: c("Incorrect routing number and incorrect DFI account number", ["routingNumber", "accountNumber"]),
  C04: c("Incorrect individual name / receiving company name", ["name"]),
  C05: c("Incorrect transaction code", ["transactionCode"]),
  C06: c("Incorrect DFI account number and incorrect transaction code", ["accountNumber", "transactionCode"]),
  C07: c("Incorrect routing number, incorrect DFI account number and incorrect transaction code", ["routingNumber", "accountNumber", "transactionCode"]),
  C08: c("Incorrect receiving DFI identification (IAT only)", ["routingNumber"]),
  C09: c("Incorrect individual identification number", ["individualId"]),
  C10: c("Incorrect company name", ["name"]),
  C11: c("Incorrect company identification", ["individualId"]),
  C12: c("Incorrect company name and company identification", ["name", "individualId"]),
  C13: c("Addenda format error", []),
  C14: c("Incorrect SEC code for outbound international payment", []),
  C61: c("Misrouted notification of change", [], true),
  C62: c("Incorrect trace number", [], true),
  C63: c("Incorrect company identification number", [], true),
  C64: c("Incorrect individual identification number / identification number", [], true),
  C65: c("Incorrectly formatted corrected data", [], true),
  C66: c("Incorrect discretionary data", [], true),
  C67: c("Routing number not from original entry detail record", [], true),
  C68: c("DFI account number not from original entry detail record", [], true),
  C69: c("Incorrect transaction code", [], true),
};

export type AccountType = "CHECKING" | "SAVINGS" | "GENERAL_LEDGER" | "LOAN";

export interface TransactionCodeInfo {
  readonly accountType: AccountType;
  readonly direction: "credit" | "debit";
  /** live: moves money; prenote: zero-dollar test entry; return: automated return or NOC of an entry. */
  readonly use: "live" | "prenote" | "return" | "zero";
}

const t = (accountType: AccountType, direction: "credit" | "debit", use: TransactionCodeInfo["use"]): TransactionCodeInfo => ({ accountType, direction, use });

export const TRANSACTION_CODES: Readonly<Record<string, TransactionCodeInfo>> = {
  "21": t("CHECKING", "credit", "return"), "22": t("CHECKING", "credit", "live"), "23": t("CHECKING", "credit", "prenote"), "24": t("CHECKING", "credit", "zero"),
  "26": t("CHECKING", "debit", "return"), "27": t("CHECKING", "debit", "live"), "28": t("CHECKING", "debit", "prenote"), "29": t("CHECKING", "debit", "zero"),
  "31": t("SAVINGS", "credit", "return"), "32": t("SAVINGS", "credit", "live"), "33": t("SAVINGS", "credit", "prenote"), "34": t("SAVINGS", "credit", "zero"),
  "36": t("SAVINGS", "debit", "return"), "37": t("SAVINGS", "debit", "live"), "38": t("SAVINGS", "debit", "prenote"), "39": t("SAVINGS", "debit", "zero"),
  "41": t("GENERAL_LEDGER", "credit", "return"), "42": t("GENERAL_LEDGER", "credit", "live"), "43": t("GENERAL_LEDGER", "credit", "prenote"), "44": t("GENERAL_LEDGER", "credit", "zero"),
  "46": t("GENERAL_LEDGER", "debit", "return"), "47": t("GENERAL_LEDGER", "debit", "live"), "48": t("GENERAL_LEDGER", "debit", "prenote"), "49": t("GENERAL_LEDGER", "debit", "zero"),
  "51": t("LOAN", "credit", "return"), "52": t("LOAN", "credit", "live"), "53": t("LOAN", "credit", "prenote"), "54": t("LOAN", "credit", "zero"),
  "55": t("LOAN", "debit", "live"), "56": t("LOAN", "debit", "return"),
};

/** Standard entry class codes the reader accepts in a bank's file. */
export const READABLE_SEC_CODES = new Set([
  "ARC", "BOC", "CCD", "IAT", "CIE", "COR", "CTX", "DNE", "ENR", "MTE", "POP", "POS", "PPD", "RCK", "SHR", "TEL", "TRC", "TRX", "WEB", "XCK", "ACK", "ATX", "ADV",
]);

/** Service class codes: 200 mixed debits and credits, 220 credits only, 225 debits only, 280 automated accounting advices. */
export const SERVICE_CLASS_CODES = new Set(["200", "220", "225", "280"]);
