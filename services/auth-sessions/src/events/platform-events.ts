import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { enqueueEvent, newId, platformEventTopic } from "@corridor/kit";
import {
  PlatformConfigUpdatedSchema,
  PlatformCreatedSchema,
  PlatformEventSchema,
  TokenRevokedSchema,
  type PlatformEvent,
} from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import type { Transaction } from "kysely";
import type { Store } from "../domain/ports.js";
import { configToPb, platformToPb, tokenToPb } from "../handlers/mappers.js";

/**
 * Producer of topic corridor.platforms.v1 (envelope PlatformEvent, key = platform id so one
 * platform's events stay in order; a token's revocation, read by no service, on
 * corridor.platforms.tokens.v1: the kit's platformEventTopic). Events go to the outbox inside the caller's transaction, so
 * they are published if and only if the change commits.
 */
export function platformEvents(trx: Transaction<any>): Store["events"] {
  const emit = async (platformId: string, at: Date, eventType: string, payload: PlatformEvent["payload"]) => {
    const eventId = newId("Event");
    const message = create(PlatformEventSchema, { eventId, occurredAt: timestampFromDate(at), platformId, payload });
    await enqueueEvent(trx, { topic: platformEventTopic(message), key: platformId, eventId, eventType, schema: PlatformEventSchema, message });
  };
  return {
    platformCreated: (platform, config, at) =>
      emit(platform.id, at, "PLATFORM_CREATED", {
        case: "platformCreated",
        value: create(PlatformCreatedSchema, { platform: platformToPb(platform), config: configToPb(config) }),
      }),
    configUpdated: (config, at) =>
      emit(config.platformId, at, "PLATFORM_CONFIG_UPDATED", {
        case: "configUpdated",
        value: create(PlatformConfigUpdatedSchema, { config: configToPb(config) }),
      }),
    tokenRevoked: (token, at) =>
      emit(token.platformId, at, "TOKEN_REVOKED", {
        case: "tokenRevoked",
        value: create(TokenRevokedSchema, { token: tokenToPb(token) }),
      }),
  };
}
