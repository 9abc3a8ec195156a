import type { ConsumerDefinition } from "@corridor/kit";
import type { DescMessage } from "@bufbuild/protobuf";
import { webhooksEnqueuedIn } from "../data/queue-repo.js";
import type { DeliveryWorker } from "../workers/delivery.js";

/**
 * The consumer, telling the delivery worker (in this process) about the webhooks it enqueued, so
 * they leave at once instead of at the next poll. enqueueWebhook notes them per transaction; the
 * transaction has not committed yet when the handler returns, so the worker looks until it sees
 * the rows. Any consumer may be wrapped: one that enqueues nothing announces nothing.
 */
export function announcingEnqueues<D extends DescMessage>(consumer: ConsumerDefinition<D>, worker: Pick<DeliveryWorker, "notify">): ConsumerDefinition<D> {
  return {
    ...consumer,
    async handle(event, trx) {
      // A batched consumer handles several events in one transaction: announce only this one's.
      const before = webhooksEnqueuedIn(trx).length;
      await consumer.handle(event, trx);
      worker.notify(webhooksEnqueuedIn(trx).slice(before));
    },
  };
}
