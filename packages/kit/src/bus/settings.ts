import { env, z } from "../config.js";

/**
 * KAFKA_TOPIC_PARTITIONS: partitions of every topic a Kafka bus creates. The one default of the
 * setting (the bus falls back to it when a host passes none). Partitions bound how many replicas of
 * a consumer work at once: a consumer group gives each partition to one member, so with one
 * partition a second replica idles. 12 divides among 1, 2, 3, 4 and 6 replicas evenly.
 * Per-key order holds whatever the count (every message is keyed: docs/events.md, "Topics").
 */
export const kafkaTopicPartitionsSetting = z.coerce.number().int().min(1).max(10_000).default(12);

/**
 * KAFKA_TOPIC_PARTITIONS_GROW: when a topic exists with fewer partitions than
 * KAFKA_TOPIC_PARTITIONS, add the missing ones (admin CreatePartitions) instead of only warning.
 * Off by default: adding partitions moves keys to other partitions, which breaks per-key order for
 * messages still unconsumed at that moment (docs/events.md, "Adding partitions").
 */
export const kafkaTopicPartitionsGrowSetting = env.bool(false);

/** The partition count a bus uses when its host gives none: the setting's default. */
export const DEFAULT_TOPIC_PARTITIONS: number = kafkaTopicPartitionsSetting.parse(undefined);
