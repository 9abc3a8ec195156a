import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import {
  checkedAddresses,
  checkUrlTarget,
  systemResolver,
  TargetRefusedError,
  targetPolicy,
  WEBHOOK_TARGET_DEFAULTS,
  type HostResolver,
  type TargetEnvironment,
  type TargetPolicy,
  type WebhookTargetSettings,
} from "./address-safety.js";

/**
 * HTTP requests to URLs a platform chose, made safe (address-safety.ts): the URL is checked
 * against the platform's policy, the name resolved once and every address checked, and the socket
 * connects to one of those checked addresses (the agent's `lookup` answers them; the request keeps
 * the URL's host for the Host header, TLS SNI and the certificate check). Redirects are never
 * followed, the answer's body is read up to a bound and then dropped, and one deadline covers the
 * whole exchange. Failures come back as a category whose message says nothing about the socket
 * (no errno, no address, no port): the platform sees whether its endpoint answered, not a map of
 * what listens where.
 */

/** Why no answer came; `message` is what a platform may be shown. */
export type OutboundFailureCategory = "TARGET_REFUSED" | "DNS_FAILED" | "CONNECTION_FAILED" | "TLS_FAILED" | "TIMED_OUT";

export type GuardedResponse =
  | {
      ok: true;
      status: number;
      /** At most `maxBodyBytes` of the answer's body. */
      body: Buffer;
      /** Whether the body was longer and the rest dropped. */
      truncated: boolean;
      /** From sending to the answer's headers. */
      latencyMs: number;
    }
  | { ok: false; category: OutboundFailureCategory; message: string; latencyMs: number };

export interface GuardedRequest {
  url: string;
  environment: TargetEnvironment;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Deadline for the whole exchange (connect, answer, body read). */
  timeoutMs: number;
  /** How much of the answer's body is read at most; the rest is never read. */
  maxBodyBytes: number;
}

export interface GuardedHttpClient {
  request(req: GuardedRequest): Promise<GuardedResponse>;
  /** Closes the kept-alive connections. */
  close(): void;
}

/** A lookup for node's http(s) agents that answers only addresses checked against `policy`. */
export function checkedLookup(policy: TargetPolicy, resolve: HostResolver): LookupFunction {
  return (hostname, options, callback) => {
    checkedAddresses(hostname, policy, resolve).then(
      (addresses) => {
        const family = typeof options.family === "number" ? options.family : 0;
        const usable = family ? addresses.filter((a) => a.family === family) : addresses;
        if (usable.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: "ENOTFOUND" }), "", 0);
        } else if (options.all) {
          (callback as unknown as (err: null, all: { address: string; family: number }[]) => void)(null, usable);
        } else {
          callback(null, usable[0]!.address, usable[0]!.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}

const DNS_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NONAME", "ENODATA", "ESERVFAIL"]);

function categorise(err: unknown, timeoutMs: number, timedOut: boolean): { category: OutboundFailureCategory; message: string } {
  if (err instanceof TargetRefusedError) return { category: "TARGET_REFUSED", message: `target refused: ${err.problem.reason}` };
  if (timedOut) return { category: "TIMED_OUT", message: `no answer within ${timeoutMs} ms` };
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? "";
  if (DNS_CODES.has(code)) return { category: "DNS_FAILED", message: "DNS lookup failed" };
  if (/^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|SELF_SIGNED|DEPTH_ZERO|HOSTNAME_MISMATCH|ERR_OSSL)/.test(code) || code.includes("CERT")) {
    return { category: "TLS_FAILED", message: "TLS handshake failed (certificate or protocol)" };
  }
  // Refused, reset, unreachable, not HTTP, closed early: one category, on purpose.
  return { category: "CONNECTION_FAILED", message: "connection failed" };
}

/** Reads at most `max` bytes of a response, then destroys it (the rest is never read). */
function readBounded(res: http.IncomingMessage, max: number): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (truncated: boolean) => {
      if (done) return;
      done = true;
      resolve({ body: Buffer.concat(chunks, Math.min(size, max)).subarray(0, max), truncated });
    };
    res.on("data", (chunk: Buffer) => {
      if (done) return;
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size >= max) {
        finish(size > max);
        res.destroy();
      }
    });
    res.on("end", () => finish(false));
    // The deadline or a reset while reading: the status came, so what was read is the answer.
    res.on("error", () => finish(true));
    res.on("close", () => finish(!res.complete));
  });
}

/**
 * The client. `settings` are the operator's (webhookTargetEnv); `resolve` is injected by tests.
 * Kept-alive connections are pooled per platform environment, so a connection one policy allowed
 * is never reused under another.
 */
export function createGuardedHttpClient(opts: { settings?: WebhookTargetSettings; resolve?: HostResolver; userAgent?: string } = {}): GuardedHttpClient {
  const settings = opts.settings ?? WEBHOOK_TARGET_DEFAULTS;
  const resolve = opts.resolve ?? systemResolver;
  const pools = new Map<TargetEnvironment, { policy: TargetPolicy; http: http.Agent; https: https.Agent }>();
  const poolFor = (environment: TargetEnvironment) => {
    let pool = pools.get(environment);
    if (!pool) {
      const policy = targetPolicy(environment, settings);
      const lookup = checkedLookup(policy, resolve);
      pool = {
        policy,
        http: new http.Agent({ keepAlive: true, lookup }),
        https: new https.Agent({ keepAlive: true, lookup }),
      };
      pools.set(environment, pool);
    }
    return pool;
  };

  return {
    async request(req) {
      const started = performance.now();
      const latency = () => Math.round(performance.now() - started);
      const pool = poolFor(req.environment);
      const checked = checkUrlTarget(req.url, pool.policy);
      if ("problem" in checked) return { ok: false, ...categorise(new TargetRefusedError(checked.problem), req.timeoutMs, false), latencyMs: 0 };
      // checkUrlTarget judged an IP literal already (the agent's lookup never sees one); a name
      // is resolved and judged by the lookup, at connection time.
      const url = checked.url;
      const signal = AbortSignal.timeout(req.timeoutMs);
      let headersAfterMs = 0;
      try {
        const answer = await new Promise<{ status: number; body: Buffer; truncated: boolean }>((resolveAnswer, reject) => {
          const body = req.body === undefined ? undefined : Buffer.from(req.body, "utf8");
          const client = url.protocol === "https:" ? https : http;
          const outgoing = client.request(
            url,
            {
              method: req.method ?? "POST",
              agent: url.protocol === "https:" ? pool.https : pool.http,
              headers: {
                "user-agent": opts.userAgent ?? "Corridor-Webhooks/1",
                ...req.headers,
                ...(body ? { "content-length": String(body.byteLength) } : {}),
              },
              signal,
            },
            (res) => {
              headersAfterMs = latency();
              // 3xx included: a redirect is an answer, never followed.
              void readBounded(res, req.maxBodyBytes).then((r) => resolveAnswer({ status: res.statusCode ?? 0, ...r }));
            },
          );
          outgoing.on("error", reject);
          outgoing.end(body);
        });
        return { ok: true, ...answer, latencyMs: headersAfterMs };
      } catch (err) {
        return { ok: false, ...categorise(err, req.timeoutMs, signal.aborted), latencyMs: latency() };
      }
    },
    close() {
      for (const pool of pools.values()) {
        pool.http.destroy();
        pool.https.destroy();
      }
      pools.clear();
    },
  };
}
