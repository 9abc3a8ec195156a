import { pollingWorker, type BackgroundWorker, type Logger } from "@corridor/kit";
import type { Simulator } from "../domain/simulator.js";

/** `sandbox-schedule`: polls the durable schedule and fires what is due; after a restart it picks up whatever was pending. */
export function scheduleWorker(simulator: Pick<Simulator, "fireDue">, opts: { pollMs: number; log: Pick<Logger, "debug" | "warn"> }): BackgroundWorker {
  return pollingWorker({
    name: "sandbox-schedule",
    pass: () => simulator.fireDue(),
    pollMs: opts.pollMs,
    log: opts.log,
    onPass: (fired) => {
      if (fired > 0) opts.log.debug({ fired }, "sandbox schedule fired");
    },
  });
}
