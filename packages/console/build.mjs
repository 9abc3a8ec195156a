#!/usr/bin/env node
// Builds the console into public/, which is committed (as the generated protobuf code is), so a
// fresh clone serves it with nothing but Node: `npm start`, split mode and the image alike.
//
//   node packages/console/build.mjs          rebuild public/ (after changing anything in app/)
//   node packages/console/build.mjs --check  exit 1 when public/ is not what app/ builds to
//
// esbuild bundles app/main.tsx (Preact) and app/styles.css into public/assets/ with content-hashed
// names, and writes public/index.html naming them: the gateway serves index.html as no-cache and
// the hashed assets as immutable. The test packages/console/test/build.test.ts runs the check.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
export const PUBLIC_DIR = join(here, "public");

/** What app/ builds to: a map from the path under public/ to the file's bytes. Writes nothing. */
export async function buildConsole() {
  const result = await esbuild.build({
    absWorkingDir: here,
    entryPoints: { app: "app/main.tsx", styles: "app/styles.css" },
    bundle: true,
    write: false,
    outdir: "public/assets",
    entryNames: "[name]-[hash]",
    assetNames: "[name]-[hash]",
    format: "esm",
    target: ["es2022", "chrome110", "firefox110", "safari16"],
    jsx: "automatic",
    jsxImportSource: "preact",
    minify: true,
    legalComments: "eof",
    sourcemap: false,
    charset: "utf8",
    logLevel: "silent",
  });
  const files = new Map();
  for (const out of result.outputFiles) files.set(relative(PUBLIC_DIR, out.path).split("\\").join("/"), Buffer.from(out.contents));
  const names = [...files.keys()];
  const script = names.find((n) => /^assets\/app-[A-Z0-9]+\.js$/.test(n));
  const style = names.find((n) => /^assets\/styles-[A-Z0-9]+\.css$/.test(n));
  if (!script || !style) throw new Error(`unexpected build output: ${names.join(", ")}`);
  const html = readFileSync(join(here, "app", "index.html"), "utf8").replace("%STYLE%", style).replace("%SCRIPT%", script);
  files.set("index.html", Buffer.from(html));
  return files;
}

/** Every file under public/ (relative, "/"-separated). */
function listPublic(dir = PUBLIC_DIR, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) listPublic(path, out);
    else out.push(relative(PUBLIC_DIR, path).split("\\").join("/"));
  }
  return out;
}

/** Differences between public/ and a fresh build, in words ([] when they match). */
export async function checkConsole() {
  const built = await buildConsole();
  let present = [];
  try {
    present = listPublic();
  } catch {
    // no public/ at all
  }
  const problems = [];
  for (const [name, bytes] of built) {
    if (!present.includes(name)) problems.push(`missing public/${name}`);
    else if (!readFileSync(join(PUBLIC_DIR, name)).equals(bytes)) problems.push(`stale public/${name}`);
  }
  for (const name of present) if (!built.has(name)) problems.push(`leftover public/${name}`);
  return problems;
}

async function main() {
  if (process.argv.includes("--check")) {
    const problems = await checkConsole();
    if (problems.length) {
      console.error(`the console's built files are not what app/ builds to (run node packages/console/build.mjs):\n  ${problems.join("\n  ")}`);
      process.exit(1);
    }
    return;
  }
  const built = await buildConsole();
  rmSync(PUBLIC_DIR, { recursive: true, force: true });
  for (const [name, bytes] of built) {
    mkdirSync(dirname(join(PUBLIC_DIR, name)), { recursive: true });
    writeFileSync(join(PUBLIC_DIR, name), bytes);
  }
  const size = (n) => `${basename(n)} ${(built.get(n).length / 1024).toFixed(1)} KiB`;
  console.error(`console built into ${relative(process.cwd(), PUBLIC_DIR) || "."}: ${[...built.keys()].map(size).join(", ")}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
