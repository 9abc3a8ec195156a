import { Type } from "typebox";
import { Iso8601, ListEnvelope, Ref, pagingQuery } from "./common.js";

const amountOf = (description: string) =>
  Type.Object({ amount: Type.Integer({ description: "Minor units." }), currency: Ref("Currency", "The currency.") }, { description });

export const TransactionStatusSchema = Type.Enum(["CREATED", "PENDING_AUTHORIZATION", "PENDING", "PROCESSING", "COMPLETED", "REJECTED", "FAILED", "REFUNDED", "EXPIRED"], {
  description:
    "Lifecycle status. PENDING_AUTHORIZATION: the transaction of a quote that waits for strong customer authentication (docs/sca.md); it becomes PENDING when the quote is authorized (POST /quotes/{id}/authorize), EXPIRED when the quote expires, FAILED when it is cancelled, and holds nothing meanwhile.",
});

export const TransactionSchema = Type.Object(
  {
    id: Type.String({ description: "Transaction:<uuidv7>." }),
    status: TransactionStatusSchema,
    type: Type.Enum(["INCOMING", "OUTGOING"], { description: "INCOMING (money paid to the customer) or OUTGOING (money the customer pays)." }),
    direction: Type.Enum(["CREDIT", "DEBIT"], {
      description:
        "Whether the transaction credits (funds in) or debits (funds out) the customer's account, from the money's movement rather than from type: CREDIT when money enters the internal account (transfer-in, incoming UMA payment, including one paid onward to a default deposit account), DEBIT when it leaves it (transfer-out, quote paid from an internal account) or is paid out on the customer's behalf (real-time-funded quote).",
      examples: ["DEBIT"],
    }),
    source: Type.Object(
      {
        sourceType: Type.String({ description: "ACCOUNT, REALTIME_FUNDING for a quote paid by its payment instructions, or UMA_ADDRESS for an incoming UMA payment." }),
        accountId: Type.Optional(Type.String({ description: "Source account (absent for REALTIME_FUNDING and UMA_ADDRESS)." })),
        umaAddress: Type.Optional(Type.String({ description: "UMA_ADDRESS: the sender's address (also in counterpartyInformation.senderUmaAddress)." })),
        currency: Type.String({ description: "Its currency (the sending currency)." }),
      },
      { description: "Where the money comes from." },
    ),
    destination: Type.Object(
      {
        destinationType: Type.String({ description: "ACCOUNT or UMA_ADDRESS." }),
        accountId: Type.Optional(Type.String({ description: "Destination account (absent for UMA_ADDRESS)." })),
        umaAddress: Type.Optional(Type.String({ description: "UMA_ADDRESS: the receiver's address." })),
        paymentRail: Type.Optional(Type.String({ description: "Quotes: the payment rail (for example ACH)." })),
        currency: Type.String({ description: "Its currency (the receiving currency)." }),
      },
      { description: "Where the money goes." },
    ),
    customerId: Type.Optional(Type.String({ description: "The customer (sender of outgoing, recipient of incoming)." })),
    platformCustomerId: Type.Optional(Type.String({ description: "The platform's id of that customer." })),
    receivedAmount: amountOf("What the destination receives."),
    sentAmount: Type.Optional(amountOf("OUTGOING: what left the source.")),
    exchangeRate: Type.Optional(Type.Number({ description: "OUTGOING: sending units per receiving unit (1 for same-currency transfers)." })),
    fees: Type.Optional(Type.Integer({ description: "OUTGOING: fees in sending minor units." })),
    quoteId: Type.Optional(Type.String({ description: "OUTGOING: the quote the transaction was created from." })),
    rateDetails: Type.Optional(
      Type.Object(
        {
          serviceApiMultiplier: Type.Number({ description: "Service markup on the market rate." }),
          serviceApiFixedFee: Type.Integer({ description: "Service fixed fee, sending minor units." }),
          serviceApiVariableFeeRate: Type.Number({ description: "Service variable fee rate." }),
          serviceApiVariableFeeAmount: Type.Integer({ description: "Service variable fee, sending minor units." }),
        },
        {
          description:
            "The service's four rate-detail fields (the Quote also shows the counterparty's). A quote's transaction: what the quote fixed. Every other transaction (transfer-in, transfer-out, incoming UMA payment, its onward payout), in any status: same currency, no service fee: serviceApiMultiplier 1 and the fees charged, 0. Absent only on a receiver lookup's CREATED transaction (no rate yet).",
        },
      ),
    ),
    counterpartyInformation: Type.Optional(Type.Record(Type.String(), Type.String(), { description: "Quotes: counterparty information (FULL_NAME, ...)." })),
    receiverCustomerInfo: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: "Incoming UMA payments: the receiver data the platform gave when it approved (the 200 webhook reply or POST /transactions/{id}/approve), for example FULL_NAME.",
      }),
    ),
    refund: Type.Optional(
      Type.Object(
        {
          reference: Type.String({ description: "Refund reference (RFD-...)." }),
          initiatedAt: Type.Optional(Iso8601("When the refund started.")),
          settledAt: Type.Optional(Iso8601("When the refund settled.")),
          status: Type.Enum(["PENDING", "COMPLETED", "FAILED"], { description: "Refund status." }),
          reason: Type.Optional(Type.String({ description: "Why the payment was refunded." })),
        },
        { description: "OUTGOING quote payments whose payout failed: the return of the money to the source." },
      ),
    ),
    settledAt: Type.Optional(
      Iso8601(
        "When the payment was or will be settled: once COMPLETED, when it settled; while PENDING or PROCESSING, the rail's estimate once the rail has accepted the payment (sandbox: its schedule for the account's suffix or UMA scenario on the platform's sandbox clock, e.g. 30 s for a transfer to an account ending 005, 6 min for a quote payout to 003, 24 h for $pending.long); absent for a payment that failed, was rejected or expired, and before any estimate.",
      ),
    ),
    createdAt: Iso8601("When the transaction was created."),
    updatedAt: Iso8601("When it last changed."),
    receiptDeliveryConfirmedAt: Type.Optional(
      Iso8601("When the platform confirmed it delivered the transaction's receipt to its customer (POST /transactions/{transactionId}/confirm); absent until then."),
    ),
    agentId: Type.Optional(Type.String({ description: "The agent that initiated it." })),
    description: Type.Optional(Type.String({ description: "Memo." })),
    reconciliationInstructions: Type.Optional(Type.Object({ reference: Type.String({ description: "Reference carried on the rail." }) }, { description: "Present except in status CREATED." })),
    failureReason: Type.Optional(
      Type.String({
        description:
          "Why it failed or was refunded (spec enum: a failed payout (transfer-out, quote payout) is OFFRAMP_FAILED; a failed pull (transfer-in) is COLLECTION_FAILED, Grid's value, as the spec's enum has none for a collection; quote execution failures QUOTE_EXECUTION_FAILED, UMA compliance PAY_REQUEST_FAILED, a receiver whose LNURLP step failed LNURLP_FAILED, a receiver refusing for missing payee data MISSING_MANDATORY_PAYEE_DATA, expiry QUOTE_EXPIRED; incoming UMA payments PAYMENT_APPROVAL_WEBHOOK_ERROR when the approval webhook failed or was never answered, PAYMENT_APPROVAL_TIMED_OUT when a 202 was not followed by approve/reject within the window). Sandbox values reaching each: services/sandbox/README.md.",
        examples: ["OFFRAMP_FAILED"],
      }),
    ),
    failureDetail: Type.Optional(
      Type.String({
        description:
          "The rail's own cause: for transfers INSUFFICIENT_FUNDS and ACCOUNT_CLOSED_OR_INVALID (sandbox suffixes 002, 003: the transfer fails immediately, the POST's own answer is the FAILED transaction, nothing held), BANK_REJECTED, TIMED_OUT; for quotes EXECUTION_FAILED, COUNTERPARTY_DELIVERY_FAILED, RETURNED_BY_RECEIVING_BANK, USER_CANCELLED, PAYOUT_FAILED, COMPLIANCE_FAILED.",
      }),
    ),
  },
  { $id: "Transaction", description: "A movement of money in or out of an internal account." },
);

export const ListTransactionsQuery = Type.Object(
  {
    ...pagingQuery,
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only this customer's transactions." })),
    platformCustomerId: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "Only the transactions of the customer with this platform id." })),
    status: Type.Optional(
      Type.Enum(["CREATED", "PENDING_AUTHORIZATION", "PENDING", "PROCESSING", "COMPLETED", "REJECTED", "FAILED", "REFUNDED", "EXPIRED"], {
        description:
          "Only transactions in this status. PENDING_AUTHORIZATION: the transactions of quotes waiting for strong customer authentication (docs/sca.md); PENDING no longer includes them.",
      }),
    ),
    type: Type.Optional(Type.Enum(["INCOMING", "OUTGOING"], { description: "Only this direction." })),
    startDate: Type.Optional(Iso8601("Only transactions created at or after this time.")),
    endDate: Type.Optional(Iso8601("Only transactions created at or before this time.")),
    sortOrder: Type.Optional(Type.Enum(["asc", "desc"], { default: "desc", description: "By creation time; default desc." })),
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only the transaction with this reconciliation reference." })),
  },
  { description: "Filters and paging of GET /transactions." },
);

export const TransactionIdParams = Type.Object(
  { transactionId: Type.String({ pattern: "^Transaction:[0-9a-fA-F-]{1,64}$", description: "Transaction:<uuidv7>." }) },
  { description: "Path parameters naming a transaction." },
);

export const CancelTransactionBody = Type.Object(
  {
    reason: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: "Grid's optional reason, for the platform's own purposes: logged with the cancellation, not stored.", examples: ["REQUESTED_AFTER_HOURS"] }),
    ),
  },
  { additionalProperties: false, description: "Grid's CancelTransactionRequest (the body is optional)." },
);

export const ConfirmReceiptDeliveryBody = Type.Object(
  {
    receiptDeliveryConfirmedAt: Type.Optional(
      Iso8601("When the platform delivered the transaction's receipt to its customer; absent: the current server time."),
    ),
  },
  { additionalProperties: false, description: "Grid's ConfirmReceiptDeliveryRequest (the body is optional)." },
);

export const TransactionListSchema = ListEnvelope(Ref("Transaction", "A transaction."), "One page of transactions.");

export const transactionSchemas = [TransactionSchema];
