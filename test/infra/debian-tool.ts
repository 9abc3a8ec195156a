import { spawnSync } from "node:child_process";

/** Where a Debian package's command is, or why it is not on this machine. */
export type ToolLookup = { path: string; missing?: undefined } | { path?: undefined; missing: string };

const found = new Map<string, ToolLookup>();

function which(command: string): string | undefined {
  const r = spawnSync("sh", ["-c", `command -v ${command}`], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() || undefined : undefined;
}

function aptInstall(pkg: string): boolean {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const install = () => spawnSync("apt-get", ["install", "-y", "-qq", pkg], { stdio: "ignore", env, timeout: 300_000 }).status === 0;
  if (install()) return true;
  // A fresh machine has no package lists yet.
  spawnSync("apt-get", ["update", "-qq"], { stdio: "ignore", env, timeout: 300_000 });
  return install();
}

/**
 * A command from Debian's packages that a test runs as a real, independent implementation
 * (xmllint for XSD validation, sshd for SFTP, …): found on PATH, or installed with apt-get when the
 * tests run as root (CI does), once per process. Without it the lookup says why, and the suite
 * skips saying so — except in CI, where it must run (use `requireInCi`).
 */
export function debianTool(command: string, pkg: string): ToolLookup {
  const cached = found.get(command);
  if (cached) return cached;
  let path = which(command);
  if (!path && process.getuid?.() === 0) {
    aptInstall(pkg);
    path = which(command);
  }
  const lookup: ToolLookup = path ? { path } : { missing: `${command} is not installed and could not be installed (apt-get install ${pkg}${process.getuid?.() === 0 ? " failed" : " needs root"})` };
  found.set(command, lookup);
  return lookup;
}

/** In CI a missing tool is a failure, not a skip: throws there; elsewhere returns whether to skip. */
export function skipWithout(lookup: ToolLookup, suite: string): boolean {
  if (lookup.path) return false;
  if (process.env.CI) throw new Error(`${suite} must run in CI: ${lookup.missing}`);
  console.warn(`[${suite}] skipped: ${lookup.missing}`);
  return true;
}
