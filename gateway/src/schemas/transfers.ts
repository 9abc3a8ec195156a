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
