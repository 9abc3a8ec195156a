import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * The migrated template database of this run (test/infra/template-setup.ts creates it once in
 * global setup, with every service schema migrated, and names it here for the test workers).
 */
export const TEMPLATE_DB_ENV = "CORRIDOR_TEST_TEMPLATE_DB";

async function withAdmin<T>(baseUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

const databaseUrl = (baseUrl: string, name: string) => {
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
};

/**
 * A fresh Postgres database on the server of `baseUrl` (DATABASE_URL), so suites never see each
 * other's rows. Returns its URL and a function that drops it. With `migrated`, it is a copy
 * (`CREATE DATABASE … TEMPLATE`) of the run's migrated template when there is one, so a system
 * started on it finds every migration applied instead of running them all again; without a
 * template (a run without the e2e global setup) it is empty and the services migrate it.
 */
export async function createFreshDatabase(baseUrl: string, prefix = "corridor_t", opts: { migrated?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const template = opts.migrated ? process.env[TEMPLATE_DB_ENV] : undefined;
  await withAdmin(baseUrl, async (admin) => {
    if (!template) return admin.query(`create database "${name}"`);
    // Copying needs the template free of sessions; a concurrent copy may briefly hold it.
    for (let attempt = 0; ; attempt++) {
      try {
        return await admin.query(`create database "${name}" template "${template}"`);
      } catch (err) {
        if (attempt >= 50 || !/being accessed by other users/.test(String(err))) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  return {
    url: databaseUrl(baseUrl, name),
    drop: () => dropDatabase(baseUrl, name),
  };
}

export async function dropDatabase(baseUrl: string, name: string): Promise<void> {
  await withAdmin(baseUrl, (c) => c.query(`drop database if exists "${name}" with (force)`));
}

/**
 * A template database with `migrate(url)` applied (every service schema), marked as a template so
 * copies are allowed while nothing is connected to it.
 */
export async function createTemplateDatabase(baseUrl: string, migrate: (url: string) => Promise<void>): Promise<{ name: string; drop(): Promise<void> }> {
  const fresh = await createFreshDatabase(baseUrl, "corridor_tpl");
  const name = new URL(fresh.url).pathname.slice(1);
  try {
    await migrate(fresh.url);
    await withAdmin(baseUrl, (c) => c.query(`alter database "${name}" is_template true`));
  } catch (err) {
    await fresh.drop();
    throw err;
  }
  return {
    name,
    async drop() {
      await withAdmin(baseUrl, (c) => c.query(`alter database "${name}" is_template false`));
      await dropDatabase(baseUrl, name);
    },
  };
}
