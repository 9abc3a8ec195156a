import type { BackgroundWorker, Logger } from "@corridor/kit";
import type { Simulator } from "../domain/simulator.js";

/** `sandbox-schedule`: polls the durable schedule and fires what is due; after a restart it picks up whatever was pending. */
export function scheduleWorker(simulator: Pick<Simulator, "fireDue">, opts: { pollMs: number; log: Pick<Logger, "debug" | "warn"> }): BackgroundWorker {
  const { pollMs, log } = opts;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  const tick = () => {
    running = simulator
      .fireDue()
      .then((n) => {
        if (n > 0) log.debug({ fired: n }, "sandbox schedule fired");
      })
      .catch((err) => log.warn({ err }, "sandbox schedule tick failed"))
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, pollMs);
      });
  };
  return {
    name: "sandbox-schedule",
    start() {
      stopped = false;
      timer = setTimeout(tick, 0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
