import { Type } from "typebox";
import { IdempotencyKeyHeader } from "./common.js";

export const IdempotencyHeaders = Type.Object(
  {
    "idempotency-key": IdempotencyKeyHeader(),
  },
  { description: "Idempotency-Key header." },
);

const accountRef = (description: string) =>
  Type.Object({ accountId: Type.String({ minLength: 1, maxLength: 128, description: "Account id." }) }, { additionalProperties: false, description });

export const TransferBody = Type.Object(
  {
    source: accountRef("The account the money comes from."),
    destination: accountRef("The account the money goes to."),
    amount: Type.Integer({ minimum: 1, maximum: 9_000_000_000_000_000, description: "Minor units, 1 to 9000000000000000." }),
    description: Type.Optional(Type.String({ maxLength: 500, description: "Memo." })),
  },
  { additionalProperties: false, description: "A transfer between an internal and an external account in the same currency." },
);

/** POST /transfer-out: Grid's destination may name the rail to pay over. */
export const TransferOutBody = Type.Object(
  {
    ...TransferBody.properties,
    destination: Type.Object(
      {
        accountId: Type.String({ minLength: 1, maxLength: 128, description: "Account id." }),
        paymentRail: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 32,
            pattern: "^[A-Z][A-Z0-9_]*$",
            description:
              "The rail to pay over, one of the external account's accountInfo.paymentRails (for example ACH, WIRE, RTP, SEPA_INSTANT); another is 400 INVALID_INPUT on body.destination.paymentRail. Absent: the account's rails in order. A production platform's payout goes to the connector the operator bound this (currency, rail) to (400 PAYMENT_RAIL_NOT_AVAILABLE without one).",
            examples: ["ACH"],
          }),
        ),
      },
      { additionalProperties: false, description: "The external account the money goes to, and optionally the rail." },
    ),
  },
  { additionalProperties: false, description: "A payout from an internal account to an external account in the same currency." },
);
