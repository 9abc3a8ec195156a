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
   * always waits `pollMs`.
   */
  nextPollMs?: (result: T) => number;
}

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
        pauseMs = opts.nextPollMs ? opts.nextPollMs(result) : opts.pollMs;
        opts.onPass?.(result);
      })
      .catch((err) => {
        pauseMs = opts.pollMs;
        opts.log.warn({ err, worker: opts.name }, "worker pass failed; the next pass retries");
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
