import { pollingWorker, type Logger, type PollingWorker } from "@corridor/kit";
import type { Simulator } from "../domain/simulator.js";

/**
 * `sandbox-schedule`: fires the durable schedule's outcomes as they come due; after a restart it
 * picks up whatever was pending. While anything is pending it looks every `pollMs`; while nothing
 * is it rests for `idlePollMs`, and `wake()` (an action this process scheduled, once committed)
 * ends the rest at once. The rest only delays actions another replica scheduled and did not live
 * to fire: that replica's own worker was awake for them.
 */
export function scheduleWorker(
  simulator: Pick<Simulator, "fireDue" | "anyPending">,
  opts: { pollMs: number; idlePollMs: number; log: Pick<Logger, "debug" | "warn"> },
): PollingWorker {
  return pollingWorker({
    name: "sandbox-schedule",
    pass: async () => {
      const fired = await simulator.fireDue();
      return { fired, pending: await simulator.anyPending() };
    },
    pollMs: opts.pollMs,
    nextPollMs: (r) => (r.pending ? opts.pollMs : Math.max(opts.pollMs, opts.idlePollMs)),
    log: opts.log,
    onPass: (r) => {
      if (r.fired > 0) opts.log.debug({ fired: r.fired }, "sandbox schedule fired");
    },
  });
}
