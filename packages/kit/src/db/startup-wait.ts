import { env } from "../config.js";
import { isConnectionFailure } from "./unavailable.js";

/**
 * DATABASE_STARTUP_WAIT_MS (one default for every process that opens its database at start): how
 * long a starting process keeps trying a database it cannot reach, or that refuses it a connection
 * (53300 too_many_connections, 57P03 starting up), before it gives up and exits. A replica restarted
 * while its PostgreSQL is busy or restarting then waits for it instead of crash-looping; any other
 * error (a wrong password, a missing database, a failed migration) still fails at once.
 */
export const databaseStartupWaitSetting = env.int(60_000);

export interface StartupWaitOptions {
  /** Give up after this long (the last error is thrown). */
  waitMs: number;
  /** Told of each failed attempt (never the URL: the error's message only). */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/**
 * Runs `attempt` until it resolves, trying again after a connection failure (isConnectionFailure)
 * with a backoff of 250 ms doubling to 5 s, for at most `waitMs`. Anything else is thrown at once.
 */
export async function untilDatabaseAnswers<T>(attempt: () => Promise<T>, opts: StartupWaitOptions): Promise<T> {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = now() + opts.waitMs;
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!isConnectionFailure(err)) throw err;
      const delayMs = Math.min(5_000, 250 * 2 ** (n - 1));
      if (now() + delayMs > deadline) throw err;
      opts.onRetry?.(err, n, delayMs);
      await sleep(delayMs);
    }
  }
}
