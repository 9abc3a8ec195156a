import { eventToJson, eventWithAttemptsToJson } from "@corridor/kit/rest-json";
import { principalOf } from "../auth.js";
import { markIdempotentEffectDone } from "../idempotency.js";
import { timeRange } from "../mappers/tokens.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { EventIdParams, EventListSchema, ListEventsQuery, RedeliverHeaders } from "../schemas/events.js";
import { listEnvelope, pageOf } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Webhooks and events"];

/**
 * The events API (an extension of the contract, docs/events.md): the webhooks a platform was (or
 * would be) sent, with every delivery attempt, and redelivery to the current endpoint. Served by
 * notifications, which owns the webhook queue.
 */
export function eventRoutes(app: Api, { clients }: RouteDeps): void {
  app.get(
    "/events",
    {
      schema: {
        summary: "List events",
        description:
          "The webhook events of the platform, newest first: every event that is or was to be posted to the webhookEndpoint (OUTGOING_PAYMENT_*, INCOMING_PAYMENT_*, CUSTOMER_KYC_*, VERIFICATION_*, ...), with its delivery status, whether or not an endpoint was set when it occurred. Use it to reconcile webhooks you missed. Filters combine; createdAfter and createdBefore are inclusive. An extension of the 2025-10-13 contract. Needs VIEW.",
        tags,
        querystring: ListEventsQuery,
        response: { 200: EventListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.notifications.listWebhookEvents({
        platformId,
        type: q.type ?? "",
        resourceId: q.resourceId ?? "",
        created: timeRange(q.createdAfter, q.createdBefore),
        page: pageOf(q),
      });
      return listEnvelope(res.events.map(eventToJson), res.pageInfo);
    },
  );

  app.get(
    "/events/:eventId",
    {
      schema: {
        summary: "Get an event with its delivery attempts",
        description:
          "The event, its payload exactly as posted, and every delivery attempt oldest first: when, to which URL, the HTTP status (0 when no answer came), the latency, the start of the answer's body (at most 1024 characters) and the transport error when there was no answer. Another platform's event is 404 EVENT_NOT_FOUND. Needs VIEW.",
        tags,
        params: EventIdParams,
        response: { 200: Ref("EventWithAttempts", "The event with its attempts."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.notifications.getWebhookEvent({ platformId, eventId: request.params.eventId });
      return eventWithAttemptsToJson(res.event);
    },
  );

  app.post(
    "/events/:eventId/redeliver",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Redeliver an event",
        description:
          "Queues the event again for the platform's current webhookEndpoint and answers 202 with the event (PENDING). The receiver gets the same webhook id and body, signed afresh; it is retried like any webhook (from 30 s up to 30 min apart, for 7 days from now). Works for DELIVERED, FAILED and SKIPPED events alike (a SKIPPED one is sent now even though it occurred before the endpoint was set). 400 WEBHOOK_ENDPOINT_NOT_SET when the platform has no webhookEndpoint; 404 EVENT_NOT_FOUND. Honours Idempotency-Key: the same key answers the first redelivery again (the event as it is now) instead of queueing another. Needs MANAGE.",
        tags,
        params: EventIdParams,
        headers: RedeliverHeaders,
        response: { 202: Ref("EventWithAttempts", "The event, queued again, with its attempts so far."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await clients.notifications.redeliverWebhookEvent({
        platformId,
        eventId: request.params.eventId,
        idempotencyKey: request.headers["idempotency-key"] ?? "",
      });
      markIdempotentEffectDone(request);
      if (res.replayed) reply.header("Idempotent-Replayed", "true");
      return reply.code(202).send(eventWithAttemptsToJson(res.event));
    },
  );
}
