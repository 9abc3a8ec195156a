import type { BackgroundWorker, Logger } from "@corridor/kit";

/**
 * A worker that runs `pass` every `pollMs` (the first pass at once, so a restarted service catches
 * up before it waits) and lets a pass in progress finish on stop.
 */
export function pollingWorker(name: string, pass: () => Promise<unknown>, pollMs: number, log: Pick<Logger, "warn">): BackgroundWorker {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  const tick = () => {
    running = pass()
      .then(() => undefined)
      .catch((err) => log.warn({ err, worker: name }, "worker pass failed; the next pass retries"))
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, pollMs);
      });
  };
  return {
    name,
    start() {
      if (!stopped) return;
      stopped = false;
      tick();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
