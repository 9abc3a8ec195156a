import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * A fresh Postgres database on the server of `baseUrl` (DATABASE_URL), so suites never see each
 * other's rows. Returns its URL and a function that drops it.
 */
export async function createFreshDatabase(baseUrl: string, prefix = "corridor_t"): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}
