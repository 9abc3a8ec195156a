import type { DatabaseConnection, Dialect, Driver } from "kysely";
import { recordTransactionDuration } from "../telemetry/instruments.js";

/**
 * `dialect` whose driver times every transaction: BEGIN to COMMIT or ROLLBACK on the connection
 * that ran it (corridor.db.transaction.duration). At the driver, so every transaction of the
 * process is measured however it was opened (`inTransaction`, `db.transaction()`, the migrator).
 * Savepoints (nested transactions) are part of their outer transaction. Without a metrics
 * provider the histogram is the API's no-op.
 */
export function timingTransactions(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => timedDriver(dialect.createDriver()),
  };
}

function timedDriver(driver: Driver): Driver {
  const began = new WeakMap<DatabaseConnection, bigint>();
  const end = (connection: DatabaseConnection, outcome: "commit" | "rollback") => {
    const start = began.get(connection);
    if (start === undefined) return;
    began.delete(connection);
    recordTransactionDuration(Number(process.hrtime.bigint() - start) / 1e9, outcome);
  };
  // A Proxy keeps the optional methods (savepoints) exactly as the driver has them.
  return new Proxy(driver, {
    get(target, prop) {
      if (prop === "beginTransaction") {
        return async (connection: DatabaseConnection, settings: Parameters<Driver["beginTransaction"]>[1]) => {
          await target.beginTransaction(connection, settings);
          began.set(connection, process.hrtime.bigint());
        };
      }
      if (prop === "commitTransaction") {
        return async (connection: DatabaseConnection) => {
          try {
            await target.commitTransaction(connection);
            end(connection, "commit");
          } catch (err) {
            // A failed COMMIT rolled the transaction back.
            end(connection, "rollback");
            throw err;
          }
        };
      }
      if (prop === "rollbackTransaction") {
        return async (connection: DatabaseConnection) => {
          try {
            await target.rollbackTransaction(connection);
          } finally {
            end(connection, "rollback");
          }
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
