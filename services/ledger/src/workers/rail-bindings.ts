import { pollingWorker, type Logger, type PollingWorker } from "@corridor/kit";
import type { Ledger } from "../domain/ledger.js";

/**
 * `rail-bindings-config`: sets the bindings of LEDGER_RAIL_BINDINGS (the Helm values) once the
 * deployment answers (a binding checks the platform's environment with auth-sessions, which may
 * still be starting); a pass that fails is retried on the next poll, and once every binding is set
 * the worker only rests. A bad binding (a sandbox platform, the simulator's name) is logged and
 * skipped, never retried.
 */
export function configuredBindingsWorker(opts: {
  ledger: Pick<Ledger, "bindRail">;
  bindings: { platformId: string; currency: string; paymentRail: string; connector: string }[];
  log?: Pick<Logger, "warn" | "error" | "info" | "debug">;
  pollMs?: number;
}): PollingWorker {
  let pending = [...opts.bindings];
  const log = opts.log ?? { warn: () => {}, error: () => {}, info: () => {}, debug: () => {} };
  return pollingWorker({
    name: "rail-bindings-config",
    pollMs: opts.pollMs ?? 2_000,
    log,
    nextPollMs: (left) => (left === 0 ? 3_600_000 : (opts.pollMs ?? 2_000)),
    pass: async () => {
      const left: typeof pending = [];
      for (const b of pending) {
        try {
          await opts.ledger.bindRail({ ...b, source: "CONFIG" });
          log.info({ ...b }, "rail binding from LEDGER_RAIL_BINDINGS set");
        } catch (err) {
          const code = (err as { code?: string }).code;
          if (code === "INVALID_INPUT") log.error({ ...b, err }, "rail binding in LEDGER_RAIL_BINDINGS refused; skipped");
          else left.push(b);
        }
      }
      pending = left;
      return pending.length;
    },
  });
}

/**
 * `funding-instructions-config`: once at start (and again an hour later, harmless), production
 * platforms' fiat accounts take the funding instructions of LEDGER_FUNDING_BANK_ACCOUNTS (accounts
 * opened before it was set keep their reference and get the operator's bank account).
 */
export function fundingInstructionsWorker(opts: { ledger: Pick<Ledger, "refreshFundingInstructions">; log?: Pick<Logger, "warn" | "error" | "info" | "debug">; pollMs?: number }): PollingWorker {
  const log = opts.log ?? { warn: () => {}, error: () => {}, info: () => {}, debug: () => {} };
  return pollingWorker({
    name: "funding-instructions-config",
    pollMs: opts.pollMs ?? 2_000,
    log,
    nextPollMs: () => 3_600_000,
    pass: async () => {
      const changed = await opts.ledger.refreshFundingInstructions();
      if (changed) log.info({ changed }, "funding instructions of production accounts set from LEDGER_FUNDING_BANK_ACCOUNTS");
      return changed;
    },
  });
}
