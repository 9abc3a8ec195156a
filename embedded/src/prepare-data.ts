// Build step (scripts/build.mjs runs the compiled copy): writes a PGlite data folder with every
// service's migrations applied, as a gzip tarball, to the path given. The embedded process starts a
// new CORRIDOR_DATA_DIR from it instead of running initdb and every migration (main.ts); it holds
// schemas only, no platform, credential or other data of an install.
//
//   node dist/app/bin/prepare-data.js <out.tar.gz>
import { writeFileSync } from "node:fs";
import { migrateSchema, openDatabase } from "@corridor/kit";
import { allServices } from "./modules.js";

const out = process.argv[2];
if (!out) throw new Error("usage: prepare-data <out.tar.gz>");
const db = await openDatabase({});
try {
  // As startInProcess prepares them: each service's schema, in start order.
  for (const module of allServices) await migrateSchema(db, module.schema, module.migrationsDir);
  const dump = await db.dumpDataDir!();
  writeFileSync(out, Buffer.from(await dump.arrayBuffer()));
} finally {
  await db.close();
}
