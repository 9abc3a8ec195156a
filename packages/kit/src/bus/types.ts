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
   * Several messages of one topic, each key's in order, that arrived together: a partition's
   * fetched batch on Kafka; on the in-process bus the queued messages of the topic's keys that are
   * free (see createInProcessBus). Same contract as `handle` for the lot: resolving means all of
   * them are processed, throwing means all of them are delivered again (the inbox recognises the
   * ones that did go through). Without it every message goes to `handle`.
   */
  handleBatch?(messages: BusMessage[]): Promise<void>;
  /**
   * The topics whose fetched messages go to `handleBatch` (default: every topic, when
   * `handleBatch` is given). Messages of other topics go to `handle` one at a time, each
   * acknowledged on its own.
   */
  batchTopics?: string[];
  /**
   * Groups this one replaces (Kafka only: the in-process bus keeps nothing across restarts). At
   * the first start of `group`, for each of its topics on which it has committed nothing yet,
   * every partition starts at the least offset the former groups of that topic committed for it,
   * or at the beginning when any of them has none: nothing one of them had not processed is
   * skipped, and what some had processed is delivered again (consumers deduplicate). The former
   * groups themselves are left as they are. See docs/events.md, "Consumer groups".
   */
  formerGroups?: FormerGroup[];
}

/** A consumer group a new one takes over from, and the topics it consumed. */
export interface FormerGroup {
  group: string;
  topics: string[];
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
