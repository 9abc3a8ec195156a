import type { Logger } from "./log.js";
import type { BackgroundWorker } from "./service.js";

/** A background worker that runs one pass every `pollMs`, or sooner when woken. */
export interface PollingWorker extends BackgroundWorker {
  /** Runs the next pass now (after the one in progress, if any) instead of at the next poll. */
  wake(): void;
}

export interface PollingWorkerOptions<T> {
  name: string;
  /** One pass over whatever is due. A pass that throws is logged and retried on the next poll. */
  pass: () => Promise<T>;
  /** Pause between the end of one pass and the start of the next. */
  pollMs: number;
  log: Pick<Logger, "warn">;
  /** Called with each pass's result (for example to log how much it moved). */
  onPass?: (result: T) => void;
  /**
   * The pause after a pass that returned `result`, when it is not `pollMs` (for example a longer
   * one while nothing is pending, with `wake()` called when something new is). A failed pass
   * waits `pollMs`, doubled for each failure in a row up to `maxBackoffMs` (a database or broker
   * that is down is not hammered, and is found again within that bound once it is back).
   */
  nextPollMs?: (result: T) => number;
  /** The longest pause after failed passes in a row (default 10 s, or `pollMs` when longer). */
  maxBackoffMs?: number;
}

/** The longest pause of a failing worker, unless it polls more slowly than this anyway. */
export const WORKER_MAX_BACKOFF_MS = 10_000;

/**
 * The house worker loop: the first pass runs at once on start (a restarted service catches up
 * before it waits), the next `pollMs` after a pass ends (passes never overlap), `wake()` brings
 * the next pass forward, and `stop()` lets a pass in progress finish.
 */
export function pollingWorker<T>(opts: PollingWorkerOptions<T>): PollingWorker {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  let again = false;
  let pauseMs = opts.pollMs;
  let failures = 0;
  const schedule = (ms: number) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(tick, ms);
  };
  const tick = () => {
    timer = undefined;
    again = false;
    running = opts
      .pass()
      .then((result) => {
        failures = 0;
        pauseMs = opts.nextPollMs ? opts.nextPollMs(result) : opts.pollMs;
        opts.onPass?.(result);
      })
      .catch((err) => {
        failures++;
        pauseMs = Math.min(opts.pollMs * 2 ** (failures - 1), Math.max(opts.pollMs, opts.maxBackoffMs ?? WORKER_MAX_BACKOFF_MS));
        opts.log.warn({ err, worker: opts.name, failures, retryInMs: pauseMs }, "worker pass failed; the next pass retries");
      })
      .finally(() => {
        running = undefined;
        if (!stopped) schedule(again ? 0 : pauseMs);
      });
  };
  return {
    name: opts.name,
    start() {
      if (!stopped) return;
      stopped = false;
      tick();
    },
    wake() {
      if (stopped) return;
      if (running) again = true;
      else schedule(0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
