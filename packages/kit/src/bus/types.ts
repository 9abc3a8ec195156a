/**
 * The event bus seen by services. Two adapters implement it: Kafka (kafkajs) whenever
 * KAFKA_BROKERS is set, and an in-process one for embedded mode. Both are at-least-once: a
 * handler that throws sees the message again, so consumers must be idempotent (the kit's inbox
 * helper makes them so). Messages with the same key keep their order.
 */
export interface BusMessage {
  /** Full topic name, for example corridor.platforms.v1. */
  topic: string;
  /** Partition key; events of one platform use its id so they stay in order. */
  key: string;
  /** Protobuf-encoded envelope. */
  value: Uint8Array;
  /** traceparent, event-id, event-type, ... */
  headers: Record<string, string>;
}

export interface Subscription {
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /** Consumer group: each group gets every message once (load-shared among its members). */
  group: string;
  topics: string[];
  handle(message: BusMessage): Promise<void>;
  /**
   * Several messages of one partition, in order, that arrived together (Kafka only; the
   * in-process bus calls `handle`). Same contract as `handle` for the lot: resolving means all of
   * them are processed, throwing means all of them are delivered again (the inbox recognises the
   * ones that did go through). Without it every message goes to `handle`.
   */
  handleBatch?(messages: BusMessage[]): Promise<void>;
}

export interface Bus {
  readonly kind: "kafka" | "in-process";
  /**
   * Hands messages to the bus and resolves only once they are durable, so the caller (the outbox
   * relay) may then forget them:
   * - Kafka: every message is acknowledged by the broker (acks=all).
   * - in-process: every consumer group subscribed to the topic has processed the message (its
   *   handler resolved, i.e. its inbox transaction committed). Nothing in memory survives a
   *   restart, so "processed" is the only durable point. Consequences: publish may wait as long as
   *   a handler keeps failing (a poison message stalls its topic, as it stalls a Kafka partition),
   *   or while a group has no live member; never await it while holding a database transaction
   *   the consumers need (in embedded mode every service shares one database session).
   * Rejects when the messages may not be durable (broker error, bus closed before delivery); the
   * caller publishes them again later, and consumers deduplicate by event id.
   */
  publish(messages: BusMessage[]): Promise<void>;
  subscribe(opts: SubscribeOptions): Promise<Subscription>;
  /** Stops delivering; publishes still waiting for durability reject instead of hanging. */
  close(): Promise<void>;
}
