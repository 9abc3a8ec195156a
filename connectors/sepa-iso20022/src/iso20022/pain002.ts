import { requireMessage } from "./messages.js";
import { children, parseDocument, required, text, texts, type Node } from "./xml.js";

/** Why the bank gave a status: an ISO external code (`AC01`) or a proprietary one, and its words. */
export interface StatusReason {
  code?: string;
  proprietary?: string;
  additionalInfo: string[];
}

/** One transaction's status: ACCP, ACSC, ACSP, ACTC, ACWC, PDNG, RJCT, … */
export interface TransactionStatus {
  originalInstructionId?: string;
  originalEndToEndId?: string;
  status?: string;
  reasons: StatusReason[];
}

export interface PaymentInfoStatus {
  originalPaymentInfoId: string;
  /** A status for the whole payment information block, when the bank gives one. */
  status?: string;
  reasons: StatusReason[];
  transactions: TransactionStatus[];
}

/** A pain.002 customer payment status report. */
export interface PaymentStatusReport {
  message: "pain.002";
  version: string;
  messageId: string;
  createdAt: string;
  originalMessageId: string;
  originalMessageName: string;
  /** A status for the whole original message, when the bank gives one. */
  groupStatus?: string;
  groupReasons: StatusReason[];
  payments: PaymentInfoStatus[];
}

function reasons(node: Node | undefined): StatusReason[] {
  return children(node, "StsRsnInf").map((r) => ({
    code: text(r, "Rsn", "Cd"),
    proprietary: text(r, "Rsn", "Prtry"),
    additionalInfo: texts(r, "AddtlInf"),
  }));
}

/** Reads a pain.002 (versions 03 — the Swiss variant too —, 10 and 11); refuses anything else. */
export function readPaymentStatusReport(xml: string): PaymentStatusReport {
  const id = requireMessage(xml, "pain.002");
  const report = parseDocument(xml, "CstmrPmtStsRpt");
  const group = children(report, "OrgnlGrpInfAndSts")[0];
  return {
    message: "pain.002",
    version: id.version,
    messageId: required(report, "the report's message id", "GrpHdr", "MsgId"),
    createdAt: required(report, "the report's creation time", "GrpHdr", "CreDtTm"),
    originalMessageId: required(group, "the original message id", "OrgnlMsgId"),
    originalMessageName: required(group, "the original message name", "OrgnlMsgNmId"),
    groupStatus: text(group, "GrpSts"),
    groupReasons: reasons(group),
    payments: children(report, "OrgnlPmtInfAndSts").map((p) => ({
      originalPaymentInfoId: required(p, "the original payment information id", "OrgnlPmtInfId"),
      status: text(p, "PmtInfSts"),
      reasons: reasons(p),
      transactions: children(p, "TxInfAndSts").map((t) => ({
        originalInstructionId: text(t, "OrgnlInstrId"),
        originalEndToEndId: text(t, "OrgnlEndToEndId"),
        status: text(t, "TxSts"),
        reasons: reasons(t),
      })),
    })),
  };
}
