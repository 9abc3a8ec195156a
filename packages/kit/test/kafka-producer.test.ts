import { describe, expect, it } from "vitest";
import { replaceableProducer } from "../src/bus/kafka.js";

/** A stand-in for a kafkajs producer: records what it sent, fails the sends it is told to. */
function fakeProducer(name: string, failures: Error[] = []) {
  const sent: string[] = [];
  let disconnected = false;
  return {
    name,
    sent,
    get disconnected() {
      return disconnected;
    },
    async sendBatch(batch: { topicMessages?: { topic: string }[] }) {
      const failure = failures.shift();
      if (failure) throw failure;
      sent.push(...(batch.topicMessages ?? []).map((t) => t.topic));
      return [];
    },
    async disconnect() {
      disconnected = true;
    },
  };
}

const outOfOrder = () => Object.assign(new Error("The broker received an out of order sequence number"), { type: "OUT_OF_ORDER_SEQUENCE_NUMBER", retriable: false });
const quietLog = { warn: () => {} };

describe("replaceableProducer (the bus's producer after a failed publish)", () => {
  it("sends through the same producer while its sends succeed", async () => {
    const first = fakeProducer("first");
    let replacements = 0;
    const producers = replaceableProducer(first, async () => (replacements++, fakeProducer("spare")), quietLog);
    await producers.send({ topicMessages: [{ topic: "a", messages: [] }] });
    await producers.send({ topicMessages: [{ topic: "b", messages: [] }] });
    expect(first.sent).toEqual(["a", "b"]);
    expect(replacements).toBe(0);
  });

  it("after a failed send, disconnects that producer and sends the next publish through a new one", async () => {
    const first = fakeProducer("first", [outOfOrder(), outOfOrder()]);
    const second = fakeProducer("second");
    const made = [second];
    const producers = replaceableProducer(first, async () => made.shift()!, quietLog);
    await expect(producers.send({ topicMessages: [{ topic: "a", messages: [] }] })).rejects.toThrow(/out of order/);
    expect(first.disconnected).toBe(true);
    await producers.send({ topicMessages: [{ topic: "a", messages: [] }] });
    expect(second.sent).toEqual(["a"]);
    expect(first.sent).toEqual([]);
  });

  it("a replacement that could not connect is made again by the next publish", async () => {
    const first = fakeProducer("first", [outOfOrder()]);
    const third = fakeProducer("third");
    let calls = 0;
    const producers = replaceableProducer(
      first,
      async () => {
        calls++;
        if (calls === 1) throw new Error("Connection error: connect ECONNREFUSED");
        return third;
      },
      quietLog,
    );
    await expect(producers.send({ topicMessages: [{ topic: "a", messages: [] }] })).rejects.toThrow(/out of order/);
    // The first replacement failed to connect in the background; this publish makes another.
    await producers.send({ topicMessages: [{ topic: "b", messages: [] }] });
    expect(third.sent).toEqual(["b"]);
    expect(calls).toBe(2);
  });
});
