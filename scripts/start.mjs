#!/usr/bin/env node
// `npm start`: installs what is missing, builds what changed, and runs the embedded system, all in
// this one Node process. Each of the three used to be a Node process of its own (`pnpm.mjs ensure
// && build.mjs --quiet && node dist/app/corridor.mjs`): on a warm tree the first two found nothing
// to do, and their starts were a sizeable part of issue 28's 3-second budget for a warm start.
//
//   node scripts/start.mjs [deployable] [args...]     (default: embedded)
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ensureDeps, root } from "./deps.mjs";

const installed = ensureDeps();
if (installed !== 0) process.exit(installed);
// Imported only now: build.mjs's own imports need nothing installed, but its build does.
const { build } = await import("./build.mjs");
const { out } = await build({ log: () => {} });
// The deployable sees the arguments it would see run as `node dist/app/corridor.mjs ...`.
const entry = join(out, "app", "corridor.mjs");
process.argv.splice(1, process.argv.length - 1, entry, ...(process.argv.length > 2 ? process.argv.slice(2) : ["embedded"]));
await import(pathToFileURL(entry).href);
