// The workspace's dependencies, installed with the pinned pnpm on a machine that has only Node and
// npm. Shared by scripts/pnpm.mjs (the CLI) and scripts/start.mjs (`npm start`, which checks them
// in its own process instead of starting one more Node only to find nothing to do).
//
// pnpm itself is installed once with npm into .cache/pnpm (no corepack, no global install), so the
// version is exactly the one in package.json's "packageManager" field.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

function pnpmBin() {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const version = pkg.packageManager.replace(/^pnpm@/, "");
  const home = join(root, ".cache", "pnpm", version);
  return { version, home, bin: join(home, "node_modules", "pnpm", "bin", "pnpm.cjs") };
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: "inherit", cwd: root, ...opts });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

function ensurePnpm() {
  const { version, home, bin } = pnpmBin();
  if (existsSync(bin)) return bin;
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "package.json"), '{"private":true}\n');
  const status = run("npm", ["install", "--no-audit", "--no-fund", "--silent", `pnpm@${version}`], { cwd: home });
  if (status !== 0 || !existsSync(bin)) {
    console.error(`could not install pnpm@${version} with npm`);
    process.exit(1);
  }
  return bin;
}

/** Runs the pinned pnpm with `args` in the repository root; resolves with its exit status. */
export function pnpm(args) {
  return run(process.execPath, [ensurePnpm(), ...args]);
}

/** Dependencies are stale when never installed, or when the lockfile changed after the last install. */
export function depsStale() {
  const marker = join(root, "node_modules", ".modules.yaml");
  if (!existsSync(marker)) return true;
  const installedAt = statSync(marker).mtimeMs;
  const lock = join(root, "pnpm-lock.yaml");
  return existsSync(lock) && statSync(lock).mtimeMs > installedAt;
}

/** Installs the workspace's dependencies when they are stale; the exit status of the install (0 when none was needed). */
export function ensureDeps() {
  if (!depsStale()) return 0;
  const frozen = existsSync(join(root, "pnpm-lock.yaml")) ? ["--frozen-lockfile"] : [];
  return pnpm(["install", ...frozen, "--reporter=append-only"]);
}
