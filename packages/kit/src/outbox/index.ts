export { afterCommit, inTransaction } from "./batch.js";
export { enqueueEvent, type EnqueueEventInput } from "./enqueue.js";
export { createOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from "./relay.js";
export { subscribeConsumer, type SubscribeConsumerOptions } from "./inbox.js";
export { kitMigrations, kitMigrationsFor, outboxChannel } from "./migrations.js";
export type { InboxTable, IdempotencyKeysTable, KitTables, OutboxTable } from "./tables.js";
