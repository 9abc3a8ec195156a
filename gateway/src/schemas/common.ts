import { Type, type TSchema } from "typebox";

/**
 * Schemas shared by many routes. Each carries an `$id`: it is registered once with Fastify (the
 * response serializer and @fastify/swagger, which lists it under components.schemas) and with the
 * gateway's request validators, and routes point at it with `Type.Ref(<id>)`.
 */

export const ErrorSchema = Type.Object(
  {
    status: Type.Integer({ description: "HTTP status code, repeated in the body." }),
    code: Type.String({ description: "Stable UPPER_SNAKE error code, for example INVALID_INPUT or TOKEN_NOT_FOUND." }),
    message: Type.String({ description: "Human-readable explanation for the engineer; not meant for parsing." }),
    details: Type.Object(
      {
        errors: Type.Optional(
          Type.Array(
            Type.Object(
              {
                field: Type.String({
                  description: "Where the bad value is: location then path, for example body.supportedCurrencies[0].minAmount or query.limit.",
                }),
                reason: Type.String({ description: "What is wrong with it." }),
              },
              { description: "One invalid field." },
            ),
            { description: "Present on 400 INVALID_INPUT: every invalid field found." },
          ),
        ),
      },
      { additionalProperties: true, description: "Structured context; its keys depend on the code." },
    ),
  },
  { $id: "Error", description: "The body of every non-2xx answer." },
);

/**
 * The Idempotency-Key header of the money-moving routes (decisions §3): 1 to 255 printable ASCII
 * characters. A route that declares it takes part in the gateway's (platform, key) registry.
 */
export const IdempotencyKeyHeader = () =>
  Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: "^[\\x20-\\x7E]+$",
      description:
        "Same key + same request within 24 h answers the first response (Idempotent-Replayed: true). Scoped to the platform across every route: reusing a key for another route or body answers 422 IDEMPOTENCY_KEY_REUSED.",
    }),
  );

export const Iso8601 = (description: string) => Type.String({ format: "date-time", description });

/** A reference to a shared schema, with the description a response or field needs. */
export const Ref = (id: string, description: string) => Type.Ref(id, { description });

/** The list envelope of the public API around items of `item`. */
export function ListEnvelope(item: TSchema, description: string) {
  return Type.Object(
    {
      data: Type.Array(item, { description: "This page's items." }),
      hasMore: Type.Boolean({ description: "Whether more items follow this page." }),
      nextCursor: Type.Optional(Type.String({ description: "Cursor for the next page; present only when hasMore is true." })),
      totalCount: Type.Integer({ minimum: 0, description: "Number of items matching the filters, ignoring pagination." }),
    },
    { description },
  );
}

/** Paging and time-window query parameters shared by list routes. */
export const pagingQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: "Page size, 1 to 100 (default 20)." })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "Opaque cursor from a previous page's nextCursor." })),
};

export const timeWindowQuery = {
  createdAfter: Type.Optional(Iso8601("Only items created at or after this time.")),
  createdBefore: Type.Optional(Iso8601("Only items created at or before this time.")),
  updatedAfter: Type.Optional(Iso8601("Only items last changed at or after this time.")),
  updatedBefore: Type.Optional(Iso8601("Only items last changed at or before this time.")),
};

/** Standard error responses of an authenticated route (documented once, as references). */
export const errorResponses = {
  "4xx": Ref("Error", "Client error: bad input (400), bad credentials (401), missing permission (403), not found (404), conflict (409) or rate limited (429)."),
  "5xx": Ref("Error", "Server error or an unavailable service."),
};
