import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { topics, type Clock, type ConsumerDefinition, type Logger } from "@corridor/kit";
import { PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import type { PlatformConfig } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { settingsStore } from "../data/settings-repo.js";
import { applyEndpointCopy } from "../domain/settings.js";
import type { EndpointCopy } from "../workers/endpoint.js";

/** A Timestamp as nanoseconds since the epoch: the full precision, for ordering config versions. */
export function timestampNanos(ts: Timestamp): bigint {
  return ts.seconds * 1_000_000_000n + BigInt(ts.nanos);
}

/**
 * Keeps the copy of each platform's webhook endpoint in step with auth-sessions: PlatformCreated
 * and PlatformConfigUpdated both carry the whole config; TokenRevoked is not ours to act on.
 */
export function platformEventsConsumer(deps: { clock: Clock; log: Logger; copy?: EndpointCopy }): ConsumerDefinition<typeof PlatformEventSchema> {
  const apply = async (platformId: string, config: PlatformConfig | undefined, trx: Parameters<typeof settingsStore>[0]) => {
    if (!config?.updatedAt) {
      deps.log.warn({ platformId }, "platform event without config.updated_at; ignored");
      return;
    }
    const applied = await applyEndpointCopy(settingsStore(trx), {
      platformId,
      webhookEndpoint: config.webhookEndpoint,
      webhookEventNaming: config.webhookEventNaming === "GRID" ? "GRID" : "CORRIDOR",
      configVersion: timestampNanos(config.updatedAt),
      at: deps.clock.now(),
    });
    // The copy in memory follows (an endpoint appearing releases the webhooks the worker holds back for it).
    if (applied) deps.copy?.saw(platformId, config.webhookEndpoint !== "");
    if (!applied) {
      deps.log.info(
        { platformId, configUpdatedAt: timestampDate(config.updatedAt).toISOString() },
        "stale platform config event; kept the newer endpoint",
      );
    }
  };

  return {
    name: "platform-webhook-settings",
    topic: topics.platforms,
    schema: PlatformEventSchema,
    eventId: (e) => e.eventId,
    // TokenRevoked (an older auth-sessions wrote it here) changes nothing here.
    relevant: (e) => e.payload.case === "platformCreated" || e.payload.case === "configUpdated",
    async handle(event, trx) {
      switch (event.payload.case) {
        case "platformCreated":
          return apply(event.platformId, event.payload.value.config, trx);
        case "configUpdated":
          return apply(event.platformId, event.payload.value.config, trx);
        default:
          return; // TokenRevoked and payloads added later: nothing to do here.
      }
    },
  };
}
