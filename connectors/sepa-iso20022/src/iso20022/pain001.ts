import { create } from "xmlbuilder2";
import type { XMLBuilder } from "xmlbuilder2/lib/interfaces.js";
import { decimalFromMinorUnits } from "./amounts.js";
import { Iso20022Error } from "./errors.js";
import { sepaId, sepaText } from "./text.js";

/** The pain.001 version this connector writes (the 2019 rulebook's, which EPC banks take). */
export const PAIN_001_NAMESPACE = "urn:iso:std:iso:20022:tech:xsd:pain.001.001.10";

export interface SepaParty {
  name: string;
  iban: string;
  /** The bank's BIC; optional in SEPA (the IBAN routes), written as NOTPROVIDED without it. */
  bic?: string;
}

export interface SepaCreditTransfer {
  /** Our id of the instruction, echoed by the bank in pain.002 (OrgnlInstrId). */
  instructionId: string;
  /** Travels to the creditor's bank and back in returns (EndToEndId). */
  endToEndId: string;
  /** Minor units (cents). */
  amount: bigint;
  creditor: SepaParty;
  /** Unstructured remittance text, up to 140 characters after SEPA folding. */
  remittance?: string;
}

export interface SepaCreditTransferFile {
  /** Unique per file: the bank refuses a second file with the same MsgId (its duplicate check). */
  messageId: string;
  createdAt: Date;
  /** Who sends the file (the operator's company), and its id at the bank if it has one. */
  initiatingParty: { name: string; id?: string };
  /** One payment-information block: the account all transfers are debited from. */
  paymentInfoId: string;
  debtor: SepaParty;
  /** YYYY-MM-DD, the day the bank executes the transfers. */
  requestedExecutionDate: string;
  /** SCT Inst (local instrument INST) instead of a standard SEPA credit transfer. */
  instant?: boolean;
  transfers: readonly SepaCreditTransfer[];
}

const IBAN = /^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{1,30}$/;
const BIC = /^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/;
/** EPC: one SEPA credit transfer is at most 999,999,999.99 EUR. */
const MAX_SEPA_CENTS = 99_999_999_999n;

function checkParty(p: SepaParty, what: string): void {
  if (!IBAN.test(p.iban)) throw new Iso20022Error(`${what}'s IBAN ${JSON.stringify(p.iban)} is not an IBAN`);
  if (p.bic !== undefined && !BIC.test(p.bic)) throw new Iso20022Error(`${what}'s BIC ${JSON.stringify(p.bic)} is not a BIC`);
  if (!sepaText(p.name, 70)) throw new Iso20022Error(`${what} has no name in the SEPA character set`);
}

function agent(parent: XMLBuilder, element: string, bic: string | undefined): void {
  const fin = parent.ele(element).ele("FinInstnId");
  if (bic) fin.ele("BICFI").txt(bic);
  else fin.ele("Othr").ele("Id").txt("NOTPROVIDED");
}

/**
 * A SEPA credit transfer initiation (pain.001.001.10), one payment-information block, every
 * transfer in EUR: the group's and the block's transaction count and control sum are computed
 * here, free text is folded to the SEPA character set, identifiers are checked (never rewritten).
 * Element order follows the schema; tests validate the output against the official XSD.
 */
export function writeCreditTransferFile(file: SepaCreditTransferFile): string {
  if (file.transfers.length === 0) throw new Iso20022Error("a pain.001 file needs at least one transfer");
  checkParty(file.debtor, "the debtor");
  const ids = new Set<string>();
  let total = 0n;
  for (const t of file.transfers) {
    sepaId(t.instructionId, "instruction id");
    sepaId(t.endToEndId, "end-to-end id");
    if (ids.has(t.endToEndId)) throw new Iso20022Error(`end-to-end id ${t.endToEndId} appears twice in one file`);
    ids.add(t.endToEndId);
    if (t.amount < 1n || t.amount > MAX_SEPA_CENTS) throw new Iso20022Error(`transfer ${t.instructionId}: ${t.amount} cents is outside SEPA's 0.01–999,999,999.99 EUR`);
    checkParty(t.creditor, `transfer ${t.instructionId}'s creditor`);
    total += t.amount;
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(file.requestedExecutionDate)) throw new Iso20022Error("the requested execution date is not YYYY-MM-DD");

  const count = String(file.transfers.length);
  const sum = decimalFromMinorUnits(total, "EUR");
  const doc = create({ version: "1.0", encoding: "UTF-8" }).ele(PAIN_001_NAMESPACE, "Document");
  const root = doc.ele("CstmrCdtTrfInitn");

  const header = root.ele("GrpHdr");
  header.ele("MsgId").txt(sepaId(file.messageId, "message id"));
  // ISODateTime without fractions, in UTC.
  header.ele("CreDtTm").txt(file.createdAt.toISOString().replace(/\.\d{3}Z$/, "Z"));
  header.ele("NbOfTxs").txt(count);
  header.ele("CtrlSum").txt(sum);
  const initiator = header.ele("InitgPty");
  initiator.ele("Nm").txt(sepaText(file.initiatingParty.name, 70) || "Corridor");
  if (file.initiatingParty.id) initiator.ele("Id").ele("OrgId").ele("Othr").ele("Id").txt(sepaText(file.initiatingParty.id, 35));

  const payment = root.ele("PmtInf");
  payment.ele("PmtInfId").txt(sepaId(file.paymentInfoId, "payment information id"));
  payment.ele("PmtMtd").txt("TRF");
  payment.ele("BtchBookg").txt("false"); // one booking per transfer: each is reconciled on its own
  payment.ele("NbOfTxs").txt(count);
  payment.ele("CtrlSum").txt(sum);
  const type = payment.ele("PmtTpInf");
  type.ele("SvcLvl").ele("Cd").txt("SEPA");
  if (file.instant) type.ele("LclInstrm").ele("Cd").txt("INST");
  payment.ele("ReqdExctnDt").ele("Dt").txt(file.requestedExecutionDate);
  payment.ele("Dbtr").ele("Nm").txt(sepaText(file.debtor.name, 70));
  payment.ele("DbtrAcct").ele("Id").ele("IBAN").txt(file.debtor.iban);
  agent(payment, "DbtrAgt", file.debtor.bic);
  payment.ele("ChrgBr").txt("SLEV");

  for (const t of file.transfers) {
    const tx = payment.ele("CdtTrfTxInf");
    const pmtId = tx.ele("PmtId");
    pmtId.ele("InstrId").txt(t.instructionId);
    pmtId.ele("EndToEndId").txt(t.endToEndId);
    tx.ele("Amt").ele("InstdAmt", { Ccy: "EUR" }).txt(decimalFromMinorUnits(t.amount, "EUR"));
    if (t.creditor.bic) agent(tx, "CdtrAgt", t.creditor.bic);
    tx.ele("Cdtr").ele("Nm").txt(sepaText(t.creditor.name, 70));
    tx.ele("CdtrAcct").ele("Id").ele("IBAN").txt(t.creditor.iban);
    const remittance = t.remittance === undefined ? "" : sepaText(t.remittance, 140);
    if (remittance) tx.ele("RmtInf").ele("Ustrd").txt(remittance);
  }
  return doc.end({ prettyPrint: true });
}
