import { Type } from "typebox";
import { IdempotencyKeyHeader, Iso8601, ListEnvelope, Ref, pagingQuery } from "./common.js";

/**
 * The events API (an extension of the 2025-10-13 contract, docs/events.md): the webhooks a
 * platform was (or would be) sent, each delivery attempt, and redelivery.
 */

const EXAMPLE_EVENT_ID = "Webhook:019a8f3e-6c1d-7b52-9e0a-3f4d5c6b7a81";
const EXAMPLE_TX_ID = "Transaction:019a8f3e-5b0c-7a41-8d9f-2e3c4b5a6978";

const examplePayload = {
  id: EXAMPLE_EVENT_ID,
  type: "OUTGOING_PAYMENT_COMPLETED",
  timestamp: "2025-10-13T09:30:02.000Z",
  data: { id: EXAMPLE_TX_ID, status: "COMPLETED", type: "OUTGOING" },
};

export const DeliveryStatusSchema = Type.Enum(["PENDING", "DELIVERED", "FAILED", "SKIPPED"], {
  description:
    "PENDING: to be posted (first try, a retry after a failure, or a redelivery); DELIVERED: the endpoint answered 2xx; FAILED: given up (the endpoint answered 409, or 7 days of retries passed); SKIPPED: not sent because no webhookEndpoint was set when the event occurred (redeliver it to send it now).",
  $id: "DeliveryStatus",
  examples: ["DELIVERED"],
});

export const EventPayloadSchema = Type.Object(
  {
    id: Type.String({ description: "Webhook:<uuidv7>, the same as the event's id and the webhook-id header.", examples: [EXAMPLE_EVENT_ID] }),
    type: Type.String({ description: "Event type.", examples: ["OUTGOING_PAYMENT_COMPLETED"] }),
    timestamp: Iso8601("When the event occurred."),
    data: Type.Object(
      {},
      {
        additionalProperties: true,
        description: "The resource the event is about, exactly as its GET answers it (a Transaction, Customer, Verification, Invitation, InternalAccount or AgentAction).",
      },
    ),
  },
  { $id: "EventPayload", additionalProperties: false, description: "The webhook's JSON body, as signed and posted on every attempt." },
);

const eventFields = {
  id: Type.String({ pattern: "^Webhook:", description: "Webhook:<uuidv7>: the envelope's id and the webhook-id header receivers dedupe on.", examples: [EXAMPLE_EVENT_ID] }),
  type: Type.String({ description: "Event type, for example OUTGOING_PAYMENT_COMPLETED or CUSTOMER_KYC_APPROVED.", examples: ["OUTGOING_PAYMENT_COMPLETED"] }),
  resourceId: Type.Optional(Type.String({ description: "The resource the event is about (data.id; an invitation's code).", examples: [EXAMPLE_TX_ID] })),
  createdAt: Iso8601("When Corridor recorded the event for delivery."),
  deliveryStatus: Ref("DeliveryStatus", "Where its delivery stands."),
  attemptCount: Type.Integer({ minimum: 0, description: "Delivery attempts made so far, redeliveries included.", examples: [1] }),
  lastAttemptAt: Type.Optional(Iso8601("When the last attempt was made.")),
  nextAttemptAt: Type.Optional(Iso8601("PENDING only: when the next attempt is due.")),
  lastError: Type.Optional(Type.String({ description: "Why the last attempt failed or why the event was skipped." })),
  redeliveredAt: Type.Optional(Iso8601("When a redelivery was last asked for.")),
  payload: Ref("EventPayload", "The webhook's JSON body."),
};

export const EventSchema = Type.Object(eventFields, {
  $id: "Event",
  additionalProperties: false,
  description: "A webhook event the platform was (or would be) sent.",
  examples: [
    {
      id: EXAMPLE_EVENT_ID,
      type: "OUTGOING_PAYMENT_COMPLETED",
      resourceId: EXAMPLE_TX_ID,
      createdAt: "2025-10-13T09:30:02.015Z",
      deliveryStatus: "DELIVERED",
      attemptCount: 1,
      lastAttemptAt: "2025-10-13T09:30:02.031Z",
      payload: examplePayload,
    },
  ],
});

export const EventDeliveryAttemptSchema = Type.Object(
  {
    id: Type.String({ description: "Id of the attempt (a uuid).", examples: ["019a8f3e-6c3a-7c10-a1b2-c3d4e5f60718"] }),
    attemptedAt: Iso8601("When the request was sent."),
    url: Type.String({ description: "The endpoint posted to.", examples: ["https://platform.example.com/webhooks"] }),
    responseStatus: Type.Integer({ minimum: 0, description: "HTTP status the endpoint answered; 0 when no answer came (see error).", examples: [200] }),
    delivered: Type.Boolean({ description: "Whether the endpoint answered 2xx." }),
    latencyMs: Type.Optional(Type.Integer({ minimum: 0, description: "Milliseconds from sending to the answer's headers (or to the failure).", examples: [42] })),
    responseExcerpt: Type.Optional(Type.String({ maxLength: 1024, description: "The start of the answer's body, at most 1024 characters." })),
    error: Type.Optional(Type.String({ description: "Transport error when no answer came (timeout, connection refused, ...)." })),
  },
  { $id: "EventDeliveryAttempt", additionalProperties: false, description: "One POST of the event to the platform's endpoint." },
);

export const EventWithAttemptsSchema = Type.Object(
  {
    ...eventFields,
    attempts: Type.Array(Ref("EventDeliveryAttempt", "An attempt."), { description: "Every delivery attempt, oldest first." }),
  },
  {
    $id: "EventWithAttempts",
    additionalProperties: false,
    description: "A webhook event with its delivery attempts.",
    examples: [
      {
        id: EXAMPLE_EVENT_ID,
        type: "OUTGOING_PAYMENT_COMPLETED",
        resourceId: EXAMPLE_TX_ID,
        createdAt: "2025-10-13T09:30:02.015Z",
        deliveryStatus: "DELIVERED",
        attemptCount: 2,
        lastAttemptAt: "2025-10-13T09:30:32.040Z",
        payload: examplePayload,
        attempts: [
          {
            id: "019a8f3e-6c3a-7c10-a1b2-c3d4e5f60718",
            attemptedAt: "2025-10-13T09:30:02.031Z",
            url: "https://platform.example.com/webhooks",
            responseStatus: 503,
            delivered: false,
            latencyMs: 87,
            responseExcerpt: "upstream unavailable",
          },
          {
            id: "019a8f3e-e0b1-7d22-b3c4-d5e6f7081929",
            attemptedAt: "2025-10-13T09:30:32.040Z",
            url: "https://platform.example.com/webhooks",
            responseStatus: 200,
            delivered: true,
            latencyMs: 41,
          },
        ],
      },
    ],
  },
);

export const EventIdParams = Type.Object(
  { eventId: Type.String({ pattern: "^Webhook:[0-9a-fA-F-]{1,64}$", description: "Webhook:<uuidv7>." }) },
  { description: "Path parameters naming an event." },
);

export const ListEventsQuery = Type.Object(
  {
    ...pagingQuery,
    type: Type.Optional(Type.String({ pattern: "^[A-Z][A-Z0-9_]{0,99}$", description: "Only events of this type, for example OUTGOING_PAYMENT_COMPLETED." })),
    resourceId: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "Only events about this resource (data.id), for example a Transaction:<uuidv7>." })),
    createdAfter: Type.Optional(Iso8601("Only events created at or after this time.")),
    createdBefore: Type.Optional(Iso8601("Only events created at or before this time.")),
  },
  { description: "Filters and paging of GET /events." },
);

export const RedeliverHeaders = Type.Object({ "idempotency-key": IdempotencyKeyHeader() }, { description: "Idempotency-Key header." });

export const EventListSchema = ListEnvelope(Ref("Event", "An event."), "One page of events, newest first.");

export const eventSchemas = [DeliveryStatusSchema, EventPayloadSchema, EventSchema, EventDeliveryAttemptSchema, EventWithAttemptsSchema];
