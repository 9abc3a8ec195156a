import { createFreshDatabase } from "../../../test/infra/databases.js";
import { openDatabase, type DatabaseHandle } from "../src/db/index.js";

/**
 * The databases a kit suite runs against: PGlite in memory always, and Postgres (a fresh database
 * per call) when DATABASE_URL is set.
 */
export const databaseKinds: { kind: "pglite" | "postgres"; skip: boolean }[] = [
  { kind: "pglite", skip: false },
  { kind: "postgres", skip: !process.env.DATABASE_URL },
];

export async function openTestDatabase(kind: "pglite" | "postgres"): Promise<{ handle: DatabaseHandle; dispose(): Promise<void> }> {
  if (kind === "pglite") {
    const handle = await openDatabase({});
    return { handle, dispose: () => handle.close() };
  }
  const fresh = await createFreshDatabase(process.env.DATABASE_URL!, "corridor_t_kit");
  const handle = await openDatabase({ databaseUrl: fresh.url, poolSize: 8, preparedStatements: true });
  return {
    handle,
    async dispose() {
      await handle.close();
      await fresh.drop();
    },
  };
}
