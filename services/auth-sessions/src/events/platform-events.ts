import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { enqueueEvent, newId, platformEventTopic } from "@corridor/kit";
import {
  DelegatedKeyChangedSchema,
  PlatformConfigUpdatedSchema,
  PlatformCreatedSchema,
  PlatformEventSchema,
  TokenRevokedSchema,
  type PlatformEvent,
} from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import type { Transaction } from "kysely";
import type { Store } from "../domain/ports.js";
import type { WalletStore } from "../domain/wallet/ports.js";
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

/**
 * Producer of topic corridor.platforms.delegated-keys.v1 (envelope PlatformEvent,
 * DelegatedKeyChanged; key = the card funding source id, so one source's changes stay in order):
 * a delegated key of a card funding source became ACTIVE or was REVOKED. Into the outbox of the
 * transaction that changed the key; its only reader is the ledger (the source's status).
 */
export function delegatedKeyEvents(trx: Transaction<any>): WalletStore["events"] {
  return {
    async delegatedKeyChanged(key) {
      // A key made before cards names no funding source: nothing at the ledger follows it.
      if (!key.fundingSourceId) return;
      const eventId = newId("Event");
      const message = create(PlatformEventSchema, {
        eventId,
        occurredAt: timestampFromDate(key.updatedAt),
        platformId: key.platformId,
        payload: {
          case: "delegatedKeyChanged",
          value: create(DelegatedKeyChangedSchema, {
            keyId: key.id,
            accountId: key.accountId,
            cardId: key.cardId ?? "",
            fundingSourceId: key.fundingSourceId,
            status: key.status,
            updatedAt: timestampFromDate(key.updatedAt),
          }),
        },
      });
      await enqueueEvent(trx, { topic: platformEventTopic(message), key: key.fundingSourceId, eventId, eventType: "DELEGATED_KEY_CHANGED", schema: PlatformEventSchema, message });
    },
  };
}
