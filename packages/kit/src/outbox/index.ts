export { afterCommit, completeIdempotencyKeyAtCommit, inTransaction } from "./batch.js";
export { enqueueEvent, type EnqueueEventInput } from "./enqueue.js";
export { createOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from "./relay.js";
export { inboxName, serviceConsumerGroup, subscribeConsumer, subscribeService, type SubscribeConsumerOptions, type SubscribeServiceOptions } from "./inbox.js";
export { kitMigrations, kitMigrationsFor, outboxChannel } from "./migrations.js";
export type { InboxTable, IdempotencyKeysTable, KitTables, OutboxTable } from "./tables.js";
