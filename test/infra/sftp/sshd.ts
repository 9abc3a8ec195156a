// The bank's SFTP server for tests: Debian's OpenSSH sshd serving only `internal-sftp`, on a
// loopback port, with a host key generated for the run and a scratch folder as the SFTP root.
//
// `sftpServerUnavailableReason()` installs openssh-server with apt-get when sshd is missing and
// this process is root (as on a fresh machine and in CI); it answers why a server cannot be had
// otherwise, for the suites to skip with that reason — except in CI, where `sftpServerRequired`
// makes them fail instead. `startSftpServer()` returns the server and a `stop()` that ends the
// sshd it started and removes its folder.
//
// As root, sshd chroots the session into the scratch root (which must be root-owned and not
// writable by others; its `inbox/`, `outbox/` and `archive/` are writable), and the client logs in
// as root with a key generated for the run (`PermitRootLogin prohibit-password`: no password).
// Not as root, sshd can only serve the user it runs as and cannot chroot: the folders are then
// absolute paths under the scratch root.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

/** In CI the SFTP suites must run: a server that cannot be had is a failure, not a skip. */
export const sftpServerRequired = process.env.CI === "true";

const SSHD_CANDIDATES = ["/usr/sbin/sshd", "/usr/bin/sshd"];
const SFTP_SERVER_CANDIDATES = ["/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server", "/usr/lib/ssh/sftp-server"];

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;
const sshdPath = () => SSHD_CANDIDATES.find((p) => existsSync(p));

/** Holds a machine-wide lock (an atomic mkdir) while `fn` runs: test files in parallel workers all
 * find sshd missing on a fresh machine, and only one apt-get may run at a time. */
function withInstallLock<T>(fn: () => T): T {
  const lock = join(tmpdir(), "corridor-sshd-install.lock");
  const deadline = Date.now() + 600_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock older than any install is a leftover of a killed run.
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })?.mtimeMs! > 900_000) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`waited 10 minutes for ${lock} (another openssh-server install); remove it if no install runs`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500); // a synchronous pause between looks
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function aptInstall(): string | null {
  return withInstallLock(() => (sshdPath() ? null : aptInstallLocked()));
}

function aptInstallLocked(): string | null {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const install = () => spawnSync("apt-get", ["install", "-y", "--no-install-recommends", "openssh-server"], { env, encoding: "utf8", timeout: 300_000 });
  let r = install();
  if (r.error) return `apt-get could not be run (${r.error.message})`;
  if (r.status !== 0) {
    // A fresh machine has no package lists yet.
    spawnSync("apt-get", ["update"], { env, encoding: "utf8", timeout: 300_000 });
    r = install();
  }
  if (r.status !== 0) return `apt-get install openssh-server failed: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" / ")}`;
  return null;
}

let cachedReason: string | null | undefined;

/** Why no sshd can be started here (after trying to install it), or null when it can. */
export function sftpServerUnavailableReason(): string | null {
  if (cachedReason !== undefined) return cachedReason;
  if (!sshdPath()) {
    if (!isRoot()) cachedReason = "OpenSSH's sshd is not installed and this user is not root, so it cannot be installed (apt-get install openssh-server)";
    else if (spawnSync("apt-get", ["--version"]).status !== 0) cachedReason = "OpenSSH's sshd is not installed and there is no apt-get to install it";
    else cachedReason = aptInstall();
    if (!cachedReason && !sshdPath()) cachedReason = "openssh-server installed but no sshd binary found";
  } else cachedReason = null;
  if (!cachedReason && spawnSync("ssh-keygen", ["-?"]).error) cachedReason = "ssh-keygen is not installed";
  return cachedReason;
}

export interface SftpTestServer {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  /** The client's private key (OpenSSH format) that the server accepts. */
  readonly privateKey: string;
  /** The server's host key (an authorized_keys-style line) for host-key pinning. */
  readonly hostPublicKey: string;
  /** On the local disk: the folder the SFTP session sees as "/". */
  readonly localRoot: string;
  /** How the session names the bank's folders: "/inbox" when chrooted, the absolute path otherwise. */
  readonly remotePath: (folder: "inbox" | "outbox" | "archive") => string;
  /** sshd's recent log lines (stderr), for a failing test's message. */
  readonly log: () => string;
  /** A private key the server does not accept (for tests of a refused login). */
  readonly strangerKey: () => string;
  readonly stop: () => Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect({ host: "127.0.0.1", port }, () => {
      c.destroy();
      resolve(true);
    });
    c.once("error", () => resolve(false));
  });
}

function keygen(path: string): void {
  const r = spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "corridor-test", "-f", path], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`ssh-keygen failed: ${r.stderr}`);
}

/** Starts sshd for one suite. Call sftpServerUnavailableReason() first. */
export async function startSftpServer(opts: { startTimeoutMs?: number } = {}): Promise<SftpTestServer> {
  const reason = sftpServerUnavailableReason();
  if (reason) throw new Error(`no SFTP server: ${reason}`);
  const sshd = sshdPath()!;
  // sshd chroots only into a path whose every component is root-owned and writable by no one
  // else: not under /tmp (mode 1777). /run is root's own.
  const dir = mkdtempSync(join(isRoot() && existsSync("/run") ? "/run" : tmpdir(), "corridor-sftp-"));
  chmodSync(dir, 0o755);
  const root = join(dir, "root");
  mkdirSync(root, { mode: 0o755 });
  chmodSync(root, 0o755);
  for (const f of ["inbox", "outbox", "archive"]) mkdirSync(join(root, f), { mode: 0o777 });
  keygen(join(dir, "host_ed25519"));
  keygen(join(dir, "client_ed25519"));
  writeFileSync(join(dir, "authorized_keys"), readFileSync(join(dir, "client_ed25519.pub")), { mode: 0o600 });
  const root_ = isRoot();
  const username = userInfo().username;
  const port = await freePort();
  const sftpServer = SFTP_SERVER_CANDIDATES.find((p) => existsSync(p));
  const config = [
    `ListenAddress 127.0.0.1:${port}`,
    `HostKey ${join(dir, "host_ed25519")}`,
    `PidFile ${join(dir, "sshd.pid")}`,
    `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    "PubkeyAuthentication yes",
    "UsePAM no",
    "StrictModes no",
    "AllowTcpForwarding no",
    "X11Forwarding no",
    "PermitTTY no",
    `AllowUsers ${username}`,
    "LogLevel INFO",
    root_ ? "PermitRootLogin prohibit-password" : "",
    // internal-sftp needs no binary inside the chroot; without chroot the sftp-server binary works too.
    `Subsystem sftp ${root_ || !sftpServer ? "internal-sftp" : sftpServer}`,
    "ForceCommand internal-sftp",
    root_ ? `ChrootDirectory ${root}` : "",
  ].filter(Boolean);
  writeFileSync(join(dir, "sshd_config"), config.join("\n") + "\n");
  if (root_) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 }); // privilege separation directory
  // sshd runs under a small shell watchdog that stops it when this process is gone (a test run
  // killed before its afterAll leaves no server behind), and when told to (SIGTERM).
  const watchdog = [
    `"$0" -D -e -f "$1" & server=$!`,
    `trap 'kill $server 2>/dev/null; wait $server; exit 0' TERM INT`,
    `while kill -0 ${process.pid} 2>/dev/null && kill -0 $server 2>/dev/null; do sleep 1 & wait $!; done`,
    `kill $server 2>/dev/null; wait $server`,
  ].join("\n");
  const child: ChildProcess = spawn("sh", ["-c", watchdog, sshd, join(dir, "sshd_config")], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  let exited: number | null = null;
  child.once("exit", (code) => (exited = code ?? -1));
  const deadline = Date.now() + (opts.startTimeoutMs ?? 15_000);
  while (!(await listening(port))) {
    if (exited !== null) throw new Error(`sshd exited (${exited}) before listening: ${stderr.trim()}`);
    if (Date.now() > deadline) {
      child.kill("SIGTERM");
      throw new Error(`sshd did not listen on 127.0.0.1:${port} in time: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const hostPub = readFileSync(join(dir, "host_ed25519.pub"), "utf8").trim();
  return {
    host: "127.0.0.1",
    port,
    username,
    privateKey: readFileSync(join(dir, "client_ed25519"), "utf8"),
    hostPublicKey: hostPub,
    localRoot: root,
    remotePath: (folder) => (root_ ? `/${folder}` : join(root, folder)),
    log: () => stderr,
    strangerKey: () => {
      const path = join(dir, `stranger_${Math.random().toString(36).slice(2)}`);
      keygen(path);
      return readFileSync(path, "utf8");
    },
    stop: async () => {
      if (exited === null) {
        const gone = new Promise<void>((r) => child.once("exit", () => r()));
        child.kill("SIGTERM");
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
