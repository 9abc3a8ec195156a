import type { Logger } from "../log.js";
import { createInProcessBus } from "./in-process.js";
import type { KafkaBusOptions } from "./kafka.js";
import type { Bus } from "./types.js";

export { createInProcessBus, type InProcessBusOptions } from "./in-process.js";
export type { KafkaBusOptions } from "./kafka.js";
export { DEFAULT_TOPIC_PARTITIONS, kafkaTopicPartitionsGrowSetting, kafkaTopicPartitionsSetting } from "./settings.js";

/**
 * The Kafka adapter (kafka.ts). kafkajs (~140 CommonJS modules) is loaded here, when a Kafka bus
 * is made, so a process on the in-process bus never loads it.
 */
export async function createKafkaBus(opts: KafkaBusOptions): Promise<Bus> {
  const { createKafkaBus: create } = await import("./kafka.js");
  return create(opts);
}

export interface CreateBusOptions {
  /** KAFKA_BROKERS; when absent or empty the in-process bus is used. */
  kafkaBrokers?: string[];
  clientId: string;
  /** KAFKA_TOPIC_PREFIX: prepended to topics and consumer groups on Kafka. */
  topicPrefix?: string;
  log: Logger;
  /** KAFKA_TOPIC_PARTITIONS: partitions of topics created on Kafka (default: the setting's, 12). */
  numPartitions?: number;
  /** KAFKA_TOPIC_PARTITIONS_GROW: add partitions to an existing topic that has fewer (default false: only warn). */
  growPartitions?: boolean;
  /** Replication factor of topics created on Kafka (default 1). */
  replicationFactor?: number;
  /** Kafka: a consumer stopped for good (see KafkaBusOptions.onConsumerStopped). */
  onConsumerStopped?: (group: string, err: unknown) => void;
}

/** The one place that chooses the bus: Kafka when brokers are configured, else in-process. */
export async function createBus(opts: CreateBusOptions): Promise<Bus> {
  if (opts.kafkaBrokers && opts.kafkaBrokers.length > 0) {
    return createKafkaBus({
      brokers: opts.kafkaBrokers,
      clientId: opts.clientId,
      topicPrefix: opts.topicPrefix,
      log: opts.log,
      numPartitions: opts.numPartitions,
      growPartitions: opts.growPartitions,
      replicationFactor: opts.replicationFactor,
      onConsumerStopped: opts.onConsumerStopped,
    });
  }
  return createInProcessBus({ log: opts.log });
}
