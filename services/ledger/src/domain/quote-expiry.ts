import type { Clock, Logger } from "@corridor/kit";

const BATCH = 100;

export interface DueQuoteTransaction {
  platform_id: string;
  id: string;
  expires_at: Date | null;
}

/**
 * The ledger's own safety net for quote transactions nobody expires: quotes-fx owns the quote's
 * timer, but if it fails after CreateQuoteTransaction (storing the quote fails, it crashes) the
 * transaction would stay PENDING forever. One pass moves every PENDING quote transaction past
 * expires_at (on its platform's time) to EXPIRED with QUOTE_EXPIRED through `expire`, the
 * ExpireQuoteTransaction use case: it locks the row and only moves a transaction still PENDING, so
 * racing quotes-fx, an execution or another worker is harmless. Answers how many this pass moved.
 */
export function quoteExpiryPass(deps: {
  clock: Clock;
  due(now: Date, limit: number, after?: { expiresAt: Date; id: string }): Promise<DueQuoteTransaction[]>;
  /** `dueBy`: the expiry the scan saw; a row whose expiry moved since (a quote adopted a lookup's transaction) stays. */
  expire(platformId: string, transactionId: string, dueBy: Date): Promise<{ expired: boolean }>;
  log?: Pick<Logger, "warn">;
}): () => Promise<number> {
  return async function runOnce(): Promise<number> {
    const now = deps.clock.now();
    let moved = 0;
    let after: { expiresAt: Date; id: string } | undefined;
    for (;;) {
      const due = await deps.due(now, BATCH, after);
      for (const row of due) {
        try {
          if ((await deps.expire(row.platform_id, row.id, row.expires_at!)).expired) moved++;
        } catch (err) {
          // One bad row must not block the others; it is retried on the next pass.
          deps.log?.warn({ err, transactionId: row.id }, "could not expire a due quote transaction");
        }
      }
      if (due.length < BATCH) return moved;
      const last = due[due.length - 1]!;
      after = { expiresAt: last.expires_at!, id: last.id };
    }
  };
}
