import { KafkaJSNonRetriableError, KafkaJSProtocolError } from "kafkajs";
import { describe, expect, it } from "vitest";
import { retryWhileRetriable } from "../src/bus/kafka.js";

// kafkajs' own error for a topic the broker does not know yet (code 3), as a fresh topic's first
// metadata request can get; it is marked retriable.
const unknownTopic = () => new KafkaJSProtocolError("This server does not host this topic-partition");

describe("retryWhileRetriable (topic creation and consumer subscribe)", () => {
  it("retries UNKNOWN_TOPIC_OR_PARTITION until the broker has caught up, then answers", async () => {
    let calls = 0;
    const retries: number[] = [];
    const value = await retryWhileRetriable(
      async () => {
        if (++calls < 3) throw unknownTopic();
        return "subscribed";
      },
      { timeoutMs: 10_000, onRetry: (_err, ms) => retries.push(ms) },
    );
    expect(value).toBe("subscribed");
    expect(calls).toBe(3);
    expect(retries).toEqual([200, 400]);
  });

  it("fails at once on a non-retriable error, and gives up on retriable ones at the deadline", async () => {
    let calls = 0;
    await expect(
      retryWhileRetriable(async () => {
        calls++;
        throw new KafkaJSNonRetriableError("bad config");
      }, { timeoutMs: 10_000 }),
    ).rejects.toThrow("bad config");
    expect(calls).toBe(1);

    calls = 0;
    await expect(
      retryWhileRetriable(async () => {
        calls++;
        throw unknownTopic();
      }, { timeoutMs: 100 }),
    ).rejects.toThrow("does not host");
    expect(calls).toBe(1);
  });
});
