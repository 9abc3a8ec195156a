export { Iso20022Error } from "./iso20022/errors.js";
export { decimalFromMinorUnits, minorDigits, minorUnitsFromDecimal } from "./iso20022/amounts.js";
export { READ_VERSIONS, identifyMessage, requireMessage, type MessageId, type ReadMessage } from "./iso20022/messages.js";
export { sepaId, sepaText } from "./iso20022/text.js";
export { PAIN_001_NAMESPACE, writeCreditTransferFile, type SepaCreditTransfer, type SepaCreditTransferFile, type SepaParty } from "./iso20022/pain001.js";
export { readPaymentStatusReport, type PaymentInfoStatus, type PaymentStatusReport, type StatusReason, type TransactionStatus } from "./iso20022/pain002.js";
export { readNotification, readStatement, type AccountReport, type Balance, type BankToCustomerDocument, type Direction, type Entry, type EntryDetail, type Party } from "./iso20022/camt.js";
