import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createGuardedHttpClient, loadConfig, webhookTargetSettingsSchema, type GuardedHttpClient, type HostResolver } from "../src/index.js";

/** A receiver on 127.0.0.1 whose answer each test sets; it remembers what it was sent. */
async function startServer() {
  const seen: { host: string | undefined; path: string | undefined }[] = [];
  const state: { handle: (req: IncomingMessage, res: ServerResponse) => void } = { handle: (_req, res) => res.writeHead(204).end() };
  const server = createServer((req, res) => {
    seen.push({ host: req.headers.host, path: req.url });
    state.handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    seen,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const settings = (env: NodeJS.ProcessEnv = {}) => loadConfig(webhookTargetSettingsSchema, env);

describe("guarded outbound requests", () => {
  let target: Awaited<ReturnType<typeof startServer>>;
  let elsewhere: Awaited<ReturnType<typeof startServer>>;
  const clients: GuardedHttpClient[] = [];
  const client = (opts: Parameters<typeof createGuardedHttpClient>[0] = {}) => {
    const c = createGuardedHttpClient(opts);
    clients.push(c);
    return c;
  };
  const post = (c: GuardedHttpClient, url: string, environment: "SANDBOX" | "PRODUCTION" = "SANDBOX", maxBodyBytes = 4096) =>
    c.request({ url, environment, body: "{}", headers: { "content-type": "application/json" }, timeoutMs: 30_000, maxBodyBytes });

  beforeAll(async () => {
    target = await startServer();
    elsewhere = await startServer();
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
    target.seen.length = 0;
    elsewhere.seen.length = 0;
    target.state.handle = (_req, res) => res.writeHead(204).end();
  });
  afterAll(async () => {
    await target.close();
    await elsewhere.close();
  });

  it("connects to the address the name was checked at, keeping the URL's host for the Host header", async () => {
    const asked: string[] = [];
    const resolve: HostResolver = async (name) => {
      asked.push(name);
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const res = await post(client({ resolve }), `http://localhost:${target.port}/hooks`);
    expect(res).toMatchObject({ ok: true, status: 204 });
    expect(target.seen).toEqual([{ host: `localhost:${target.port}`, path: "/hooks" }]);
    // Resolved once, for the connection itself: nothing can answer differently in between.
    expect(asked).toEqual(["localhost"]);
  });

  it("refuses a name that resolves to loopback for a production platform, and never connects", async () => {
    const resolve: HostResolver = async () => [{ address: "127.0.0.1", family: 4 }];
    const res = await post(client({ resolve }), `https://hooks.example.com:${target.port}/hooks`, "PRODUCTION");
    expect(res).toMatchObject({ ok: false, category: "TARGET_REFUSED" });
    expect(!res.ok && res.message).toContain("rule NON_PUBLIC_ADDRESS");
    expect(target.seen).toHaveLength(0);
  });

  it("refuses a name that resolves to a private address for a sandbox platform even with loopback allowed", async () => {
    const resolve: HostResolver = async () => [{ address: "10.0.0.7", family: 4 }];
    const res = await post(client({ resolve }), "https://hooks.example.com/hooks");
    expect(res).toMatchObject({ ok: false, category: "TARGET_REFUSED" });
  });

  it("refuses loopback for sandbox platforms when the operator turned it off", async () => {
    const res = await post(client({ settings: settings({ CORRIDOR_WEBHOOK_ALLOW_LOOPBACK: "false" }) }), `http://127.0.0.1:${target.port}/hooks`);
    expect(res).toMatchObject({ ok: false, category: "TARGET_REFUSED" });
    expect(target.seen).toHaveLength(0);
  });

  it("does not follow a redirect: a 302 is the answer, and its Location is never asked", async () => {
    target.state.handle = (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${elsewhere.port}/internal` }).end();
    const res = await post(client(), `http://127.0.0.1:${target.port}/hooks`);
    expect(res).toMatchObject({ ok: true, status: 302 });
    expect(target.seen).toHaveLength(1);
    expect(elsewhere.seen).toHaveLength(0);
  });

  it("reads at most the bound of a body that never ends, and answers", async () => {
    let written = 0;
    target.state.handle = (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(16 * 1024, "a");
      // Writes until the client hangs up: without a bound, the read would never finish.
      const pump = () => {
        while (!res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) break;
        }
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
    };
    const res = await post(client(), `http://127.0.0.1:${target.port}/hooks`, "SANDBOX", 4096);
    expect(res).toMatchObject({ ok: true, status: 200, truncated: true });
    expect(res.ok && res.body.byteLength).toBe(4096);
    expect(written).toBeGreaterThan(0);
  });

  it("says 'connection failed' for a closed port, naming no port, address or socket error", async () => {
    const closed = await startServer();
    const port = closed.port;
    await closed.close();
    const res = await post(client(), `http://127.0.0.1:${port}/hooks`);
    expect(res).toMatchObject({ ok: false, category: "CONNECTION_FAILED", message: "connection failed" });
  });

  it("says 'connection failed' for a listener that does not speak HTTP", async () => {
    target.state.handle = (req) => req.socket.end("SSH-2.0-OpenSSH_9.6\r\n");
    const res = await post(client(), `http://127.0.0.1:${target.port}/hooks`);
    expect(res).toMatchObject({ ok: false, category: "CONNECTION_FAILED", message: "connection failed" });
  });

  it("says 'DNS lookup failed' for a name with no address", async () => {
    const res = await post(client({ resolve: async () => [] }), "https://nothing.example.com/hooks");
    expect(res).toMatchObject({ ok: false, category: "DNS_FAILED", message: "DNS lookup failed" });
  });
});
