import type { BackgroundWorker, Clock, Logger } from "@corridor/kit";
import { sql, type Kysely } from "kysely";
import type { LedgerDatabase } from "../data/tables.js";

/** Default pause between two passes (LEDGER_QUOTE_EXPIRY_POLL_MS). */
export const DEFAULT_QUOTE_EXPIRY_POLL_MS = 5_000;
const BATCH = 100;

export interface QuoteExpiryWorker extends BackgroundWorker {
  /** One pass: expires every due PENDING quote transaction (in batches); answers how many this pass moved. */
  runOnce(): Promise<number>;
}

/**
 * PENDING (outgoing) quote transactions whose expires_at has passed on their platform's time (`now`
 * plus the platform's sandbox clock offset, 0 for platforms never advanced), oldest first. The one
 * query that spans platforms: the worker then expires each through the platform-scoped use case.
 */
export async function dueQuoteTransactions(db: Kysely<LedgerDatabase>, now: Date, limit: number, after?: { expiresAt: Date; id: string }) {
  let q = db
    .selectFrom("transactions as t")
    .leftJoin("sandbox_clocks as c", "c.platform_id", "t.platform_id")
    .select(["t.platform_id", "t.id", "t.expires_at"])
    .where("t.type", "=", "OUTGOING")
    .where("t.status", "=", "PENDING")
    .where("t.quote_id", "is not", null)
    .where(sql<boolean>`t.expires_at < ${now.toISOString()}::timestamptz + (coalesce(c.offset_ms, 0) * interval '1 millisecond')`);
  if (after) q = q.where((eb) => eb.or([eb("t.expires_at", ">", after.expiresAt), eb.and([eb("t.expires_at", "=", after.expiresAt), eb("t.id", ">", after.id)])]));
  return q.orderBy("t.expires_at").orderBy("t.id").limit(limit).execute();
}

/**
 * The ledger's own safety net for quote transactions nobody expires: quotes-fx owns the quote's
 * timer, but if it fails after CreateQuoteTransaction (storing the quote fails, it crashes) the
 * transaction would stay PENDING forever. Every `pollMs` (first pass at start) this moves PENDING
 * quote transactions past expires_at (the ledger's clock, as execution checks it) to EXPIRED with
 * QUOTE_EXPIRED through `expire`, the ExpireQuoteTransaction use case: it locks the row and only
 * moves a transaction still PENDING, so racing quotes-fx, an execution or another worker is harmless.
 */
export function quoteExpiryWorker(deps: {
  db: Kysely<LedgerDatabase>;
  clock: Clock;
  expire(platformId: string, transactionId: string): Promise<{ expired: boolean }>;
  log?: Pick<Logger, "warn" | "debug">;
  pollMs?: number;
}): QuoteExpiryWorker {
  const pollMs = deps.pollMs ?? DEFAULT_QUOTE_EXPIRY_POLL_MS;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;

  async function runOnce(): Promise<number> {
    const now = deps.clock.now();
    let moved = 0;
    let after: { expiresAt: Date; id: string } | undefined;
    for (;;) {
      const due = await dueQuoteTransactions(deps.db, now, BATCH, after);
      for (const row of due) {
        try {
          if ((await deps.expire(row.platform_id, row.id)).expired) moved++;
        } catch (err) {
          // One bad row must not block the others; it is retried on the next pass.
          deps.log?.warn({ err, transactionId: row.id }, "could not expire a due quote transaction");
        }
      }
      if (due.length < BATCH) return moved;
      const last = due[due.length - 1]!;
      after = { expiresAt: last.expires_at!, id: last.id };
    }
  }

  const tick = () => {
    running = runOnce()
      .then((n) => {
        if (n > 0) deps.log?.debug({ expired: n }, "expired due quote transactions");
      })
      .catch((err) => deps.log?.warn({ err }, "quote transaction expiry pass failed"))
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, pollMs);
      });
  };

  return {
    name: "quote-transaction-expiry",
    runOnce,
    start() {
      stopped = false;
      tick(); // at once: a restarted ledger catches up before it waits
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

/** The poll interval from the environment (positive integer milliseconds), else the default. */
export function quoteExpiryPollMs(env: NodeJS.ProcessEnv | undefined): number {
  const n = Number(env?.LEDGER_QUOTE_EXPIRY_POLL_MS);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_QUOTE_EXPIRY_POLL_MS;
}
