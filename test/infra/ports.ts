import { spawn } from "node:child_process";
import { createServer } from "node:net";

/** A TCP port free on 127.0.0.1 right now (the kernel's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolvePort(port));
    });
  });
}

/**
 * A detached watchdog that runs `stopCommand` (a shell command) and deletes `dir` once this
 * process is gone, however it ended: a killed test run leaves no server of its own behind. It
 * exits by itself once `dir` is gone (the normal teardown deleted it).
 */
export function stopWhenOwnerDies(stopCommand: string, dir: string): void {
  const owner = process.pid;
  const script = `while kill -0 ${owner} 2>/dev/null && [ -d "$1" ]; do sleep 1; done; if [ -d "$1" ]; then ${stopCommand} >/dev/null 2>&1; rm -rf "$1"; fi`;
  const child = spawn("/bin/sh", ["-c", script, "watchdog", dir], { detached: true, stdio: "ignore" });
  child.unref();
}
