#!/usr/bin/env node
// Runs the pinned pnpm on a machine that has only Node and npm.
//
//   node scripts/pnpm.mjs ensure      install workspace dependencies when they are missing or stale
//   node scripts/pnpm.mjs <args...>   run pnpm with those arguments
//
// pnpm itself is installed once with npm into .cache/pnpm (no corepack, no global install), so the
// version is exactly the one in package.json's "packageManager" field.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const version = pkg.packageManager.replace(/^pnpm@/, "");
const home = join(root, ".cache", "pnpm", version);
const bin = join(home, "node_modules", "pnpm", "bin", "pnpm.cjs");

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: "inherit", cwd: root, ...opts });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

function ensurePnpm() {
  if (existsSync(bin)) return;
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "package.json"), '{"private":true}\n');
  const status = run("npm", ["install", "--no-audit", "--no-fund", "--silent", `pnpm@${version}`], { cwd: home });
  if (status !== 0 || !existsSync(bin)) {
    console.error(`could not install pnpm@${version} with npm`);
    process.exit(1);
  }
}

function pnpm(args) {
  ensurePnpm();
  return run(process.execPath, [bin, ...args]);
}

// Dependencies are stale when the lockfile or any package.json changed after the last install.
function depsStale() {
  const marker = join(root, "node_modules", ".modules.yaml");
  if (!existsSync(marker)) return true;
  const installedAt = statSync(marker).mtimeMs;
  const lock = join(root, "pnpm-lock.yaml");
  return existsSync(lock) && statSync(lock).mtimeMs > installedAt;
}

const [cmd, ...rest] = process.argv.slice(2);
if (cmd === "ensure") {
  if (!depsStale()) process.exit(0);
  const frozen = existsSync(join(root, "pnpm-lock.yaml")) ? ["--frozen-lockfile"] : [];
  process.exit(pnpm(["install", ...frozen, "--reporter=append-only"]));
} else {
  process.exit(pnpm([cmd, ...rest].filter((a) => a !== undefined)));
}
