import { DOMImplementation, DOMParser, XMLSerializer, type Document, type Element } from "@xmldom/xmldom";

// The bank's side of the SEPA connector's files, for tests. It is deliberately a different
// implementation from Corridor's: it reads pain.001 with a W3C DOM (xmldom), and writes
// pain.002, camt.054 and camt.053 by building DOM trees, so a file of ours passes only if another
// implementation accepts it, and our readers are fed files written by someone else. Its outputs are
// validated against the official XSDs in the tests.

const PAIN_001 = "urn:iso:std:iso:20022:tech:xsd:pain.001.001.10";
const PAIN_002 = "urn:iso:std:iso:20022:tech:xsd:pain.002.001.11";
const CAMT_053 = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08";
const CAMT_054 = "urn:iso:std:iso:20022:tech:xsd:camt.054.001.08";

export interface ReceivedTransfer {
  instructionId: string;
  endToEndId: string;
  /** As written in the file, e.g. "12.34". */
  amount: string;
  currency: string;
  creditorName: string;
  creditorIban: string;
  creditorBic?: string;
  remittance?: string;
}

export interface ReceivedFile {
  messageId: string;
  numberOfTransactions: number;
  controlSum: string;
  paymentInfoId: string;
  debtorIban: string;
  requestedExecutionDate: string;
  serviceLevel: string;
  localInstrument?: string;
  transfers: ReceivedTransfer[];
}

/** The child elements of `el` in the pain.001 namespace named `name`. */
function kids(el: Element, name: string): Element[] {
  const out: Element[] = [];
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as Element).namespaceURI === PAIN_001 && (n as Element).localName === name) out.push(n as Element);
  }
  return out;
}

/** The text at a path of child elements below `el` ("" when absent), like XPath's string(). */
function at(el: Element | undefined, path: string): string {
  let cur: Element | undefined = el;
  for (const step of path.split("/")) cur = cur ? kids(cur, step)[0] : undefined;
  return cur?.textContent ?? "";
}

/** What the bank reads out of an uploaded pain.001.001.10 (a W3C DOM walk, namespace-aware). */
export function readCreditTransferFile(xml: string): ReceivedFile {
  const doc = new DOMParser().parseFromString(xml, "text/xml");
  const root = doc.documentElement;
  if (!root || root.namespaceURI !== PAIN_001 || root.localName !== "Document") throw new Error(`not a pain.001.001.10 document: ${root?.namespaceURI}`);
  const initiation = kids(root, "CstmrCdtTrfInitn")[0];
  const payment = initiation ? kids(initiation, "PmtInf")[0] : undefined;
  return {
    messageId: at(initiation, "GrpHdr/MsgId"),
    numberOfTransactions: Number(at(initiation, "GrpHdr/NbOfTxs")),
    controlSum: at(initiation, "GrpHdr/CtrlSum"),
    paymentInfoId: at(payment, "PmtInfId"),
    debtorIban: at(payment, "DbtrAcct/Id/IBAN"),
    requestedExecutionDate: at(payment, "ReqdExctnDt/Dt"),
    serviceLevel: at(payment, "PmtTpInf/SvcLvl/Cd"),
    localInstrument: at(payment, "PmtTpInf/LclInstrm/Cd") || undefined,
    transfers: (payment ? kids(payment, "CdtTrfTxInf") : []).map((tx) => {
      const amount = kids(kids(tx, "Amt")[0]!, "InstdAmt")[0];
      return {
        instructionId: at(tx, "PmtId/InstrId"),
        endToEndId: at(tx, "PmtId/EndToEndId"),
        amount: amount?.textContent ?? "",
        currency: amount?.getAttribute("Ccy") ?? "",
        creditorName: at(tx, "Cdtr/Nm"),
        creditorIban: at(tx, "CdtrAcct/Id/IBAN"),
        creditorBic: at(tx, "CdtrAgt/FinInstnId/BICFI") || undefined,
        remittance: at(tx, "RmtInf/Ustrd") || undefined,
      };
    }),
  };
}

/** A tiny DOM builder: `el(parent, "A/B/C", text)` appends the path and sets the last one's text. */
class Builder {
  readonly doc: Document;
  constructor(readonly ns: string, root: string) {
    this.doc = new DOMImplementation().createDocument(ns, "Document", null);
    this.root = this.el(this.doc.documentElement!, root);
  }
  readonly root: Element;
  el(parent: Element, path: string, text?: string, attrs: Record<string, string> = {}): Element {
    let at = parent;
    for (const name of path.split("/")) {
      const next = this.doc.createElementNS(this.ns, name);
      at.appendChild(next);
      at = next;
    }
    for (const [k, v] of Object.entries(attrs)) at.setAttribute(k, v);
    if (text !== undefined) at.appendChild(this.doc.createTextNode(text));
    return at;
  }
  xml(): string {
    return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(this.doc)}`;
  }
}

export interface TransactionVerdict {
  instructionId: string;
  endToEndId: string;
  /** ACSC (settled), ACCP, RJCT, … */
  status: string;
  reason?: string;
}

/** The bank's pain.002.001.11 answer to a file: a group status and one verdict per transaction. */
export function writeStatusReport(o: { messageId: string; createdAt: string; original: ReceivedFile; groupStatus?: string; groupReason?: string; verdicts: TransactionVerdict[] }): string {
  const b = new Builder(PAIN_002, "CstmrPmtStsRpt");
  const header = b.el(b.root, "GrpHdr");
  b.el(header, "MsgId", o.messageId);
  b.el(header, "CreDtTm", o.createdAt);
  const group = b.el(b.root, "OrgnlGrpInfAndSts");
  b.el(group, "OrgnlMsgId", o.original.messageId);
  b.el(group, "OrgnlMsgNmId", "pain.001.001.10");
  if (o.groupStatus) b.el(group, "GrpSts", o.groupStatus);
  if (o.groupReason) b.el(group, "StsRsnInf/Rsn/Cd", o.groupReason);
  if (o.verdicts.length > 0) {
    const payment = b.el(b.root, "OrgnlPmtInfAndSts");
    b.el(payment, "OrgnlPmtInfId", o.original.paymentInfoId);
    for (const v of o.verdicts) {
      const tx = b.el(payment, "TxInfAndSts");
      b.el(tx, "OrgnlInstrId", v.instructionId);
      b.el(tx, "OrgnlEndToEndId", v.endToEndId);
      b.el(tx, "TxSts", v.status);
      if (v.reason) b.el(tx, "StsRsnInf/Rsn/Cd", v.reason);
    }
  }
  return b.xml();
}

export interface BankEntry {
  amount: string;
  direction: "CRDT" | "DBIT";
  bookingDate: string;
  accountServicerReference: string;
  /** PMNT/ICDT/ESCT (our transfer out booked), PMNT/RCDT/ESCT (a credit received), PMNT/ICDT/RRTN (a return). */
  family: string;
  subFamily: string;
  endToEndId?: string;
  instructionId?: string;
  debtor?: { name: string; iban: string };
  creditor?: { name: string; iban: string };
  remittance?: string;
  returnReason?: string;
}

function entries(b: Builder, parent: Element, list: BankEntry[]): void {
  for (const e of list) {
    const n = b.el(parent, "Ntry");
    b.el(n, "Amt", e.amount, { Ccy: "EUR" });
    b.el(n, "CdtDbtInd", e.direction);
    b.el(n, "RvslInd", "false");
    b.el(n, "Sts/Cd", "BOOK");
    b.el(n, "BookgDt/Dt", e.bookingDate);
    b.el(n, "ValDt/Dt", e.bookingDate);
    b.el(n, "AcctSvcrRef", e.accountServicerReference);
    const domain = b.el(n, "BkTxCd/Domn");
    b.el(domain, "Cd", "PMNT");
    const family = b.el(domain, "Fmly");
    b.el(family, "Cd", e.family);
    b.el(family, "SubFmlyCd", e.subFamily);
    const tx = b.el(n, "NtryDtls/TxDtls");
    const refs = b.el(tx, "Refs");
    b.el(refs, "AcctSvcrRef", e.accountServicerReference);
    if (e.instructionId) b.el(refs, "InstrId", e.instructionId);
    b.el(refs, "EndToEndId", e.endToEndId ?? "NOTPROVIDED");
    b.el(tx, "Amt", e.amount, { Ccy: "EUR" });
    b.el(tx, "CdtDbtInd", e.direction);
    if (e.debtor || e.creditor) {
      const parties = b.el(tx, "RltdPties");
      if (e.debtor) {
        b.el(parties, "Dbtr/Pty/Nm", e.debtor.name);
        b.el(parties, "DbtrAcct/Id/IBAN", e.debtor.iban);
      }
      if (e.creditor) {
        b.el(parties, "Cdtr/Pty/Nm", e.creditor.name);
        b.el(parties, "CdtrAcct/Id/IBAN", e.creditor.iban);
      }
    }
    if (e.remittance) b.el(tx, "RmtInf/Ustrd", e.remittance);
    if (e.returnReason) b.el(tx, "RtrInf/Rsn/Cd", e.returnReason);
  }
}

/** A camt.054.001.08 debit/credit notification of the platform's account at the bank. */
export function writeNotification(o: { messageId: string; createdAt: string; iban: string; entries: BankEntry[] }): string {
  const b = new Builder(CAMT_054, "BkToCstmrDbtCdtNtfctn");
  const header = b.el(b.root, "GrpHdr");
  b.el(header, "MsgId", o.messageId);
  b.el(header, "CreDtTm", o.createdAt);
  const n = b.el(b.root, "Ntfctn");
  b.el(n, "Id", `${o.messageId}-1`);
  b.el(n, "Acct/Id/IBAN", o.iban);
  entries(b, n, o.entries);
  return b.xml();
}

/** A camt.053.001.08 end-of-day statement with its opening and closing booked balances. */
export function writeStatement(o: { messageId: string; createdAt: string; iban: string; date: string; opening: string; closing: string; entries: BankEntry[] }): string {
  const b = new Builder(CAMT_053, "BkToCstmrStmt");
  const header = b.el(b.root, "GrpHdr");
  b.el(header, "MsgId", o.messageId);
  b.el(header, "CreDtTm", o.createdAt);
  const s = b.el(b.root, "Stmt");
  b.el(s, "Id", `${o.messageId}-1`);
  b.el(s, "Acct/Id/IBAN", o.iban);
  for (const [type, amount] of [["OPBD", o.opening], ["CLBD", o.closing]] as const) {
    const bal = b.el(s, "Bal");
    b.el(bal, "Tp/CdOrPrtry/Cd", type);
    b.el(bal, "Amt", amount, { Ccy: "EUR" });
    b.el(bal, "CdtDbtInd", "CRDT");
    b.el(bal, "Dt/Dt", o.date);
  }
  entries(b, s, o.entries);
  return b.xml();
}
