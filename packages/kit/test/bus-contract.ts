import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Bus, BusMessage } from "../src/bus/types.js";

/**
 * The behaviour every bus adapter owes the services, run against each adapter. Nothing here
 * waits on the clock: each test waits for the messages it expects (the suite's timeout bounds it).
 */
export function busContract(
  name: string,
  makeBus: () => Promise<Bus>,
  opts: {
    skip?: string;
    /**
     * Where publish() is durable: "consumers" when it resolves only after every subscribed group
     * processed the message (in-process), "broker" when the broker's ack is enough (Kafka).
     */
    durableAt: "consumers" | "broker";
  },
): void {
  describe.skipIf(Boolean(opts.skip))(`bus contract: ${name}`, () => {
    let bus: Bus;
    const unique = () => randomBytes(4).toString("hex");

    beforeEach(async () => {
      bus = await makeBus();
    });
    afterEach(async () => {
      await bus.close();
    });

    const text = (m: BusMessage) => new TextDecoder().decode(m.value);
    const msg = (topic: string, key: string, body: string, headers: Record<string, string> = {}): BusMessage => ({
      topic,
      key,
      value: new TextEncoder().encode(body),
      headers,
    });

    /** Collects what a handler sees and resolves once `done(seen)` holds. */
    function recorder(done: (seen: BusMessage[]) => boolean) {
      const seen: BusMessage[] = [];
      let resolve!: () => void;
      const finished = new Promise<void>((r) => (resolve = r));
      return {
        seen,
        finished,
        handle: async (m: BusMessage) => {
          seen.push(m);
          if (done(seen)) resolve();
        },
      };
    }

    it("delivers topic, key, value and string headers unchanged", async () => {
      const topic = `contract.${unique()}`;
      const r = recorder((s) => s.length >= 1);
      await bus.subscribe({ group: `g-${unique()}`, topics: [topic], handle: r.handle });
      const headers = { "event-id": "Evt:1", "event-type": "TEST", traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" };
      await bus.publish([{ topic, key: "Platform:1", value: new Uint8Array([0, 1, 2, 255]), headers }]);
      await r.finished;
      expect(r.seen[0]).toEqual({ topic, key: "Platform:1", value: new Uint8Array([0, 1, 2, 255]), headers });
    });

    it("gives every group each message, and shares a group's messages among its members without duplicates", async () => {
      const topic = `contract.${unique()}`;
      const bodies = ["a", "b", "c", "d", "end"];
      const groupA1 = recorder(() => false);
      const groupA2 = recorder(() => false);
      const groupB = recorder((s) => s.some((m) => text(m) === "end"));
      const aDone = new Promise<void>((resolve) => {
        const check = () => [...groupA1.seen, ...groupA2.seen].some((m) => text(m) === "end") && resolve();
        const wrap = (h: (m: BusMessage) => Promise<void>) => async (m: BusMessage) => {
          await h(m);
          check();
        };
        groupA1.handle = wrap(groupA1.handle);
        groupA2.handle = wrap(groupA2.handle);
      });
      const a = `ga-${unique()}`;
      await bus.subscribe({ group: a, topics: [topic], handle: (m) => groupA1.handle(m) });
      await bus.subscribe({ group: a, topics: [topic], handle: (m) => groupA2.handle(m) });
      await bus.subscribe({ group: `gb-${unique()}`, topics: [topic], handle: groupB.handle });
      // One key: "end" arrives after everything before it, in every group.
      await bus.publish(bodies.map((b) => msg(topic, "k", b)));
      await Promise.all([aDone, groupB.finished]);
      expect(groupB.seen.map(text)).toEqual(bodies);
      expect([...groupA1.seen, ...groupA2.seen].map(text).sort()).toEqual([...bodies].sort());
    });

    it("redelivers a message whose handler threw, and holds later messages of that key until it succeeds", async () => {
      const topic = `contract.${unique()}`;
      const attempts: string[] = [];
      let failuresLeft = 2;
      let resolve!: () => void;
      const done = new Promise<void>((r) => (resolve = r));
      await bus.subscribe({
        group: `g-${unique()}`,
        topics: [topic],
        handle: async (m) => {
          attempts.push(text(m));
          if (text(m) === "first" && failuresLeft > 0) {
            failuresLeft--;
            throw new Error("handler failed on purpose");
          }
          if (text(m) === "second") resolve();
        },
      });
      await bus.publish([msg(topic, "k", "first"), msg(topic, "k", "second")]);
      await done;
      expect(attempts).toEqual(["first", "first", "first", "second"]);
    });

    it("keeps the order of messages with the same key across publishes", async () => {
      const topic = `contract.${unique()}`;
      const perKey = 15;
      const r = recorder((s) => s.length >= perKey * 2);
      await bus.subscribe({ group: `g-${unique()}`, topics: [topic], handle: r.handle });
      for (let i = 0; i < perKey; i++) {
        await bus.publish([msg(topic, "x", `x${i}`), msg(topic, "y", `y${i}`)]);
      }
      await r.finished;
      const of = (key: string) => r.seen.filter((m) => m.key === key).map(text);
      expect(of("x")).toEqual(Array.from({ length: perKey }, (_, i) => `x${i}`));
      expect(of("y")).toEqual(Array.from({ length: perKey }, (_, i) => `y${i}`));
    });

    const durability =
      opts.durableAt === "consumers"
        ? "resolves publish only after every subscribed group's handler has processed the message"
        : "resolves publish on the broker's ack, without waiting for consumers";
    it(durability, async () => {
      const topic = `contract.${unique()}`;
      let openGate!: () => void;
      const gate = new Promise<void>((r) => (openGate = r));
      let entered!: () => void;
      const slowEntered = new Promise<void>((r) => (entered = r));
      let slowDone = false;
      const fast = recorder((s) => s.length >= 1);
      await bus.subscribe({ group: `fast-${unique()}`, topics: [topic], handle: fast.handle });
      await bus.subscribe({
        group: `slow-${unique()}`,
        topics: [topic],
        handle: async () => {
          entered();
          await gate;
          slowDone = true;
        },
      });
      let publishResolved = false;
      const publishing = bus.publish([msg(topic, "k", "one")]).then(() => {
        publishResolved = true;
      });
      if (opts.durableAt === "consumers") {
        // Both groups got it and one has finished, but the slow one is still working on it.
        await Promise.all([slowEntered, fast.finished]);
        await new Promise((r) => setImmediate(r));
        expect(publishResolved).toBe(false);
        openGate();
        await publishing;
        expect(slowDone).toBe(true);
      } else {
        // The slow group has not finished (its gate is closed), yet publish resolved.
        await publishing;
        expect(slowDone).toBe(false);
        openGate();
        await slowEntered;
      }
    });

    it("stops delivering to a member once its subscription is closed", async () => {
      const topic = `contract.${unique()}`;
      const group = `g-${unique()}`;
      const leaving = recorder(() => false);
      const staying = recorder((s) => s.some((m) => text(m) === "end"));
      const sub = await bus.subscribe({ group, topics: [topic], handle: leaving.handle });
      await bus.subscribe({ group, topics: [topic], handle: staying.handle });
      await sub.close();
      await bus.publish([msg(topic, "k", "one"), msg(topic, "k", "end")]);
      await staying.finished;
      expect(leaving.seen).toEqual([]);
      expect(staying.seen.map(text)).toEqual(["one", "end"]);
    });
  });
}
