import { topics, type Clock, type ConsumerDefinition } from "@corridor/kit";
import { PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import type { Transaction } from "kysely";
import { assignDefaultUmaAddresses } from "../domain/customers.js";
import { repositories } from "../data/store.js";
import type { CustomersKycDatabase } from "../data/tables.js";
import type { Store } from "../domain/ports.js";

/**
 * Consumer of corridor.platforms.v1 (issue 29, item 6): when a platform's config has a UMA domain,
 * its live customers without a UMA address get their default one under it, as new customers do.
 * That is how the customers of production platforms created before CORRIDOR_UMA_DOMAIN get
 * addresses once auth-sessions' backfill gives their platform its domain (and the customers of a
 * platform that sets a domain after going without one). Addresses already held never change.
 */
export function platformUmaConsumer(deps: { clock: Clock; events: (trx: Transaction<CustomersKycDatabase>) => Store["events"] }): ConsumerDefinition<typeof PlatformEventSchema> {
  return {
    name: "customer-uma-addresses",
    topic: topics.platforms,
    schema: PlatformEventSchema,
    eventId: (e) => e.eventId,
    relevant: (e) => e.payload.case === "configUpdated" && !!e.payload.value.config?.umaDomain,
    async handle(e, trx) {
      if (e.payload.case !== "configUpdated" || !e.payload.value.config?.umaDomain) return;
      const domain = e.payload.value.config.umaDomain;
      const t = trx as Transaction<CustomersKycDatabase>;
      const store: Store = { ...repositories(t), events: deps.events(t) };
      // Batches until none is left (each batch's customers hold addresses once it is done).
      while ((await assignDefaultUmaAddresses(store, deps.clock, e.platformId, domain)) > 0);
    },
  };
}
