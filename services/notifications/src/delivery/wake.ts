import type { ConsumerDefinition } from "@corridor/kit";
import type { DescMessage } from "@bufbuild/protobuf";
import type { Transaction } from "kysely";
import { webhooksOfEvent } from "../data/queue-repo.js";
import type { NotificationsDatabase } from "../data/tables.js";
import type { DeliveryWorker } from "./worker.js";

/**
 * The consumer, telling the delivery worker (in this process) about the webhooks it enqueued, so
 * they leave at once instead of at the next poll. The rows are read in the consumer's own
 * transaction (they are not committed yet); the worker looks until it sees them. Any consumer may
 * be wrapped: one that enqueues nothing (source_event_id = its event id) announces nothing.
 */
export function announcingEnqueues<D extends DescMessage>(consumer: ConsumerDefinition<D>, worker: Pick<DeliveryWorker, "notify">): ConsumerDefinition<D> {
  return {
    ...consumer,
    async handle(event, trx) {
      await consumer.handle(event, trx);
      const ids = await webhooksOfEvent(trx as Transaction<NotificationsDatabase>, consumer.eventId(event));
      worker.notify(ids);
    },
  };
}
