import { sql, type Kysely } from "kysely";
import type { RailBacklog } from "@corridor/kit";
import type { LedgerDatabase } from "./tables.js";

/**
 * The rail instructions waiting per connector and status, for the corridor.rail.instructions.*
 * gauges: transactions the ledger routed to a connector (`connector` set) whose instruction went
 * out and that have no final outcome yet. A transfer's instruction goes out with the transaction
 * (PENDING, then PROCESSING once the connector says the rail accepted it); a quote's only when it
 * is executed (PROCESSING; its PENDING is the wait for execution, not for a rail). Ages run from
 * when the instruction was sent (a quote's executed_at, a transfer's created_at).
 *
 * One grouped query on the partial index of waiting transactions (migration
 * 20261228100000_rail_backlog_index). Connectors are reported with 0 once seen by this process,
 * and every bound connector and `sandbox` always, so a drained backlog reads 0, not absent.
 * Bounded: connector names come from the operator's bindings (configuration), statuses are two.
 */
export function railBacklogReader(db: Kysely<LedgerDatabase>, always: readonly string[]): () => Promise<RailBacklog[]> {
  const known = new Set(always);
  return async () => {
    const [rows, bound] = await Promise.all([
      db
        .selectFrom("transactions")
        .where("status", "in", ["PENDING", "PROCESSING"])
        .where("connector", "is not", null)
        .where((eb) => eb.or([eb("status", "=", "PROCESSING"), eb("quote_id", "is", null)]))
        .groupBy(["connector", "status"])
        .select([
          "connector",
          "status",
          sql<string>`count(*)`.as("n"),
          sql<string | null>`extract(epoch from now() - min(coalesce(executed_at, created_at)))`.as("age"),
        ])
        .execute(),
      db.selectFrom("rail_bindings").select("connector").distinct().execute(),
    ]);
    for (const b of bound) known.add(b.connector);
    for (const r of rows) known.add(r.connector!);
    const out: RailBacklog[] = [];
    for (const connector of known) {
      for (const status of ["PENDING", "PROCESSING"] as const) {
        const r = rows.find((x) => x.connector === connector && x.status === status);
        out.push({ connector, status, waiting: Number(r?.n ?? 0), oldestAgeSeconds: Math.max(0, Number(r?.age ?? 0)) });
      }
    }
    return out;
  };
}
