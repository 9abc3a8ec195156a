import { minorUnitsFromDecimal } from "./amounts.js";
import { Iso20022Error } from "./errors.js";
import { requireMessage } from "./messages.js";
import { attribute, child, children, parseDocument, required, text, texts, type Node } from "./xml.js";

export type Direction = "CREDIT" | "DEBIT";

export interface Party {
  name?: string;
  iban?: string;
}

/** What one entry is made of: each transaction the bank booked in it. */
export interface EntryDetail {
  amount?: bigint;
  currency?: string;
  direction?: Direction;
  messageId?: string;
  paymentInfoId?: string;
  instructionId?: string;
  endToEndId?: string;
  accountServicerReference?: string;
  debtor: Party;
  creditor: Party;
  /** Remittance information: free text lines, and structured creditor references (RF…, QR, ESR). */
  remittance: { unstructured: string[]; references: string[] };
  /** Present on a returned payment: the ISO return reason (`AC01`, `AM04`, …). */
  returnReason?: { code?: string; proprietary?: string; additionalInfo: string[] };
}

export interface Entry {
  /** The entry's reference, where the bank gives one (NtryRef). */
  reference?: string;
  amount: bigint;
  currency: string;
  direction: Direction;
  /** A reversal of an earlier entry (RvslInd). */
  reversal: boolean;
  /** BOOK, PDNG, INFO… (a code in v08, plain text before). */
  status: string;
  bookingDate?: string;
  valueDate?: string;
  accountServicerReference?: string;
  bankTransactionCode?: { domain?: string; family?: string; subFamily?: string; proprietary?: string };
  details: EntryDetail[];
  additionalInfo?: string;
}

export interface Balance {
  /** OPBD (opening booked), CLBD (closing booked), CLAV, ITBD, … */
  type: string;
  amount: bigint;
  currency: string;
  direction: Direction;
  date?: string;
}

/** One statement (camt.053) or notification (camt.054) of one account. */
export interface AccountReport {
  id: string;
  createdAt?: string;
  fromDateTime?: string;
  toDateTime?: string;
  account: { iban?: string; other?: string; currency?: string; ownerName?: string };
  balances: Balance[];
  entries: Entry[];
}

export interface BankToCustomerDocument {
  message: "camt.053" | "camt.054";
  version: string;
  messageId: string;
  createdAt: string;
  reports: AccountReport[];
}

function direction(value: string | undefined, what: string): Direction {
  if (value === "CRDT") return "CREDIT";
  if (value === "DBIT") return "DEBIT";
  throw new Iso20022Error(`${what} has credit/debit indicator ${JSON.stringify(value)}, not CRDT or DBIT`);
}

function money(node: Node | undefined, what: string): { amount: bigint; currency: string } {
  const value = text(node, "Amt");
  const currency = attribute(node, "Ccy", "Amt");
  if (value === undefined || !currency) throw new Iso20022Error(`${what} has no amount with a currency (Amt Ccy=…)`);
  return { amount: minorUnitsFromDecimal(value, currency), currency };
}

/** A date element: `<Dt>` or `<DtTm>` inside it (DateAndDateTime choice). */
function dateOf(node: Node | undefined, name: string): string | undefined {
  return text(node, name, "Dt") ?? text(node, name, "DtTm");
}

function party(tx: Node, role: "Dbtr" | "Cdtr"): Party {
  const parties = child(tx, "RltdPties");
  // v08 wraps the party in <Pty>; earlier versions do not.
  const p = child(child(parties, role), "Pty") ?? child(parties, role);
  return { name: text(p, "Nm"), iban: text(parties, `${role}Acct`, "Id", "IBAN") };
}

function detail(tx: Node, entryIndex: number): EntryDetail {
  const amt = child(tx, "Amt") ? money(tx, `entry ${entryIndex}'s transaction`) : undefined;
  const remittance = child(tx, "RmtInf");
  const ret = child(tx, "RtrInf");
  return {
    amount: amt?.amount,
    currency: amt?.currency,
    direction: text(tx, "CdtDbtInd") ? direction(text(tx, "CdtDbtInd"), `entry ${entryIndex}'s transaction`) : undefined,
    messageId: text(tx, "Refs", "MsgId"),
    paymentInfoId: text(tx, "Refs", "PmtInfId"),
    instructionId: text(tx, "Refs", "InstrId"),
    endToEndId: text(tx, "Refs", "EndToEndId"),
    accountServicerReference: text(tx, "Refs", "AcctSvcrRef"),
    debtor: party(tx, "Dbtr"),
    creditor: party(tx, "Cdtr"),
    remittance: {
      unstructured: texts(remittance, "Ustrd"),
      references: children(remittance, "Strd").flatMap((s) => children(s, "CdtrRefInf").map((r) => text(r, "Ref")).filter((r): r is string => !!r)),
    },
    returnReason: ret ? { code: text(ret, "Rsn", "Cd"), proprietary: text(ret, "Rsn", "Prtry"), additionalInfo: texts(ret, "AddtlInf") } : undefined,
  };
}

function entry(n: Node, index: number): Entry {
  const { amount, currency } = money(n, `entry ${index}`);
  const status = text(n, "Sts", "Cd") ?? text(n, "Sts");
  if (!status) throw new Iso20022Error(`entry ${index} has no status (Sts)`);
  const domain = child(child(n, "BkTxCd"), "Domn");
  const bankTransactionCode = child(n, "BkTxCd")
    ? { domain: text(domain, "Cd"), family: text(domain, "Fmly", "Cd"), subFamily: text(domain, "Fmly", "SubFmlyCd"), proprietary: text(n, "BkTxCd", "Prtry", "Cd") }
    : undefined;
  return {
    reference: text(n, "NtryRef"),
    amount,
    currency,
    direction: direction(text(n, "CdtDbtInd"), `entry ${index}`),
    reversal: text(n, "RvslInd") === "true",
    status,
    bookingDate: dateOf(n, "BookgDt"),
    valueDate: dateOf(n, "ValDt"),
    accountServicerReference: text(n, "AcctSvcrRef"),
    bankTransactionCode,
    details: children(n, "NtryDtls").flatMap((d) => children(d, "TxDtls").map((tx) => detail(tx, index))),
    additionalInfo: text(n, "AddtlNtryInf"),
  };
}

function report(r: Node, kind: string): AccountReport {
  const acct = child(r, "Acct");
  return {
    id: required(r, `the ${kind}'s id`, "Id"),
    createdAt: text(r, "CreDtTm"),
    fromDateTime: text(r, "FrToDt", "FrDtTm"),
    toDateTime: text(r, "FrToDt", "ToDtTm"),
    account: { iban: text(acct, "Id", "IBAN"), other: text(acct, "Id", "Othr", "Id"), currency: text(acct, "Ccy"), ownerName: text(acct, "Ownr", "Nm") },
    balances: children(r, "Bal").map((b, i) => {
      const { amount, currency } = money(b, `balance ${i + 1}`);
      const type = text(b, "Tp", "CdOrPrtry", "Cd") ?? text(b, "Tp", "CdOrPrtry", "Prtry");
      if (!type) throw new Iso20022Error(`balance ${i + 1} has no type`);
      return { type, amount, currency, direction: direction(text(b, "CdtDbtInd"), `balance ${i + 1}`), date: dateOf(b, "Dt") };
    }),
    entries: children(r, "Ntry").map((n, i) => entry(n, i + 1)),
  };
}

function read(xml: string, message: "camt.053" | "camt.054", root: string, item: string): BankToCustomerDocument {
  const id = requireMessage(xml, message);
  const doc = parseDocument(xml, root);
  return {
    message,
    version: id.version,
    messageId: required(doc, "the message id", "GrpHdr", "MsgId"),
    createdAt: required(doc, "the creation time", "GrpHdr", "CreDtTm"),
    reports: children(doc, item).map((r) => report(r, item === "Stmt" ? "statement" : "notification")),
  };
}

/** Reads a camt.053 bank-to-customer statement (versions 02, 04, 08); refuses anything else. */
export function readStatement(xml: string): BankToCustomerDocument {
  return read(xml, "camt.053", "BkToCstmrStmt", "Stmt");
}

/** Reads a camt.054 debit/credit notification (versions 02, 04, 08); refuses anything else. */
export function readNotification(xml: string): BankToCustomerDocument {
  return read(xml, "camt.054", "BkToCstmrDbtCdtNtfctn", "Ntfctn");
}
