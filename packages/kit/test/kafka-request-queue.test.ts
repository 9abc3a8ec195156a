import { createRequire } from "node:module";
import { KafkaJSRequestTimeoutError } from "kafkajs";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { fixIdleRequestQueue, KAFKAJS_REQUEST_QUEUE_FIXED_FOR, kafkajsRequestQueue } from "../src/bus/kafka.js";

// kafkajs' own per-connection request queue, driven the way its Connection drives it: push() a
// request (sendRequest writes it to the socket), fulfillRequest() when the response arrives,
// rejectAll() when the socket fails, destroy() when it disconnects.
interface Queue {
  push(request: { entry: Entry; expectResponse: boolean; sendRequest: () => void; requestTimeout?: number }): void;
  fulfillRequest(response: { correlationId: number; payload: unknown; size: number }): void;
  rejectAll(error: Error): void;
  maybeThrottle(ms: number): void;
  scheduleRequestTimeoutCheck(): void;
  destroy(): void;
}
interface Entry {
  correlationId: number;
  apiName: string;
  apiKey: number;
  apiVersion: number;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

function newQueue(opts: { maxInFlightRequests?: number; requestTimeout?: number } = {}): Queue {
  const { RequestQueue } = kafkajsRequestQueue() as unknown as { RequestQueue: new (o: object) => Queue };
  const queue = new RequestQueue({
    maxInFlightRequests: opts.maxInFlightRequests ?? null,
    requestTimeout: opts.requestTimeout ?? 1_000,
    enforceRequestTimeout: true,
    clientId: "test",
    broker: "127.0.0.1:9092",
    logger: silent,
    isConnected: () => true,
  });
  // As Connection does once its socket connects.
  queue.scheduleRequestTimeoutCheck();
  return queue;
}

let nextId = 1;
/** Pushes one request; `sent` tells whether it went to the socket, `settled` how it ended. */
function send(queue: Queue) {
  const correlationId = nextId++;
  const state = { correlationId, sent: false, settled: undefined as undefined | "resolved" | Error };
  queue.push({
    entry: {
      correlationId,
      apiName: "Fetch",
      apiKey: 1,
      apiVersion: 11,
      resolve: () => (state.settled = "resolved"),
      reject: (e) => (state.settled = e as Error),
    },
    expectResponse: true,
    sendRequest: () => (state.sent = true),
  });
  return state;
}
const answer = (queue: Queue, correlationId: number) => queue.fulfillRequest({ correlationId, payload: Buffer.alloc(0), size: 0 });

describe("kafkajs request queue, fixed to stay quiet while idle", () => {
  beforeAll(() => {
    expect(fixIdleRequestQueue()).toBe(true);
  });
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("applies to the pinned kafkajs release, once", () => {
    const require = createRequire(import.meta.url);
    expect(require("kafkajs/package.json").version).toBe(KAFKAJS_REQUEST_QUEUE_FIXED_FOR);
    expect(fixIdleRequestQueue()).toBe(true);
  });

  it("arms no timer once a request is answered and nothing waits (2.2.4 looped every 1 ms)", () => {
    const queue = newQueue();
    expect(vi.getTimerCount()).toBe(0);
    const r = send(queue);
    expect(r.sent).toBe(true);
    answer(queue, r.correlationId);
    expect(r.settled).toBe("resolved");
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("times a request out exactly at its timeout, and never one answered in time", () => {
    const queue = newQueue({ requestTimeout: 1_000 });
    const late = send(queue);
    const prompt = send(queue);
    vi.advanceTimersByTime(500);
    answer(queue, prompt.correlationId);
    vi.advanceTimersByTime(499);
    expect(late.settled).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(late.settled).toBeInstanceOf(KafkaJSRequestTimeoutError);
    expect(prompt.settled).toBe("resolved");
    expect(vi.getTimerCount()).toBe(0);
    // A response that arrives after the timeout finds nothing to settle.
    answer(queue, late.correlationId);
    expect(late.settled).toBeInstanceOf(KafkaJSRequestTimeoutError);
  });

  it("sends requests waiting for an in-flight slot as slots free up", () => {
    const queue = newQueue({ maxInFlightRequests: 1 });
    const first = send(queue);
    const second = send(queue);
    expect([first.sent, second.sent]).toEqual([true, false]);
    answer(queue, first.correlationId);
    expect(second.sent).toBe(true);
    answer(queue, second.correlationId);
    expect(second.settled).toBe("resolved");
    vi.advanceTimersByTime(10_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("holds requests while the broker throttles the client, and sends them when it ends", () => {
    const queue = newQueue();
    queue.maybeThrottle(500);
    const r = send(queue);
    vi.advanceTimersByTime(499);
    expect(r.sent).toBe(false);
    vi.advanceTimersByTime(1);
    expect(r.sent).toBe(true);
    answer(queue, r.correlationId);
    vi.advanceTimersByTime(10_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("drops the timeouts of requests the connection's failure rejected, and of a destroyed queue", () => {
    const failing = newQueue();
    const r = send(failing);
    failing.rejectAll(new Error("Closed connection"));
    expect((r.settled as Error).message).toBe("Closed connection");
    expect(vi.getTimerCount()).toBe(0);

    const closing = newQueue();
    send(closing);
    closing.destroy();
    expect(vi.getTimerCount()).toBe(0);
  });
});
