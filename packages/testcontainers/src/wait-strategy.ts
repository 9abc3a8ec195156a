import type { BoundPorts, WaitStrategy } from "testcontainers";

/** dockerode's Container, as testcontainers hands it to a wait strategy. */
type DockerContainer = Parameters<WaitStrategy["waitUntilReady"]>[0];

/**
 * Ready when Corridor's gateway answers `/readyz` with 200 (every service SERVING) and, when
 * credentials are given, they authenticate (the first start creates the sandbox platform just
 * after the gateway listens). Fails at once, with the container's last log lines, if the
 * container exits while starting.
 */
export class CorridorReadyWaitStrategy implements WaitStrategy {
  private startupTimeoutMs = 120_000;
  private startupTimeoutSet = false;

  constructor(
    private readonly baseUrlOf: (boundPorts: BoundPorts) => Promise<string> | string,
    private readonly credentials?: { clientId: string; clientSecret: string },
    private readonly apiVersion = "2025-10-13",
  ) {}

  withStartupTimeout(startupTimeoutMs: number): this {
    this.startupTimeoutMs = startupTimeoutMs;
    this.startupTimeoutSet = true;
    return this;
  }

  isStartupTimeoutSet(): boolean {
    return this.startupTimeoutSet;
  }

  getStartupTimeout(): number {
    return this.startupTimeoutMs;
  }

  async waitUntilReady(container: DockerContainer, boundPorts: BoundPorts): Promise<void> {
    const base = await this.baseUrlOf(boundPorts);
    const deadline = Date.now() + this.startupTimeoutMs;
    const auth = this.credentials ? `Basic ${Buffer.from(`${this.credentials.clientId}:${this.credentials.clientSecret}`).toString("base64")}` : undefined;
    let last = "no answer yet";
    for (let attempt = 0; ; attempt++) {
      if (await this.answers(`${base}/readyz`)) {
        if (!auth) return;
        const status = await this.status(`${base}/${this.apiVersion}/config`, { authorization: auth });
        if (status === 200) return;
        last = `/readyz is 200 but GET /${this.apiVersion}/config with the credentials answers ${status ?? "nothing"}`;
      } else {
        last = `${base}/readyz is not 200 yet`;
      }
      if (attempt % 4 === 3) {
        const state = (await container.inspect()).State;
        if (!state.Running) throw new Error(`the Corridor container exited (code ${state.ExitCode}) while starting:\n${await tail(container)}`);
      }
      if (Date.now() > deadline) throw new Error(`Corridor was not ready after ${this.startupTimeoutMs} ms (${last}):\n${await tail(container)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  private async answers(url: string): Promise<boolean> {
    return (await this.status(url)) === 200;
  }

  private async status(url: string, headers: Record<string, string> = {}): Promise<number | undefined> {
    try {
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return undefined;
    }
  }
}

/** The container's last log lines (stdout and stderr). */
async function tail(container: DockerContainer, lines = 40): Promise<string> {
  try {
    const buf = (await container.logs({ stdout: true, stderr: true, tail: lines, follow: false })) as unknown as Buffer;
    return demux(buf);
  } catch (err) {
    return `(no logs: ${String(err)})`;
  }
}

/** Docker's multiplexed log stream (8-byte frame headers) as text. */
function demux(buf: Buffer): string {
  const parts: string[] = [];
  let i = 0;
  while (i + 8 <= buf.length && (buf[i] === 1 || buf[i] === 2) && buf[i + 1] === 0) {
    const size = buf.readUInt32BE(i + 4);
    parts.push(buf.subarray(i + 8, i + 8 + size).toString("utf8"));
    i += 8 + size;
  }
  return i === 0 ? buf.toString("utf8") : parts.join("");
}
