import { Type } from "typebox";

/** Schemas of the incoming UMA payment routes (issue 5): sandbox receive, approve, reject. */

export const UmaReceiveBody = Type.Object(
  {
    senderUmaAddress: Type.String({ minLength: 1, maxLength: 255, description: "The paying UMA address (any address: the payment is simulated)." }),
    receiverUmaAddress: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: "The umaAddress of one of the platform's customers (optional when customerId is given; with both, they must agree).", examples: ["$alice@acme.sandbox.uma.money"] }),
    ),
    customerId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: "The receiving customer by id, instead of receiverUmaAddress (as Grid's API allows).", examples: ["Customer:019542f5-b3e7-1d02-0000-000000000001"] }),
    ),
    receivingCurrencyCode: Type.String({ pattern: "^[A-Z]{3,5}$", description: "The currency the receiver gets; the customer needs an internal account in it." }),
    receivingCurrencyAmount: Type.Integer({ minimum: 1, maximum: 9_000_000_000_000_000, description: "Minor units the receiver gets." }),
  },
  { additionalProperties: false, description: "A simulated incoming UMA payment." },
);

export const ApproveIncomingBody = Type.Object(
  {
    receiverCustomerInfo: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: "The receiver fields the notification asked for in requestedReceiverCustomerInfoFields." }),
    ),
  },
  { additionalProperties: false, description: "Approval of an incoming payment acknowledged with 202." },
);

export const RejectIncomingBody = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 1000, description: "Why the platform rejects it (kept as failureDetail)." })) },
  { additionalProperties: false, description: "Rejection of an incoming payment acknowledged with 202." },
);
