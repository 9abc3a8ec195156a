import { createRequire } from "node:module";
import { Kafka, logLevel, Partitioners, type Admin, type Consumer, type IHeaders, type KafkaMessage, type LogEntry, type Producer } from "kafkajs";
import type { Logger } from "../log.js";
import { observeConsumerLag, type ConsumerLag } from "../telemetry/instruments.js";
import { DEFAULT_TOPIC_PARTITIONS } from "./settings.js";
import type { Bus, BusMessage, FormerGroup, SubscribeOptions, Subscription } from "./types.js";

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  /**
   * Prepended to every topic and consumer group name (KAFKA_TOPIC_PREFIX), so several test runs
   * or environments can share one broker. Services always see unprefixed topic names.
   */
  topicPrefix?: string;
  log: Logger;
  /**
   * Partitions of topics this bus creates (KAFKA_TOPIC_PARTITIONS; default DEFAULT_TOPIC_PARTITIONS).
   * A topic that already exists keeps its count: with fewer, the bus warns (or grows it, below).
   */
  numPartitions?: number;
  /**
   * KAFKA_TOPIC_PARTITIONS_GROW: add the missing partitions to an existing topic that has fewer
   * than numPartitions. Off: only a warning saying how (docs/events.md, "Adding partitions").
   */
  growPartitions?: boolean;
  /** Replication factor of topics this bus creates. */
  replicationFactor?: number;
  /** How long subscribe() waits for the first group join before returning anyway. */
  joinTimeoutMs?: number;
  /** How long creating a topic, connecting at start and (re)starting a consumer keep retrying a broker that is away or still settling. */
  topicCreateTimeoutMs?: number;
  /**
   * Called when kafkajs gives a consumer up without restarting it (a non-retriable error such as
   * a failed group authorization). The subscription then receives nothing more, so the host
   * should stop the process and let its supervisor start it again rather than run on silently.
   * Without it the bus only logs.
   */
  onConsumerStopped?: (group: string, err: unknown) => void;
}

/**
 * The Kafka adapter. One idempotent producer (acks=all) per bus; one kafkajs consumer per
 * subscription. A handler that throws leaves its offset uncommitted, so kafkajs delivers the same
 * message again (after its retry backoff, restarting the consumer if retries run out).
 * Topics are created on demand, since the brokers are expected to refuse auto-creation.
 */
export async function createKafkaBus(opts: KafkaBusOptions): Promise<Bus> {
  fixIdleRequestQueue();
  const prefix = opts.topicPrefix ?? "";
  const log = opts.log.child({ component: "kafka" });
  const kafka = new Kafka({
    clientId: opts.clientId,
    brokers: opts.brokers,
    logLevel: log.isLevelEnabled("debug") ? logLevel.INFO : logLevel.WARN,
    logCreator: pinoLogCreator(log),
    retry: { initialRetryTime: 200, maxRetryTime: 5_000, retries: 8 },
  });

  const admin: Admin = kafka.admin();
  const newProducer = (): Producer =>
    kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  const producer = newProducer();
  // A broker that is away when this process starts (restarting, failing over) is waited for, as
  // long as topic creation waits for one that is settling: exiting instead only has the
  // supervisor start a process that meets the same broker.
  const atStart = (what: string) => ({
    timeoutMs: opts.topicCreateTimeoutMs ?? 60_000,
    onRetry: (err: unknown, retryInMs: number) => log.warn({ err: String(err), retryInMs }, `broker not reachable yet (${what}); retrying`),
  });
  await retryWhileRetriable(() => admin.connect(), atStart("admin"));
  try {
    await retryWhileRetriable(() => producer.connect(), atStart("producer"));
  } catch (err) {
    await admin.disconnect();
    throw err;
  }
  const producers = replaceableProducer(producer, async () => {
    const fresh = newProducer();
    await retryWhileRetriable(() => fresh.connect(), atStart("new producer"));
    return fresh;
  }, log);

  /**
   * Creates one topic, retrying what a broker answers while it is still settling: a KRaft broker
   * that has just started (or failed over) answers ApiVersions before its metadata has caught up,
   * and reports a topic it has just created as UNKNOWN_TOPIC_OR_PARTITION for a moment. kafkajs
   * marks those errors retriable but createTopics gives up on them at once, and at start-up that
   * failure would stop the service. A non-retriable error (bad config, no permission) fails fast.
   */
  const numPartitions = opts.numPartitions ?? DEFAULT_TOPIC_PARTITIONS;
  async function createTopicPatiently(topic: string): Promise<void> {
    const created = await patiently({ topic }, () =>
      admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic, numPartitions, replicationFactor: opts.replicationFactor ?? 1 }],
      }),
    );
    if (!created) await checkPartitions(topic);
  }

  /**
   * A topic that existed already (another process created it, or an older deployment with fewer
   * partitions): more partitions than configured is fine; fewer caps how many replicas of a
   * consumer share its work, so say so, and how to grow it, or grow it when allowed.
   */
  async function checkPartitions(topic: string): Promise<void> {
    const meta = await patiently({ topic }, () => admin.fetchTopicMetadata({ topics: [topic] }));
    const have = meta.topics.find((t) => t.name === topic)?.partitions.length ?? 0;
    if (have === 0 || have >= numPartitions) return;
    if (!opts.growPartitions) {
      log.warn(
        { topic, partitions: have, configured: numPartitions },
        `topic ${topic} has ${have} partition(s), fewer than KAFKA_TOPIC_PARTITIONS=${numPartitions}: at most ${have} replica(s) of each consumer work on it. ` +
          `To grow it, stop its producers, wait until every consumer group's lag on it is 0, then run ` +
          `kafka-topics.sh --alter --topic ${topic} --partitions ${numPartitions} (or restart a producer with KAFKA_TOPIC_PARTITIONS_GROW=true); docs/events.md, "Adding partitions"`,
      );
      return;
    }
    log.warn({ topic, from: have, to: numPartitions }, "growing topic partitions (KAFKA_TOPIC_PARTITIONS_GROW)");
    await patiently({ topic }, () => admin.createPartitions({ validateOnly: false, timeout: 10_000, topicPartitions: [{ topic, count: numPartitions }] })).catch(
      (err: unknown) => {
        // Another process grew it first (INVALID_PARTITIONS: the count is no longer larger).
        if (isAlreadyGrown(err)) return;
        throw err;
      },
    );
  }

  const patiently = <T>(about: Record<string, unknown>, fn: () => Promise<T>) =>
    retryWhileRetriable(fn, { timeoutMs: opts.topicCreateTimeoutMs ?? 60_000, onRetry: (err, retryInMs) => log.warn({ ...about, err: String(err), retryInMs }, "topic not ready yet; retrying") });

  const ensured = new Map<string, Promise<void>>();
  function ensureTopics(topics: string[]): Promise<void> {
    const pending = topics.map((topic) => {
      let p = ensured.get(topic);
      if (!p) {
        p = createTopicPatiently(topic);
        // A failed creation is tried again by the next caller rather than remembered.
        p.catch(() => ensured.delete(topic));
        ensured.set(topic, p);
      }
      return p;
    });
    return Promise.all(pending).then(() => undefined);
  }

  /**
   * The first start of a group that replaces others (SubscribeOptions.formerGroups): for each
   * topic on which `group` has committed nothing yet, each partition starts at the least offset
   * the former groups of that topic committed (a partition one of them has no offset for is left
   * to fromBeginning). Everything below that offset was processed by every former group, so
   * nothing is skipped; what lies between it and a former group's own offset is delivered again,
   * and the inbox (kept per handler across the change) recognises it.
   *
   * The offsets are committed the way kafka-consumer-groups.sh --reset-offsets commits them: as no
   * member (generation -1), which the broker accepts only while the group has no live member. So
   * replicas starting together cannot overwrite the progress of one that has already joined: a
   * refusal means another replica got there first, and the offsets are looked at again.
   */
  async function seedFromFormerGroups(group: string, unprefixedTopics: string[], former: FormerGroup[]): Promise<void> {
    const groupId = prefix + group;
    const deadline = Date.now() + (opts.topicCreateTimeoutMs ?? 60_000);
    for (let attempt = 1; ; attempt++) {
      const current = await patiently({ group }, () => admin.fetchOffsets({ groupId, topics: unprefixedTopics.map((t) => prefix + t) }));
      const fresh = unprefixedTopics.filter((t) => !current.find((c) => c.topic === prefix + t)?.partitions.some((p) => Number(p.offset) >= 0));
      if (fresh.length === 0) return;
      const seeds: { topic: string; partitions: { partition: number; offset: string }[] }[] = [];
      const from: Record<string, string[]> = {};
      for (const topic of fresh) {
        const olds = former.filter((f) => f.topics.includes(topic)).map((f) => f.group);
        if (olds.length === 0) continue;
        // partition -> least committed offset over the former groups; null once one has none.
        const least = new Map<number, bigint | null>();
        for (const old of olds) {
          const [committed] = await patiently({ group: old, topic }, () => admin.fetchOffsets({ groupId: prefix + old, topics: [prefix + topic] }));
          for (const p of committed?.partitions ?? []) {
            const offset = BigInt(p.offset);
            const prev = least.get(p.partition);
            if (offset < 0n || prev === null) least.set(p.partition, null);
            else least.set(p.partition, prev === undefined || offset < prev ? offset : prev);
          }
        }
        const partitions = [...least]
          .filter((e): e is [number, bigint] => e[1] !== null)
          .map(([partition, offset]) => ({ partition, offset: offset.toString() }));
        if (partitions.length > 0) {
          seeds.push({ topic: prefix + topic, partitions });
          from[topic] = olds;
        }
      }
      if (seeds.length === 0) return;
      try {
        await commitAsNoMember(groupId, seeds);
        log.info({ group, from, offsets: seeds }, "consumer group started from the offsets of the groups it replaces");
        return;
      } catch (err) {
        // Another replica of this group joined meanwhile (it seeded first), or the coordinator is
        // moving: look again.
        if (Date.now() > deadline) throw err;
        log.debug({ group, err: String(err), attempt }, "could not seed the group's offsets yet; looking again");
        await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** attempt, 2_000)));
      }
    }
  }

  /**
   * OffsetCommit with generation -1 and no member id, to the group's coordinator: what Kafka's
   * AdminClient.alterConsumerGroupOffsets sends. kafkajs' admin offers only setOffsets, which joins
   * the group with a consumer of its own per topic (a rebalance each); the request itself is sent
   * through a kafkajs cluster of the same client (the Kafka object's private factory, pinned like
   * fixIdleRequestQueue to the kafkajs release of package.json). Without it, setOffsets.
   */
  async function commitAsNoMember(groupId: string, seeds: { topic: string; partitions: { partition: number; offset: string }[] }[]): Promise<void> {
    const factory = kafkajsClusterFactory(kafka);
    if (!factory) {
      for (const s of seeds) await admin.setOffsets({ groupId, topic: s.topic, partitions: s.partitions });
      return;
    }
    const cluster = factory({ allowAutoTopicCreation: false });
    await cluster.connect();
    try {
      const coordinator = await cluster.findGroupCoordinator({ groupId });
      await coordinator.offsetCommit({ groupId, groupGenerationId: -1, memberId: "", retentionTime: -1, topics: seeds });
    } finally {
      await cluster.disconnect();
    }
  }

  /** Live consumers, each with the committer of what it has processed (flushed when it closes). */
  const consumers = new Map<Consumer, OffsetCommitter>();
  let closed = false;
  // Groups subscribed by this process (unprefixed), for messaging.kafka.consumer.lag.
  const lagGroups = new Map<string, string[]>();
  observeConsumerLag(async () => {
    const out: ConsumerLag[] = [];
    if (closed) return out;
    for (const [group, topics] of lagGroups) {
      const committed = await admin.fetchOffsets({ groupId: prefix + group, topics: topics.map((t) => prefix + t) });
      for (const t of committed) {
        const ends = await admin.fetchTopicOffsets(t.topic);
        for (const p of t.partitions) {
          const end = ends.find((e) => e.partition === p.partition);
          if (!end) continue;
          // No commit yet: the group starts from the beginning (fromBeginning), so all of it is lag.
          const from = Number(p.offset) >= 0 ? Number(p.offset) : Number(end.low);
          out.push({ group, topic: t.topic.slice(prefix.length), partition: p.partition, lag: Math.max(0, Number(end.high) - from) });
        }
      }
    }
    return out;
  });

  return {
    kind: "kafka",

    async publish(messages: BusMessage[]): Promise<void> {
      if (closed) throw new Error("bus is closed");
      if (messages.length === 0) return;
      const byTopic = new Map<string, BusMessage[]>();
      for (const m of messages) {
        const list = byTopic.get(m.topic) ?? [];
        list.push(m);
        byTopic.set(m.topic, list);
      }
      await ensureTopics([...byTopic.keys()].map((t) => prefix + t));
      await producers.send({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, list]) => ({
          topic: prefix + topic,
          messages: list.map((m) => ({ key: m.key, value: Buffer.from(m.value), headers: { ...m.headers } })),
        })),
      });
    },

    async subscribe(sub: SubscribeOptions): Promise<Subscription> {
      if (closed) throw new Error("bus is closed");
      const topics = sub.topics.map((t) => prefix + t);
      await ensureTopics(topics);
      if (sub.formerGroups?.length) await seedFromFormerGroups(sub.group, sub.topics, sub.formerGroups);
      const batchTopics = new Set((sub.batchTopics ?? sub.topics).map((t) => prefix + t));
      const groupLog = log.child({ group: sub.group });
      lagGroups.set(sub.group, sub.topics);
      let unsubscribed = false;
      let current: Consumer | undefined;
      let restartTimer: NodeJS.Timeout | undefined;
      // Consecutive in-process restarts without a join in between (the back-off grows with them).
      let restarts = 0;

      /**
       * One member of the group: a kafkajs consumer with its offset committer, connected,
       * subscribed and running. Resolves once it joined (or the join timeout passed).
       */
      async function startMember(): Promise<void> {
        const consumer = kafka.consumer({
          groupId: prefix + sub.group,
          allowAutoTopicCreation: false,
          // A fetch is a long poll: the broker answers as soon as a message arrives, so this only
          // bounds how often an idle consumer asks (and how long its stop waits for the fetch in
          // flight). 500 ms made seven idle processes spend a fifth of a core on fetch cycles.
          // 4 s (a heartbeat on every fetch, at the same ~4 s pace, half the fetches) saved ~3
          // wake-ups a second system-wide, but made the Kafka bus contract's rebalance test (a
          // member leaving its group) overrun its 30 s under load: a leaving consumer's stop waits
          // for its fetch in flight (docs/benchmarks.md, "Idle CPU, split mode").
          maxWaitTimeInMs: 2_000,
          // Members notice a rebalance on their next heartbeat: keep that short (a third of the
          // session timeout) so a joining or leaving replica does not stall the group for long.
          // kafkajs heartbeats only after a fetch returns, once this has passed: every ~4 s.
          sessionTimeout: 10_000,
          heartbeatInterval: 3_000,
          retry: { initialRetryTime: 200, maxRetryTime: 10_000, retries: 10 },
        });
        current = consumer;
        const offsets = offsetCommitter(consumer, groupLog);
        consumers.set(consumer, offsets);
        consumer.on(consumer.events.CRASH, ({ payload }) => {
          // A retriable crash is restarted by kafkajs itself; closing the bus is not a failure.
          if (payload.restart || closed || unsubscribed || current !== consumer) return;
          onGivenUp(consumer, payload.error);
        });
        const joined = new Promise<void>((resolve) => {
          const off = consumer.on(consumer.events.GROUP_JOIN, () => {
            off();
            restarts = 0;
            resolve();
          });
        });
        await patiently({ topics, group: sub.group }, () => consumer.connect());
        await patiently({ topics, group: sub.group }, () => consumer.subscribe({ topics, fromBeginning: true }));
        await consumer.run({
          // kafkajs 2.2.4 commits after every fetched batch whenever autoCommit is on, whatever
          // autoCommitInterval says (its runner calls commitOffsets, not commitOffsetsIfNecessary):
          // under load that was an OffsetCommit round trip, and a write to __consumer_offsets, per
          // message per group. Offsets are committed by offsetCommitter instead, at most once a
          // second. What a crash or a rebalance leaves uncommitted is delivered again, and the
          // inbox (subscribeConsumer) recognises it, so the effect still happens once.
          autoCommit: false,
          eachBatchAutoResolve: false,
          // One consumer now serves all of a service's topics (the ledger's six), where each topic
          // had a consumer of its own, working in parallel: fetched batches of up to that many
          // partitions are handled at once (each partition's messages still one after another, as
          // replicas sharing a topic already do), so a slow topic does not hold the others.
          partitionsConsumedConcurrently: Math.min(8, Math.max(1, sub.topics.length)),
          eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
            const topic = batch.topic.startsWith(prefix) ? batch.topic.slice(prefix.length) : batch.topic;
            const messages = batch.messages;
            const batching = !!sub.handleBatch && batchTopics.has(batch.topic);
            try {
              for (let i = 0; i < messages.length && isRunning() && !isStale(); ) {
                const chunk = batching ? messages.slice(i, i + MAX_HANDLED_BATCH) : [messages[i]!];
                const converted = chunk.map((m) => toBusMessage(topic, m));
                if (sub.handleBatch && converted.length > 1) await sub.handleBatch(converted);
                else await sub.handle(converted[0]!);
                const last = chunk[chunk.length - 1]!.offset;
                resolveOffset(last);
                offsets.processed(batch.topic, batch.partition, last);
                i += chunk.length;
                await heartbeat();
              }
            } catch (err) {
              // Keep what did go through: kafkajs fetches again from the failed message, and a
              // restarted consumer from the last committed offset.
              await offsets.flush();
              throw err;
            }
          },
        });
        const joinTimeoutMs = opts.joinTimeoutMs ?? 30_000;
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => resolve("timeout"), joinTimeoutMs);
        });
        if ((await Promise.race([joined, timedOut])) === "timeout") {
          groupLog.warn({ topics }, "consumer has not joined its group yet; continuing");
        }
        clearTimeout(timer);
      }

      /**
       * kafkajs gave this member up without restarting it. A broker that is away or still
       * settling does that too ("Failed to find group coordinator" right after a broker restart
       * is non-retriable to kafkajs), and exiting the process for it only trades a working
       * process for one that cannot start while the broker is away. So the member is replaced in
       * this process, with back-off, for as long as the cause is the broker's availability; any
       * other cause (an authorization refused, a protocol error) stops the subscription for good
       * and is reported (onConsumerStopped).
       */
      function onGivenUp(consumer: Consumer, err: unknown): void {
        const offsets = consumers.get(consumer);
        consumers.delete(consumer);
        void (offsets?.flush() ?? Promise.resolve()).then(() => consumer.disconnect()).catch(() => {});
        if (!isBrokerAvailability(err)) {
          groupLog.error({ topics, err: String(err) }, "consumer stopped for good after a non-retriable error");
          opts.onConsumerStopped?.(sub.group, err);
          return;
        }
        restarts++;
        const delay = Math.min(CONSUMER_RESTART_MAX_MS, 500 * 2 ** Math.min(restarts - 1, 6));
        groupLog.warn({ topics, err: String(err), restarts, retryInMs: delay }, "consumer given up while the broker was unavailable; starting a new one");
        const again = () => {
          restartTimer = undefined;
          if (closed || unsubscribed) return;
          startMember().catch((startErr: unknown) => {
            if (current) onGivenUp(current, startErr);
          });
        };
        restartTimer = setTimeout(again, delay);
      }

      await startMember();
      return {
        async close() {
          unsubscribed = true;
          clearTimeout(restartTimer);
          lagGroups.delete(sub.group);
          const consumer = current;
          if (!consumer) return;
          const offsets = consumers.get(consumer);
          if (!consumers.delete(consumer)) return;
          await offsets?.flush();
          await consumer.disconnect();
        },
      };
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await Promise.allSettled(
        [...consumers].map(async ([c, offsets]) => {
          await offsets.flush();
          await c.disconnect();
        }),
      );
      consumers.clear();
      await Promise.allSettled([producers.close(), admin.disconnect()]);
    },
  };
}

/** The part of a kafkajs Cluster (not exported by the package) the group seeding uses. */
interface KafkajsCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  findGroupCoordinator(opts: { groupId: string }): Promise<{
    offsetCommit(req: {
      groupId: string;
      groupGenerationId: number;
      memberId: string;
      retentionTime: number;
      topics: { topic: string; partitions: { partition: number; offset: string }[] }[];
    }): Promise<unknown>;
  }>;
}

/** The Kafka object's private cluster factory, on the kafkajs release this was written for. */
function kafkajsClusterFactory(kafka: Kafka): ((opts: { allowAutoTopicCreation: boolean }) => KafkajsCluster) | undefined {
  if (kafkajsRequestQueue().version !== KAFKAJS_REQUEST_QUEUE_FIXED_FOR) return undefined;
  const key = Object.getOwnPropertySymbols(kafka).find((s) => s.description === "private:Kafka:createCluster");
  const factory = key ? (kafka as unknown as Record<symbol, unknown>)[key] : undefined;
  return typeof factory === "function" ? (factory as (opts: { allowAutoTopicCreation: boolean }) => KafkajsCluster) : undefined;
}

/** The kafkajs release whose request queue fixIdleRequestQueue corrects (packages/kit/package.json pins it). */
export const KAFKAJS_REQUEST_QUEUE_FIXED_FOR = "2.2.4";

/** A request of kafkajs' request queue (its SocketRequest), as far as the fix needs it. */
export interface KafkajsSocketRequest {
  correlationId: number;
  requestTimeout: number;
  timeoutRequest(): void;
}

/** kafkajs' per-connection request queue (not exported by the package), as far as the fix needs it. */
export interface KafkajsRequestQueue {
  pending: KafkajsSocketRequest[];
  inflight: Map<number, KafkajsSocketRequest>;
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  enforceRequestTimeout: boolean;
  destroy(): void;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
  scheduleRequestTimeoutCheck(): void;
  sendSocketRequest(request: KafkajsSocketRequest): void;
  fulfillRequest(response: { correlationId: number; payload: unknown; size: number }): void;
  rejectAll(error: Error): void;
}

/** kafkajs' RequestQueue class, loaded the way kafkajs loads it itself (one module instance). */
export function kafkajsRequestQueue(): { version: string; RequestQueue: { prototype: KafkajsRequestQueue } } {
  const require = createRequire(import.meta.url);
  const { version } = require("kafkajs/package.json") as { version: string };
  const RequestQueue = require("kafkajs/src/network/requestQueue/index.js") as { prototype: KafkajsRequestQueue };
  return { version, RequestQueue };
}

const FIXED = Symbol.for("corridor.kafkajs.requestQueueFixed");
const DEADLINES = Symbol("corridor.kafkajs.deadlines");
type Queue = KafkajsRequestQueue & { [DEADLINES]?: Map<number, NodeJS.Timeout> };

/**
 * Makes kafkajs' request queue quiet while idle. As released, 2.2.4 wakes every broker connection
 * (the admin's, the producer's, each consumer's) over and over, where on this kind of machine
 * each wake-up of a process costs about 0.2 ms of CPU whatever it does (docs/benchmarks.md,
 * "Idle CPU"):
 *
 * - after each response, scheduleCheckPendingRequests arms a timer even when no request is
 *   waiting and the queue is not throttled, with a negative delay (`throttledUntil` is -1): Node
 *   fires it after 1 ms and it arms the next, a 1 ms loop for as long as the connection lives
 *   (upstream issues #1556 and #1704). The replacement arms what the original does whenever there
 *   is something to do (a check when the broker's throttle ends, or in 10 ms when requests wait
 *   for an in-flight slot) and nothing otherwise: push() calls it again with the request pending,
 *   and a response or a timeout runs checkPendingRequests directly.
 * - request timeouts are enforced by a 100 ms interval per connection that looks at the requests
 *   in flight. Instead, each request sent gets a timer of its own at its timeout, cleared when
 *   its response (or the connection's failure) settles it: a request that is answered in time
 *   never wakes the process, and one that is not times out when due rather than up to 100 ms
 *   later. As before, only requests sent (not those waiting in the queue) time out, and a
 *   queue's destroy() (when its connection disconnects) drops its timers.
 *
 * Applied once per process, only to the release it was written for: another kafkajs version is
 * left as it is (see whether it still needs this, and KAFKAJS_REQUEST_QUEUE_FIXED_FOR).
 */
export function fixIdleRequestQueue(): boolean {
  const { version, RequestQueue } = kafkajsRequestQueue();
  const proto = RequestQueue.prototype as Queue & { [FIXED]?: true };
  if (proto[FIXED]) return true;
  if (version !== KAFKAJS_REQUEST_QUEUE_FIXED_FOR) return false;
  const original = { sendSocketRequest: proto.sendSocketRequest, fulfillRequest: proto.fulfillRequest, rejectAll: proto.rejectAll, destroy: proto.destroy };

  proto.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: Queue) {
    if (this.throttleCheckTimeoutId) return;
    const untilUnthrottled = this.throttledUntil - Date.now();
    let delay: number;
    if (this.pending.length > 0) delay = untilUnthrottled > 0 ? untilUnthrottled : 10;
    else if (untilUnthrottled > 0) delay = untilUnthrottled;
    else return;
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, delay);
  };

  // Called when the connection is established: the original started its interval here.
  proto.scheduleRequestTimeoutCheck = function scheduleRequestTimeoutCheck(this: Queue) {
    if (this.enforceRequestTimeout) this.destroy();
  };

  proto.sendSocketRequest = function sendSocketRequest(this: Queue, request: KafkajsSocketRequest) {
    original.sendSocketRequest.call(this, request);
    // A request that expects no response has already left the in-flight map.
    if (!this.enforceRequestTimeout || this.inflight.get(request.correlationId) !== request) return;
    const deadlines = (this[DEADLINES] ??= new Map());
    clearTimeout(deadlines.get(request.correlationId));
    deadlines.set(
      request.correlationId,
      setTimeout(() => {
        deadlines.delete(request.correlationId);
        if (this.inflight.get(request.correlationId) === request) request.timeoutRequest();
      }, request.requestTimeout),
    );
  };

  proto.fulfillRequest = function fulfillRequest(this: Queue, response) {
    const deadlines = this[DEADLINES];
    if (deadlines) {
      clearTimeout(deadlines.get(response.correlationId));
      deadlines.delete(response.correlationId);
    }
    original.fulfillRequest.call(this, response);
  };

  const dropDeadlines = (queue: Queue) => {
    const deadlines = queue[DEADLINES];
    if (!deadlines) return;
    for (const timer of deadlines.values()) clearTimeout(timer);
    deadlines.clear();
  };

  proto.rejectAll = function rejectAll(this: Queue, error: Error) {
    dropDeadlines(this);
    original.rejectAll.call(this, error);
  };

  proto.destroy = function destroy(this: Queue) {
    dropDeadlines(this);
    original.destroy.call(this);
  };

  proto[FIXED] = true;
  return true;
}

/**
 * Runs `fn`, retrying errors kafkajs marks retriable with backoff (200 ms doubling to 5 s) until
 * `timeoutMs`; a non-retriable error fails at once. Right after a topic is created the broker may
 * still answer UNKNOWN_TOPIC_OR_PARTITION (to createTopics, and to the metadata request a consumer's
 * subscribe makes): kafkajs marks it retriable but those calls give up on it at once, and at
 * start-up that failure would stop the service.
 */
export async function retryWhileRetriable<T>(fn: () => Promise<T>, opts: { timeoutMs: number; onRetry?: (err: unknown, retryInMs: number) => void }): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  for (let delay = 200; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await fn();
    } catch (err) {
      if (!isRetriable(err) || Date.now() + delay > deadline) throw err;
      opts.onRetry?.(err, delay);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/** CreatePartitions refused because the topic has that many already (another process grew it). */
function isAlreadyGrown(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { type?: unknown; errors?: unknown };
  if (Array.isArray(e.errors) && e.errors.length > 0) return e.errors.every(isAlreadyGrown);
  return e.type === "INVALID_PARTITIONS";
}

/** kafkajs flags transient protocol errors and its own timeouts/connection errors as retriable. */
function isRetriable(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { retriable?: unknown; name?: unknown; errors?: unknown };
  if (Array.isArray(e.errors) && e.errors.length > 0) return e.errors.every(isRetriable);
  return e.retriable === true || e.name === "KafkaJSTimeout" || e.name === "KafkaJSConnectionError" || isBrokerAvailability(err);
}

/** The most messages handed to a SubscribeOptions.handleBatch at once (one transaction of the inbox). */
const MAX_HANDLED_BATCH = 100;

/**
 * The bus's producer, replaced after a send that failed. An idempotent producer numbers its
 * batches per partition, and a send that failed with its outcome unknown (the broker stopped
 * after writing the batch, before answering) leaves kafkajs' numbering behind the broker's: the
 * relay's next attempt (other rows, another count) is then refused as OUT_OF_ORDER_SEQUENCE_NUMBER,
 * for good, and every later publish to that partition with it, until the process restarts. A new
 * producer gets a new producer id, whose numbering starts afresh. Nothing relies on the
 * idempotent producer for exactly-once (consumers deduplicate by event id), so replacing it
 * loses nothing; it costs one InitProducerId after a failure.
 */
export function replaceableProducer(
  first: Pick<Producer, "sendBatch" | "disconnect">,
  replace: () => Promise<Pick<Producer, "sendBatch" | "disconnect">>,
  log: Pick<Logger, "warn">,
) {
  type P = Pick<Producer, "sendBatch" | "disconnect">;
  let current: Promise<P> = Promise.resolve(first);
  let closed = false;
  return {
    async send(batch: Parameters<Producer["sendBatch"]>[0]): Promise<void> {
      let attempt = current;
      let producer: P;
      try {
        producer = await attempt;
      } catch {
        // A replacement that could not connect is tried again by this send.
        if (current === attempt) current = replace();
        attempt = current;
        producer = await attempt;
      }
      try {
        await producer.sendBatch(batch);
      } catch (err) {
        if (!closed && current === attempt) {
          log.warn({ err: String(err) }, "a publish failed; the next one goes through a new producer (fresh batch numbering)");
          void producer.disconnect().catch(() => {});
          current = replace();
          current.catch(() => {});
        }
        throw err;
      }
    },
    async close(): Promise<void> {
      closed = true;
      const producer = await current.catch(() => undefined);
      await producer?.disconnect();
    },
  };
}

/** The longest pause between in-process restarts of a consumer kafkajs gave up on (see onGivenUp). */
const CONSUMER_RESTART_MAX_MS = 15_000;

/**
 * Whether an error means only that the broker was away or still settling: a connection refused
 * or closed, a request that timed out, retries run out on such causes, no coordinator found, or
 * any error kafkajs marks retriable, anywhere along its chain of causes.
 */
export function isBrokerAvailability(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; typeof e === "object" && e !== null && depth < 8; depth++) {
    const x = e as { name?: unknown; message?: unknown; retriable?: unknown; type?: unknown; cause?: unknown; originalError?: unknown };
    if (x.retriable === true) return true;
    if (typeof x.name === "string" && BROKER_AVAILABILITY_ERRORS.has(x.name)) return true;
    if (typeof x.type === "string" && BROKER_AVAILABILITY_TYPES.has(x.type)) return true;
    if (typeof x.message === "string" && /coordinator|ECONNREFUSED|ECONNRESET|Closed connection|Connection error/i.test(x.message)) return true;
    e = x.cause ?? x.originalError;
  }
  return false;
}

const BROKER_AVAILABILITY_ERRORS = new Set([
  "KafkaJSConnectionError",
  "KafkaJSConnectionClosedError",
  "KafkaJSRequestTimeoutError",
  "KafkaJSTimeout",
  "KafkaJSBrokerNotFound",
  "KafkaJSGroupCoordinatorNotFound",
  "KafkaJSNumberOfRetriesExceeded",
]);

const BROKER_AVAILABILITY_TYPES = new Set(["COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS", "LEADER_NOT_AVAILABLE", "NOT_LEADER_FOR_PARTITION", "REQUEST_TIMED_OUT"]);

/** How long processed offsets may wait before they are committed (what a crash delivers again). */
const OFFSET_COMMIT_INTERVAL_MS = 1_000;

/**
 * Commits a consumer's processed offsets at most once per OFFSET_COMMIT_INTERVAL_MS, and only
 * while there is something to commit (an idle consumer arms no timer). flush() commits at once
 * (a failed handler, a consumer stopping). A failed commit is dropped, not retried: the messages
 * it covered are delivered again after a restart or a rebalance, and the inbox skips them.
 */
type OffsetCommitter = ReturnType<typeof offsetCommitter>;

function offsetCommitter(consumer: Consumer, log: Logger) {
  const pending = new Map<string, { topic: string; partition: number; offset: string }>();
  let timer: NodeJS.Timeout | undefined;
  const flush = async (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    if (pending.size === 0) return;
    const offsets = [...pending.values()];
    pending.clear();
    try {
      await consumer.commitOffsets(offsets);
    } catch (err) {
      log.debug({ err: String(err) }, "offset commit failed; those messages may be delivered again");
    }
  };
  return {
    /** `offset` of `topic`/`partition` has been handled: the next one to read is offset + 1. */
    processed(topic: string, partition: number, offset: string): void {
      pending.set(`${topic}/${partition}`, { topic, partition, offset: (BigInt(offset) + 1n).toString() });
      timer ??= setTimeout(() => void flush(), OFFSET_COMMIT_INTERVAL_MS);
    },
    flush,
  };
}

function toBusMessage(topic: string, message: KafkaMessage): BusMessage {
  return {
    topic,
    key: message.key?.toString("utf8") ?? "",
    value: message.value ? new Uint8Array(message.value) : new Uint8Array(),
    headers: headersToStrings(message.headers),
  };
}

function headersToStrings(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const v = Array.isArray(value) ? value[value.length - 1] : value;
    if (v === undefined) continue;
    out[name] = typeof v === "string" ? v : v.toString("utf8");
  }
  return out;
}

/** kafkajs logs through pino, one level quieter: its INFO chatter is our debug. */
/**
 * kafkajs lines that look alarming but are expected here, logged at debug:
 * - a CreateTopics answer carrying TOPIC_ALREADY_EXISTS (every service ensures the topics it uses;
 *   a real creation failure rejects the call and is reported by the caller);
 * - the idempotent producer's note that limited retries may break exactly-once: we do not rely on
 *   exactly-once — a publish that fails is retried by the outbox relay and consumers deduplicate;
 * - a heartbeat answered REBALANCE_IN_PROGRESS: how every member learns that a replica joined or
 *   left its group (kafkajs then logs "re-joining" at warn, which stays).
 */
function isExpectedNoise(message: string, extra: Record<string, unknown>): boolean {
  if (message.startsWith("Response CreateTopics") && extra.error === "Topic creation errors") return true;
  if (message.startsWith("Response Heartbeat") && extra.error === "The group is rebalancing, so a rejoin is needed") return true;
  return message.startsWith("Limiting retries for the idempotent producer");
}

function pinoLogCreator(log: Logger) {
  return () =>
    ({ level, log: entry }: LogEntry) => {
      const { message, ...extra } = entry;
      const fields = { kafkajs: extra };
      if (isExpectedNoise(message, extra)) log.debug(fields, message);
      else if (level === logLevel.ERROR) log.error(fields, message);
      else if (level === logLevel.WARN) log.warn(fields, message);
      else if (level === logLevel.INFO) log.debug(fields, message);
      else log.trace(fields, message);
    };
}
