import { pollingWorker, type Logger, type PollingWorker } from "@corridor/kit";
import type { CustomerImports } from "../domain/customer-imports.js";

/** Rows one pass handles before it yields (the next pass follows at once while rows remain). */
export const IMPORT_ROWS_PER_PASS = 200;

/**
 * Creates the customers of bulk imports (domain/customer-imports.ts), row by row. Passes run at
 * start (a restarted process resumes its unfinished jobs), every `pollMs`, and at once after an
 * upload (wake) or after a full pass. Replicas may run it together: a job is worked by one at a time.
 */
export function customerImportWorker(imports: CustomerImports, opts: { pollMs: number; log: Pick<Logger, "warn"> }): PollingWorker {
  return pollingWorker({
    name: "customer-imports",
    pass: () => imports.runPass(IMPORT_ROWS_PER_PASS),
    pollMs: opts.pollMs,
    nextPollMs: (handled) => (handled >= IMPORT_ROWS_PER_PASS ? 0 : opts.pollMs),
    log: opts.log,
  });
}
