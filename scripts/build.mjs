#!/usr/bin/env node
// Compiles every deployable to plain JavaScript for production (the image, and `node` without tsx):
//
//   node scripts/build.mjs [--out dist] [--quiet]
//
// Development keeps running the TypeScript sources through tsx; nothing here changes that (the
// workspace packages' "exports" still point at src/*.ts). The output folder is the image's build
// context (deploy/Dockerfile):
//
//   dist/app/corridor.mjs                 the one entry point (deploy/corridor.mjs): picks a deployable
//   dist/app/bin/<deployable>.js          embedded, gateway, each service, admin (the operator CLI)
//   dist/app/chunks/*.js                  code shared between them (esbuild code splitting)
//   dist/app/services/<s>/migrations/*.js each service's migrations, compiled; the kit's migrator
//                                         loads .js as it loads .ts under tsx
//   dist/app/pglite-template.tar.gz       a PGlite data folder with every migration applied, made by
//                                         bin/prepare-data.js (embedded/src/prepare-data.ts): a new
//                                         CORRIDOR_DATA_DIR starts from it instead of running initdb
//   dist/app/node_modules/                the third-party packages the code imports, and theirs:
//                                         pnpm's own layout, copied from this install (no network)
//   dist/data/                            empty: becomes /data, the image's writable data folder
//
// Workspace code (@corridor/*) is bundled; third-party packages stay external and are copied as
// installed, so what runs in production is exactly what the lockfile installed and tests ran.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { builtinModules } from "node:module";
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** A deployable's name and its TypeScript entry point (relative to the repository root). */
export function deployables(repoRoot = root) {
  const services = readdirSync(join(repoRoot, "services"), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(repoRoot, "services", d.name, "src", "main.ts")))
    .map((d) => d.name)
    .sort();
  return [
    { name: "embedded", entry: "embedded/src/main.ts" },
    { name: "gateway", entry: "gateway/src/main.ts" },
    ...services.map((name) => ({ name, entry: `services/${name}/src/main.ts` })),
    { name: "admin", entry: "scripts/admin.ts" },
    // One rail connector (`corridor connector <name>`; embedded/src/connectors.ts lists them).
    { name: "connector", entry: "embedded/src/connector-main.ts" },
  ];
}

/** Each service's, package's and rail connector's migration files, compiled beside where its code looks for them. */
function migrationEntries(repoRoot) {
  const out = [];
  for (const parent of ["services", "packages", "connectors"]) {
    if (!existsSync(join(repoRoot, parent))) continue;
    for (const unit of readdirSync(join(repoRoot, parent))) {
      const folder = join(repoRoot, parent, unit, "migrations");
      if (!existsSync(folder)) continue;
      for (const file of readdirSync(folder).sort()) {
        if (!file.endsWith(".ts") || file.endsWith(".d.ts") || file.includes(".test.")) continue;
        out.push({ in: `${parent}/${unit}/migrations/${file}`, out: `${parent}/${unit}/migrations/${file.replace(/\.ts$/, "")}` });
      }
    }
  }
  return out;
}

/**
 * Files or folders the code reads at run time beside its own sources, as
 * `new URL("../assets/x", import.meta.url)` (repository-relative). The build relocates
 * import.meta.url to the file's path under dist/app, so each is copied to the same path there.
 * The console's built page (gateway/src/console.ts serves it at /console/), and the reference
 * renderer's bundle (gateway/src/openapi.ts serves it at /2025-10-13/docs/).
 */
export const RUNTIME_FILES = ["packages/console/public", "gateway/node_modules/redoc/bundles/redoc.standalone.js"];

/**
 * Third-party packages workspace code loads with require() only when asked for (esbuild cannot see
 * them): the package, and the source file whose dependency it is. Copied like the imported ones.
 * The kit loads the OpenTelemetry NodeSDK only when telemetry is exported (telemetry/sdk.ts).
 */
export const RUNTIME_PACKAGES = [
  { name: "@opentelemetry/sdk-node", from: "packages/kit/src/telemetry/sdk.ts" },
  // The metrics SDK and its exporters, loaded only when METRICS_PORT or an OTLP endpoint is set.
  { name: "@opentelemetry/sdk-metrics", from: "packages/kit/src/telemetry/metrics.ts" },
  { name: "@opentelemetry/exporter-prometheus", from: "packages/kit/src/telemetry/metrics.ts" },
  { name: "@opentelemetry/exporter-metrics-otlp-proto", from: "packages/kit/src/telemetry/metrics.ts" },
  // Required on the first BTC funding quote, not at start (issue 28, item 4).
  { name: "bolt11", from: "services/quotes-fx/src/domain/lightning.ts" },
]

/**
 * Pure-JavaScript ES module packages bundled into the output instead of copied: each is hundreds
 * of small files (typebox ~370, kysely ~260, zod ~70, Connect and protobuf ~140) whose resolving
 * and loading was a third of start-up. The code is the installed version's, unchanged; no copied
 * package may depend on one of them (checked), so there is never a second instance.
 */
export const BUNDLED_PACKAGES = ["typebox", "kysely", "zod", "@connectrpc/connect", "@connectrpc/connect-node", "@bufbuild/protobuf"];

/**
 * Packages the code loads with a dynamic import() where a mode uses them (Kafka, Redis, pg, PGlite:
 * packages/kit/src/bus, packages/kit/src/db, gateway/src/app.ts), so a process that does not use
 * one never loads it. Checked after the build: no deployable may reach one through static imports.
 */
export const LAZY_PACKAGES = [
  "kafkajs",
  "ioredis",
  "pg",
  "@electric-sql/pglite",
  // Loaded on first use, not at start (issue 28, item 4: a warm `npm start` in 3 s): passkey
  // ceremonies (services/auth-sessions/src/clients/passkeys.ts), SMTP (clients/mailer.ts).
  "@simplewebauthn/server",
  "nodemailer",
];

/** External packages each output reaches through static imports (itself and the chunks it imports). */
function staticExternals(outputs, start) {
  const seen = new Set();
  const found = new Set();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imp of outputs[file]?.imports ?? []) {
      if (imp.kind !== "import-statement") continue;
      if (imp.external) found.add(packageName(imp.path));
      else queue.push(imp.path);
    }
  }
  return found;
}

const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
const packageName = (specifier) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");

/**
 * Bundles the workspace, leaves third-party packages external (noting who imports each), and
 * rewrites `import.meta.url` in workspace files to the URL the file has in dist/app, so paths
 * computed from it (a service's ../migrations) point at the compiled copies.
 */
function corridorPlugin(repoRoot, externals, relocated) {
  return {
    name: "corridor",
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (builtins.has(args.path)) return { path: args.path, external: true };
        if (args.path.startsWith("@corridor/")) return undefined; // bundled: resolved through the package's exports
        const name = packageName(args.path);
        if (BUNDLED_PACKAGES.includes(name)) return undefined; // bundled: resolved as Node would
        const importers = externals.get(name) ?? new Set();
        importers.add(args.importer);
        externals.set(name, importers);
        return { path: args.path, external: true };
      });
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
        const source = readFileSync(args.path, "utf8");
        if (/import\.meta\.(dirname|filename)/.test(source)) {
          throw new Error(`${relative(repoRoot, args.path)} uses import.meta.dirname/filename: use new URL(…, import.meta.url), which the build relocates`);
        }
        if (!source.includes("import.meta.url")) return { contents: source, loader: "ts" };
        const compiled = relative(repoRoot, args.path).split(sep).join("/").replace(/\.ts$/, ".js");
        relocated.add(args.path);
        // Code lands in bin/ or chunks/, one level below dist/app (checked after the build).
        return { contents: source.replaceAll("import.meta.url", `new URL(${JSON.stringify(`../${compiled}`)}, import.meta.url).href`), loader: "ts" };
      });
    },
  };
}

/**
 * Writes dist/app/pglite-template.tar.gz by running bin/prepare-data.js (initdb and every migration:
 * seconds of CPU). The result is kept in node_modules/.cache under a hash of everything that makes
 * it, so `npm start`, which builds first, pays for it only when a migration, the code running them,
 * or PGlite changed: the compiled prepare-data bundle with every chunk it loads, the compiled
 * migrations, and PGlite's version.
 */
function preparePgliteTemplate(outputs, appDir, repoRoot, log) {
  const start = Object.keys(outputs).find((o) => resolve(repoRoot, o) === join(appDir, "bin", "prepare-data.js"));
  const files = new Set();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.pop();
    if (files.has(file)) continue;
    files.add(file);
    for (const imp of outputs[file]?.imports ?? []) if (!imp.external) queue.push(imp.path);
  }
  for (const o of Object.keys(outputs)) if (/[\\/]services[\\/][^\\/]+[\\/]migrations[\\/][^\\/]+\.js$/.test(o)) files.add(o);
  const hash = createHash("sha256");
  hash.update(readFileSync(join(appDir, "node_modules", "@electric-sql", "pglite", "package.json")));
  for (const file of [...files].sort()) hash.update(relative(appDir, resolve(repoRoot, file))).update(readFileSync(resolve(repoRoot, file)));
  const key = hash.digest("hex").slice(0, 16);
  const cacheDir = join(repoRoot, "node_modules", ".cache", "corridor-pglite-template");
  const cached = join(cacheDir, `${key}.tar.gz`);
  if (!existsSync(cached)) {
    mkdirSync(cacheDir, { recursive: true });
    const partial = `${cached}.${process.pid}.partial`;
    const run = spawnSync(process.execPath, [join(appDir, "bin", "prepare-data.js"), partial], { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, LOG_LEVEL: "error" } });
    if (run.status !== 0) throw new Error(`bin/prepare-data.js failed (${run.signal ?? run.status}): the PGlite data template was not made`);
    renameSync(partial, cached);
    // Older templates go, but not recent ones: another build (another working tree state) may be
    // about to copy its own.
    for (const old of readdirSync(cacheDir)) {
      const file = join(cacheDir, old);
      const modified = statSync(file, { throwIfNoEntry: false })?.mtimeMs;
      if (file !== cached && modified !== undefined && Date.now() - modified > 3_600_000) rmSync(file, { force: true });
    }
    log(`[build] PGlite data template ${key} made`);
  }
  cpSync(cached, join(appDir, "pglite-template.tar.gz"));
}

/** The folder of the workspace package (or the repository root) a source file belongs to. */
function packageDirOf(file, repoRoot) {
  let dir = dirname(file);
  while (dir.startsWith(repoRoot) && dir !== repoRoot) {
    if (existsSync(join(dir, "package.json"))) return dir;
    dir = dirname(dir);
  }
  return repoRoot;
}

/** Where Node would find package `name` from `fromDir` (the installed copy's real path). */
function resolvePackageDir(name, fromDir, repoRoot) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    if (dir === repoRoot || dir === dirname(dir)) break;
  }
  throw new Error(`cannot find package ${name} from ${relative(repoRoot, fromDir) || "."}: is it a dependency of that package?`);
}

/**
 * Copies the third-party packages the bundles import, and everything they depend on, from pnpm's
 * virtual store (node_modules/.pnpm/<entry>/node_modules/<pkg>, with each dependency a sibling
 * symlink) into dist/app/node_modules/.pnpm, keeping pnpm's layout and its relative symlinks;
 * then links each imported package at dist/app/node_modules/<name>, and every copied package in
 * .pnpm/node_modules as pnpm's hoisting does (for packages that import what they do not declare).
 */
function copyDependencies(externals, repoRoot, appDir) {
  const store = join(repoRoot, "node_modules", ".pnpm");
  const direct = new Map(); // name -> real package dir
  for (const [name, importers] of externals) {
    for (const importer of importers) {
      const real = resolvePackageDir(name, packageDirOf(importer, repoRoot), repoRoot);
      const seen = direct.get(name);
      if (seen && seen !== real) {
        throw new Error(`${name} resolves to two installs (${relative(store, seen)} and ${relative(store, real)}): bundled workspace code can import only one; align the versions`);
      }
      direct.set(name, real);
    }
  }

  const entryOf = (real) => {
    const rel = relative(store, real);
    if (rel.startsWith("..")) throw new Error(`${real} is not in pnpm's virtual store (${store})`);
    return rel.split(sep)[0];
  };
  const entries = new Map(); // entry -> [package names in it that are real folders]
  const queue = [...direct.values()];
  while (queue.length > 0) {
    const real = queue.pop();
    const entry = entryOf(real);
    if (entries.has(entry)) continue;
    const modules = join(store, entry, "node_modules");
    const own = [];
    for (const name of listPackages(modules)) {
      const path = join(modules, name);
      if (lstatSync(path).isSymbolicLink()) {
        const target = realpathSync(path);
        if (relative(store, target).startsWith("..")) throw new Error(`${entry} links ${name} outside the store (${target})`);
        queue.push(target);
      } else {
        own.push(name);
      }
    }
    entries.set(entry, own);
  }

  const outStore = join(appDir, "node_modules", ".pnpm");
  // Type declarations, source maps and docs are never loaded at run time.
  const needed = (src) => !/\.(d\.[cm]?ts|map|md|markdown)$/i.test(src) || lstatSync(src).isDirectory();
  for (const entry of entries.keys()) {
    cpSync(join(store, entry), join(outStore, entry), { recursive: true, verbatimSymlinks: true, dereference: false, filter: needed });
  }
  const link = (name, target, at) => {
    const path = join(at, name);
    if (existsSync(path)) return;
    mkdirSync(dirname(path), { recursive: true });
    symlinkSync(relative(dirname(path), target), path);
  };
  for (const [name, real] of direct) link(name, join(outStore, relative(store, real)), join(appDir, "node_modules"));
  for (const [entry, names] of [...entries].sort(([a], [b]) => a.localeCompare(b))) {
    for (const name of names) link(name, join(outStore, entry, "node_modules", name), join(outStore, "node_modules"));
  }
  return { direct: [...direct.keys()].sort(), entries: entries.size };
}

/** Package names in a node_modules folder (scoped ones as @scope/name). */
function listPackages(modules) {
  if (!existsSync(modules)) return [];
  const names = [];
  for (const d of readdirSync(modules)) {
    if (d.startsWith(".")) continue;
    if (d.startsWith("@")) for (const s of readdirSync(join(modules, d))) names.push(`${d}/${s}`);
    else names.push(d);
  }
  return names;
}

/** Where a build records what it was made from (inside its output, so each output folder has its own). */
export const MANIFEST = ".build-manifest.json";

/**
 * Files that shape the output besides the sources esbuild reads: this script, esbuild itself, the
 * lockfile and pnpm's record of what it installed (the copied packages, PGlite's version for the
 * data template), the files copied as they are, and the chart's appVersion.
 */
function extraInputs(repoRoot) {
  const files = [
    "scripts/build.mjs",
    "pnpm-lock.yaml",
    "node_modules/esbuild/package.json",
    "node_modules/.pnpm/lock.yaml",
    "helm/corridor/Chart.yaml",
    "deploy/corridor.mjs",
  ];
  for (const path of RUNTIME_FILES) files.push(...listFiles(join(repoRoot, path)).map((f) => relative(repoRoot, f)));
  return files;
}

/** Every file under `path` (the path itself when it is a file), following no symlinked folders. */
function listFiles(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return [];
  if (!st.isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((d) => listFiles(join(path, d.name)));
}

const sha1 = (file) => createHash("sha1").update(readFileSync(file)).digest("hex");

/**
 * The manifest of a build: each input file (every source esbuild read, workspace and bundled
 * packages alike, and extraInputs) with its size, mtime and content hash, and the listing of every
 * folder holding a workspace source or a migration (a file added there may change what an import
 * resolves to, or add a migration or a service).
 */
function makeManifest(repoRoot, inputs) {
  const files = {};
  for (const rel of [...new Set(inputs)].sort()) {
    const abs = resolve(repoRoot, rel);
    const st = statSync(abs, { throwIfNoEntry: false });
    files[rel] = st ? { size: st.size, mtimeMs: st.mtimeMs, sha1: sha1(abs) } : null;
  }
  const dirs = {};
  const folders = new Set([join(repoRoot, "services")]);
  for (const rel of Object.keys(files)) if (!rel.includes("node_modules")) folders.add(dirname(resolve(repoRoot, rel)));
  for (const service of readdirSync(join(repoRoot, "services"))) folders.add(join(repoRoot, "services", service, "migrations"));
  for (const dir of [...folders].sort()) dirs[relative(repoRoot, dir)] = listing(dir);
  return { node: process.version, files, dirs };
}

/** Records that the output in `out` was built from `inputs` (repository-relative) and extraInputs, as they are now. */
export function writeManifest(out, repoRoot, inputs) {
  writeFileSync(join(out, MANIFEST), JSON.stringify(makeManifest(repoRoot, [...inputs, ...extraInputs(repoRoot)])) + "\n");
}

const listing = (dir) => (existsSync(dir) ? readdirSync(dir).sort().join("\n") : null);

/**
 * Why the output in `out` is not the build of the tree as it is now, or "" when it is. A file whose
 * size and mtime are unchanged is taken as unchanged; one that differs is hashed, so a touched but
 * unedited file does not rebuild.
 */
export function staleReason(out, repoRoot = root) {
  const manifestFile = join(out, MANIFEST);
  if (!existsSync(manifestFile)) return "no previous build";
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
  } catch {
    return "unreadable build manifest";
  }
  if (manifest.node !== process.version) return `Node changed (${manifest.node} → ${process.version})`;
  for (const file of ["app/corridor.mjs", "app/deployables.json", "app/pglite-template.tar.gz"]) if (!existsSync(join(out, file))) return `${file} is missing`;
  for (const [rel, was] of Object.entries(manifest.files ?? {})) {
    const abs = resolve(repoRoot, rel);
    const st = statSync(abs, { throwIfNoEntry: false });
    if (!st || !was) {
      if (!st && !was) continue;
      return `${rel} ${st ? "appeared" : "was removed"}`;
    }
    if (st.size === was.size && st.mtimeMs === was.mtimeMs) continue;
    if (st.size !== was.size || sha1(abs) !== was.sha1) return `${rel} changed`;
  }
  for (const [dir, was] of Object.entries(manifest.dirs ?? {})) if (listing(resolve(repoRoot, dir)) !== was) return `files added or removed in ${dir}`;
  for (const rel of extraInputs(repoRoot)) if (!(rel in manifest.files)) return `${rel} appeared`;
  return "";
}

/**
 * Builds into `out` unless the build already there was made from the tree as it is now
 * (staleReason); `force` builds anyway. `npm start` and `npm run start:split` build every time, so
 * an unchanged tree costs a few hundred stat calls instead of a build (docs/benchmarks.md).
 */
export async function build({ out = join(root, "dist"), repoRoot = root, log = console.error, force = false } = {}) {
  const started = Date.now();
  const appDir = join(out, "app");
  const stale = force ? "forced" : staleReason(out, repoRoot);
  if (!stale) {
    log(`[build] ${relative(repoRoot, appDir) || appDir} is up to date (${Date.now() - started} ms)`);
    return { out, appDir, appVersion: JSON.parse(readFileSync(join(appDir, "package.json"), "utf8")).version, skipped: true };
  }
  log(`[build] building: ${stale}`);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(appDir, { recursive: true });
  mkdirSync(join(out, "data"), { recursive: true });

  const externals = new Map();
  const relocated = new Set();
  const entryPoints = [
    ...deployables(repoRoot).map((d) => ({ in: d.entry, out: `bin/${d.name}` })),
    // Not a deployable: the build runs it to make the PGlite data template (below).
    { in: "embedded/src/prepare-data.ts", out: "bin/prepare-data" },
    ...migrationEntries(repoRoot),
  ];
  // Loaded here: an up-to-date output never needs it.
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    absWorkingDir: repoRoot,
    entryPoints,
    outdir: appDir,
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: "linked",
    // Stack traces need only the mappings: without the sources embedded, the maps Node parses and
    // keeps in memory (with NODE_OPTIONS=--enable-source-maps) are a fraction of the size.
    sourcesContent: false,
    metafile: true,
    logLevel: "warning",
    plugins: [corridorPlugin(repoRoot, externals, relocated)],
  });
  // The service process esbuild keeps for later builds: none come (`npm start` runs the system in this process next).
  await esbuild.stop();

  // A file whose import.meta.url was rewritten must sit in an output one level below dist/app.
  for (const [output, meta] of Object.entries(result.metafile.outputs)) {
    const depth = relative(appDir, resolve(repoRoot, output)).split(sep).length;
    for (const input of Object.keys(meta.inputs)) {
      if (relocated.has(resolve(repoRoot, input)) && depth !== 2) {
        throw new Error(`${input} uses import.meta.url but was bundled into ${output}, not into bin/ or chunks/`);
      }
    }
  }

  for (const d of deployables(repoRoot)) {
    const output = Object.keys(result.metafile.outputs).find((o) => resolve(repoRoot, o) === join(appDir, "bin", `${d.name}.js`));
    if (!output) throw new Error(`no output for ${d.name}`);
    const eager = [...staticExternals(result.metafile.outputs, output)].filter((name) => LAZY_PACKAGES.includes(name));
    if (eager.length > 0) throw new Error(`${d.name} imports ${eager.join(", ")} statically: load it with import() where its mode needs it (LAZY_PACKAGES)`);
  }

  for (const { name, from } of RUNTIME_PACKAGES) {
    if (!readFileSync(join(repoRoot, from), "utf8").includes(JSON.stringify(name))) throw new Error(`${from} no longer loads ${name}: update RUNTIME_PACKAGES`);
    externals.set(name, new Set([...(externals.get(name) ?? []), join(repoRoot, from)]));
  }
  const deps = copyDependencies(externals, repoRoot, appDir);
  const twice = listPackages(join(appDir, "node_modules", ".pnpm", "node_modules")).filter((name) => BUNDLED_PACKAGES.includes(name));
  if (twice.length > 0) throw new Error(`${twice.join(", ")} bundled, but also a dependency of a copied package: two instances would run; remove it from BUNDLED_PACKAGES`);
  for (const path of RUNTIME_FILES) cpSync(join(repoRoot, path), join(appDir, path), { recursive: true });
  const appVersion = /^appVersion:\s*"?([^"\s]+)"?/m.exec(readFileSync(join(repoRoot, "helm/corridor/Chart.yaml"), "utf8"))?.[1] ?? "0.0.0";
  writeFileSync(join(appDir, "package.json"), JSON.stringify({ name: "corridor-app", version: appVersion, private: true, type: "module" }, null, 2) + "\n");
  cpSync(join(repoRoot, "deploy", "corridor.mjs"), join(appDir, "corridor.mjs"));
  preparePgliteTemplate(result.metafile.outputs, appDir, repoRoot, log);
  writeFileSync(join(appDir, "deployables.json"), JSON.stringify(deployables(repoRoot).map((d) => d.name)) + "\n");

  // Last, once everything is written: an interrupted build leaves no manifest, so the next one runs.
  writeManifest(out, repoRoot, Object.keys(result.metafile.inputs));

  log(`[build] ${entryPoints.length} entries → ${relative(repoRoot, appDir)} with ${deps.direct.length} direct and ${deps.entries} installed packages in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { out, appDir, appVersion, skipped: false };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  // --quiet: `npm start` and `npm run start:split` build before they run; only a failure speaks.
  // --force: build even when the output is up to date.
  const { values } = parseArgs({ options: { out: { type: "string" }, quiet: { type: "boolean", default: false }, force: { type: "boolean", default: false } } });
  await build({ out: values.out ? resolve(values.out) : undefined, log: values.quiet ? () => {} : console.error, force: values.force });
}
