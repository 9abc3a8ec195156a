import type { Logger } from "../log.js";
import type { Bus, BusMessage, SubscribeOptions, Subscription } from "./types.js";

/**
 * The bus of embedded mode: no broker, same guarantees the services rely on from Kafka.
 * - Each consumer group gets every message of its topics once, shared among its members.
 * - At least once: a handler that throws gets the same message again after a backoff, and the
 *   messages behind it with the same key wait (order per key); other keys carry on.
 * - publish() resolves only once every group subscribed to the topic has processed the message
 *   (its handler resolved). Memory is not durable, so this is what lets the outbox relay mark a
 *   row published: until then the row stays in the database and a restart publishes it again.
 *   A message that always fails therefore holds its publish (and its key) forever, as a poison
 *   message stalls a Kafka partition; a group whose members have all left holds it until a member
 *   comes back or the bus closes. close() rejects every publish still waiting.
 * - A group that subscribes late still sees what was published before it (up to `retainPerTopic`
 *   messages per topic), as a new Kafka group reading from the beginning would. A publish made
 *   while no group is subscribed to its topic resolves at once.
 * - A member with `handleBatch` is handed, for its batch topics, the messages of one topic that
 *   are ready together (up to `maxBatch`: the queued messages of every key of that topic not being
 *   handled or waiting for a redelivery, each key's in order), as a Kafka fetch hands a
 *   partition's; the keys taken wait until the call ends. A batch that throws is delivered again
 *   message by message (`handle`, with the usual back-off), so a message that keeps failing holds
 *   only its own key, never the keys it happened to be batched with.
 */
export interface InProcessBusOptions {
  log?: Logger;
  /** First redelivery delay after a throwing handler; doubles per attempt. */
  retryInitialMs?: number;
  /** Cap of the redelivery delay. */
  retryMaxMs?: number;
  /** How many past messages per topic a group that subscribes later still receives (default 1000). */
  retainPerTopic?: number;
  /** The most messages handed to one `handleBatch` call (default 100, as the Kafka bus). */
  maxBatch?: number;
}

interface Member {
  topics: Set<string>;
  handle: SubscribeOptions["handle"];
  handleBatch?: SubscribeOptions["handleBatch"];
  /** The topics whose ready messages go to handleBatch together. */
  batchTopics: Set<string>;
  closed: boolean;
  inFlight: Set<Promise<void>>;
}

/** One publish() call waiting for each (group, message) delivery it caused to be processed. */
interface PendingPublish {
  remaining: number;
  settled: boolean;
  resolve(): void;
  reject(err: Error): void;
}

interface LaneItem {
  message: BusMessage;
  /** Absent for retained messages replayed to a late group: nobody is waiting for those. */
  waiter?: PendingPublish;
}

/** Messages of one (topic, key) for one group, handled strictly one after another. */
interface Lane {
  topic: string;
  items: LaneItem[];
  busy: boolean;
  attempts: number;
  timer?: NodeJS.Timeout;
}

interface Group {
  name: string;
  topics: Set<string>;
  members: Member[];
  lanes: Map<string, Lane>;
  nextMember: number;
}

export function createInProcessBus(opts: InProcessBusOptions = {}): Bus {
  const retryInitialMs = opts.retryInitialMs ?? 100;
  const retryMaxMs = opts.retryMaxMs ?? 10_000;
  const retainPerTopic = opts.retainPerTopic ?? 1_000;
  const maxBatch = opts.maxBatch ?? 100;
  const log = opts.log;

  const groups = new Map<string, Group>();
  const history = new Map<string, BusMessage[]>();
  let closed = false;

  const copy = (m: BusMessage): BusMessage => ({ topic: m.topic, key: m.key, value: m.value, headers: { ...m.headers } });

  function delivered(waiter: PendingPublish | undefined): void {
    if (!waiter || waiter.settled) return;
    waiter.remaining--;
    if (waiter.remaining === 0) {
      waiter.settled = true;
      waiter.resolve();
    }
  }

  function enqueue(group: Group, message: BusMessage, waiter?: PendingPublish): void {
    const laneKey = `${message.topic}\u0000${message.key}`;
    let lane = group.lanes.get(laneKey);
    if (!lane) {
      lane = { topic: message.topic, items: [], busy: false, attempts: 0 };
      group.lanes.set(laneKey, lane);
    }
    lane.items.push({ message: copy(message), waiter });
    schedule(group, laneKey, lane, 0);
  }

  function schedule(group: Group, laneKey: string, lane: Lane, delayMs: number): void {
    if (closed || lane.busy || lane.timer) return;
    // Never deliver inside publish()'s call stack: handlers run on a later turn of the event loop.
    lane.timer = setTimeout(() => {
      lane.timer = undefined;
      void deliver(group, laneKey, lane);
    }, delayMs);
  }

  function pickMember(group: Group, topic: string): Member | undefined {
    const live = group.members.filter((m) => !m.closed && m.topics.has(topic));
    if (live.length === 0) return undefined;
    const member = live[group.nextMember % live.length];
    group.nextMember++;
    return member;
  }

  /**
   * What one call hands over: the lane's first message, or, when the member batches its topic and
   * the lane is not being redelivered, the queued messages of every lane of that topic that is
   * free and not waiting for a redelivery (each lane's in order, up to maxBatch in all).
   */
  function take(group: Group, laneKey: string, lane: Lane, member: Member): { lane: Lane; laneKey: string; count: number }[] {
    if (!member.handleBatch || !member.batchTopics.has(lane.topic) || lane.attempts > 0) return [{ lane, laneKey, count: 1 }];
    const taken = [{ lane, laneKey, count: Math.min(lane.items.length, maxBatch) }];
    let room = maxBatch - taken[0]!.count;
    for (const [key, other] of group.lanes) {
      if (room === 0) break;
      if (other === lane || other.topic !== lane.topic || other.busy || other.attempts > 0 || other.items.length === 0) continue;
      const count = Math.min(other.items.length, room);
      taken.push({ lane: other, laneKey: key, count });
      room -= count;
    }
    return taken;
  }

  async function deliver(group: Group, laneKey: string, lane: Lane): Promise<void> {
    const item = lane.items[0];
    if (closed || lane.busy || !item) {
      if (!item) group.lanes.delete(laneKey);
      return;
    }
    // No member for this topic right now: the message waits, as it would in a Kafka group.
    const member = pickMember(group, item.message.topic);
    if (!member) return;
    const taken = take(group, laneKey, lane, member);
    for (const t of taken) {
      t.lane.busy = true;
      // A lane taken into another's batch no longer needs its own turn.
      if (t.lane.timer) clearTimeout(t.lane.timer);
      t.lane.timer = undefined;
    }
    const items = taken.flatMap((t) => t.lane.items.slice(0, t.count));
    let ok = false;
    const run = (async () => {
      try {
        if (items.length > 1) await member.handleBatch!(items.map((i) => copy(i.message)));
        else await member.handle(copy(item.message));
        ok = true;
      } catch (err) {
        for (const t of taken) t.lane.attempts++;
        log?.warn(
          { err, group: group.name, topic: item.message.topic, key: item.message.key, messages: items.length, attempt: lane.attempts },
          "bus handler failed; redelivering",
        );
      }
    })();
    member.inFlight.add(run);
    await run;
    member.inFlight.delete(run);
    for (const t of taken) {
      t.lane.busy = false;
      if (ok) {
        for (const done of t.lane.items.splice(0, t.count)) delivered(done.waiter);
        t.lane.attempts = 0;
        if (t.lane.items.length === 0) {
          group.lanes.delete(t.laneKey);
          continue;
        }
        schedule(group, t.laneKey, t.lane, 0);
      } else {
        // Each key again on its own (attempts > 0: never batched), so one that keeps failing holds only itself.
        schedule(group, t.laneKey, t.lane, Math.min(retryMaxMs, retryInitialMs * 2 ** (t.lane.attempts - 1)));
      }
    }
  }

  function wake(group: Group): void {
    for (const [laneKey, lane] of group.lanes) schedule(group, laneKey, lane, 0);
  }

  return {
    kind: "in-process",

    publish(messages: BusMessage[]): Promise<void> {
      if (closed) return Promise.reject(new Error("bus is closed"));
      return new Promise<void>((resolve, reject) => {
        const waiter: PendingPublish = { remaining: 0, settled: false, resolve, reject };
        for (const message of messages) {
          let past = history.get(message.topic);
          if (!past) history.set(message.topic, (past = []));
          past.push(copy(message));
          if (past.length > retainPerTopic) past.shift();
          for (const group of groups.values()) {
            if (!group.topics.has(message.topic)) continue;
            waiter.remaining++;
            enqueue(group, message, waiter);
          }
        }
        if (waiter.remaining === 0) {
          waiter.settled = true;
          resolve();
        }
      });
    },

    async subscribe(sub: SubscribeOptions): Promise<Subscription> {
      if (closed) throw new Error("bus is closed");
      let group = groups.get(sub.group);
      if (!group) {
        group = { name: sub.group, topics: new Set(), members: [], lanes: new Map(), nextMember: 0 };
        groups.set(sub.group, group);
      }
      const member: Member = {
        topics: new Set(sub.topics),
        handle: sub.handle,
        ...(sub.handleBatch ? { handleBatch: sub.handleBatch } : {}),
        batchTopics: new Set(sub.handleBatch ? (sub.batchTopics ?? sub.topics) : []),
        closed: false,
        inFlight: new Set(),
      };
      group.members.push(member);
      for (const topic of sub.topics) {
        if (group.topics.has(topic)) continue;
        // First member of this group on this topic: the group starts from the retained history.
        group.topics.add(topic);
        for (const message of history.get(topic) ?? []) enqueue(group, message);
      }
      const g = group;
      wake(g);
      return {
        async close() {
          if (member.closed) return;
          member.closed = true;
          g.members = g.members.filter((m) => m !== member);
          // Whatever this member was handling finishes (and, if it fails, is redelivered to another).
          // Its group stays: messages for it wait, and so do their publishes.
          await Promise.allSettled([...member.inFlight]);
          wake(g);
        },
      };
    },

    async close(): Promise<void> {
      closed = true;
      const running: Promise<void>[] = [];
      for (const group of groups.values()) {
        for (const lane of group.lanes.values()) {
          if (lane.timer) clearTimeout(lane.timer);
          lane.timer = undefined;
        }
        for (const m of group.members) {
          m.closed = true;
          running.push(...m.inFlight);
        }
      }
      // Handlers already running finish (their publishes may still resolve); everything else is
      // dropped and its publish rejected, so the outbox keeps those rows for the next start.
      await Promise.allSettled(running);
      const gone = new Error("bus closed before the message was processed by every consumer group");
      for (const group of groups.values()) {
        for (const lane of group.lanes.values()) {
          for (const item of lane.items) {
            if (item.waiter && !item.waiter.settled) {
              item.waiter.settled = true;
              item.waiter.reject(gone);
            }
          }
          lane.items = [];
        }
        group.lanes.clear();
      }
    },
  };
}
