import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One answer the careful client got (or the network error in its place). */
export interface Observation {
  method: string;
  path: string;
  /** HTTP status, or 0 for a network error (refused, reset, timed out). */
  status: number;
  code?: string;
  at: number;
  /** How long the attempt took, ms (to its answer or its network error). */
  ms: number;
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
  /** Tries it took (1: the first answer was definitive). */
  tries: number;
}

/** Answers a careful client tries again: the server said so, or may not have seen the request. */
const RETRIED_STATUSES = new Set([502, 503, 504, 429]);
/** The first request under a key is still running (decisions §3): wait and ask again. */
const IN_USE = "IDEMPOTENCY_KEY_IN_USE";

/**
 * A platform's API client as a careful integrator writes one: every money-moving POST carries an
 * Idempotency-Key that its retries reuse, and a 502/503/504/429 or a network error (refused, reset,
 * no answer in time) is tried again with a capped exponential back-off, up to a deadline. Every
 * answer is recorded, so a suite can count the 500s (never retried away silently: a 500 is recorded
 * and then tried again, as a client that cannot tell would).
 */
export class CarefulClient {
  readonly observations: Observation[] = [];

  constructor(
    readonly api: string,
    private readonly auth: string,
    private readonly opts: { deadlineMs: number; attemptTimeoutMs: number },
  ) {}

  static basic(api: string, clientId: string, clientSecret: string, opts = { deadlineMs: 90_000, attemptTimeoutMs: 15_000 }): CarefulClient {
    return new CarefulClient(api, `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`, opts);
  }

  /** The same caller with other retry bounds. */
  withOptions(opts: { deadlineMs: number; attemptTimeoutMs: number }): CarefulClient {
    return new CarefulClient(this.api, this.auth, opts);
  }

  /** A money-moving POST under a fresh Idempotency-Key, retried under that same key. */
  write(path: string, body?: unknown, key: string = randomUUID()): Promise<Answer> {
    return this.call("POST", path, body, { "idempotency-key": key });
  }

  /** One request, tried again as described above until a definitive answer or the deadline. */
  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const deadline = Date.now() + this.opts.deadlineMs;
    let lastProblem = "";
    for (let tries = 1; ; tries++) {
      const sentAt = Date.now();
      try {
        const res = await fetch(`${this.api}${path}`, {
          method,
          body: body === undefined ? undefined : JSON.stringify(body),
          headers: { authorization: this.auth, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
          signal: AbortSignal.timeout(this.opts.attemptTimeoutMs),
        });
        const text = await res.text();
        let parsed: any = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON
        }
        const code = typeof parsed?.code === "string" ? parsed.code : undefined;
        this.observations.push({ method, path, status: res.status, code, at: Date.now(), ms: Date.now() - sentAt });
        const retry = RETRIED_STATUSES.has(res.status) || res.status === 500 || (res.status === 409 && code === IN_USE);
        if (!retry) return { status: res.status, body: parsed, headers: res.headers, tries };
        lastProblem = `${res.status} ${code ?? ""}`;
      } catch (err) {
        this.observations.push({ method, path, status: 0, at: Date.now(), ms: Date.now() - sentAt });
        lastProblem = String((err as Error)?.cause ?? err);
      }
      if (Date.now() > deadline) throw new Error(`${method} ${path}: no definitive answer in ${this.opts.deadlineMs} ms (last: ${lastProblem})`);
      // The client's own back-off between tries (not a wait for a condition of the system).
      const backoff = Math.min(1_000, 50 * 2 ** Math.min(tries, 5));
      await new Promise((r) => setTimeout(r, backoff / 2 + Math.random() * (backoff / 2)));
    }
  }
}

export interface Envelope {
  id: string;
  type: string;
  timestamp: string;
  data: any;
}

/**
 * The platform's webhook endpoint on 127.0.0.1: answers 200 to every POST and keeps the envelopes
 * whose Standard Webhooks signature verifies with the platform's secret (set once it is known).
 */
export class WebhookReceiver {
  readonly envelopes: Envelope[] = [];
  unverified = 0;
  private secret: string | undefined;
  private readonly pending: { body: string; headers: Record<string, string> }[] = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (body += c));
      req.on("end", () => {
        const headers = {
          "webhook-id": String(req.headers["webhook-id"]),
          "webhook-timestamp": String(req.headers["webhook-timestamp"]),
          "webhook-signature": String(req.headers["webhook-signature"]),
        };
        if (this.secret) this.accept(body, headers);
        else this.pending.push({ body, headers });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", () => r()));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  useSecret(secret: string): void {
    this.secret = secret;
    for (const p of this.pending.splice(0)) this.accept(p.body, p.headers);
  }

  private accept(body: string, headers: Record<string, string>): void {
    try {
      this.envelopes.push(new Webhook(this.secret!).verify(body, headers) as Envelope);
    } catch {
      this.unverified++;
    }
  }

  /** The statuses a transaction was announced with, in arrival order. */
  statusesOf(transactionId: string): string[] {
    return this.envelopes.filter((e) => e.data?.id === transactionId && typeof e.data?.status === "string").map((e) => e.data.status);
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
