import { migrateSchema, openDatabase } from "@corridor/kit";
import { createTemplateDatabase, TEMPLATE_DB_ENV } from "./databases.js";

/**
 * Global setup of the e2e projects: one template database with every service schema migrated,
 * named in CORRIDOR_TEST_TEMPLATE_DB for the test workers (vitest forks them after global setup),
 * so each e2e file copies it (`CREATE DATABASE … TEMPLATE`) instead of migrating a fresh database.
 * Without DATABASE_URL the suites use PGlite and this does nothing. Dropped when the run ends.
 */
export default async function setup() {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl || process.env[TEMPLATE_DB_ENV]) return;
  // Imported here, not at the top: a run without Postgres never loads every service.
  const { allServices } = await import("../../embedded/src/modules.js");
  const template = await createTemplateDatabase(baseUrl, async (url) => {
    const db = await openDatabase({ databaseUrl: url, poolSize: 1 });
    try {
      for (const service of allServices) await migrateSchema(db, service.schema, service.migrationsDir);
    } finally {
      await db.close();
    }
  });
  process.env[TEMPLATE_DB_ENV] = template.name;
  return async () => {
    delete process.env[TEMPLATE_DB_ENV];
    await template.drop();
  };
}
