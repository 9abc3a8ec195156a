import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

// Issue 23, finding 4 through the public API: PATCH /config refuses webhook endpoints that are not
// public (in every spelling), naming the rule; the TEST webhook never follows a redirect, shows
// only a bounded excerpt of an answer and never a socket error's details.

/** A receiver on 127.0.0.1 whose answer each test sets; it counts what reached it. */
async function startReceiver() {
  const state: { hits: number; handle: (req: IncomingMessage, res: ServerResponse) => void } = {
    hits: 0,
    handle: (_req, res) => void res.writeHead(200).end(),
  };
  const server: Server = createServer((req, res) => {
    state.hits++;
    req.resume();
    req.on("end", () => state.handle(req, res));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    state,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const SSRF_SPELLINGS: [string, string][] = [
  ["https://169.254.169.254/latest/meta-data/", "NON_PUBLIC_ADDRESS"],
  ["https://[::ffff:169.254.169.254]/", "NON_PUBLIC_ADDRESS"],
  ["https://2130706433/", "NON_PUBLIC_ADDRESS"],
  ["https://0x7f000001/", "NON_PUBLIC_ADDRESS"],
  ["https://0177.0.0.1/", "NON_PUBLIC_ADDRESS"],
  ["https://127.1/", "NON_PUBLIC_ADDRESS"],
  ["https://10.0.0.1/", "NON_PUBLIC_ADDRESS"],
  ["https://192.168.1.1/", "NON_PUBLIC_ADDRESS"],
  ["https://100.64.0.1/", "NON_PUBLIC_ADDRESS"],
  ["https://[fd00::1]/", "NON_PUBLIC_ADDRESS"],
  ["https://metadata.google.internal/computeMetadata/v1/", "INTERNAL_HOSTNAME"],
  ["https://localhost./", "INTERNAL_HOSTNAME"],
  ["http://127.0.0.1:5432", "NON_PUBLIC_ADDRESS"],
  ["10.0.0.1", "URL_INVALID"],
  ["192.168.1.1", "URL_INVALID"],
  ["metadata.google.internal", "URL_INVALID"],
];

describe.skipIf(skipReason())(`webhook endpoint rules (${mode})`, () => {
  let system: TestSystem;
  let prod: Caller;
  let sandbox: Caller;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let elsewhere: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    elsewhere = await startReceiver();
    system = await startTestSystem();
    prod = await system.createPlatform({ name: "ssrf e2e production", environment: "PRODUCTION" });
    sandbox = await system.createPlatform({ name: "ssrf e2e sandbox" });
  });
  afterAll(async () => {
    await system?.stop();
    await receiver?.close();
    await elsewhere?.close();
  });

  async function expectRefused(p: Caller, url: string, rule: string) {
    const before = (await p.call("GET", "/config")).body;
    const res = await p.call("PATCH", "/config", { webhookEndpoint: url });
    expect(res.status, url).toBe(400);
    expect(res.body).toMatchObject({ status: 400, code: "INVALID_INPUT", message: expect.any(String) });
    expect(res.body.details.errors, url).toEqual([{ field: "body.webhookEndpoint", reason: expect.stringContaining(`rule ${rule}`) }]);
    expect((await p.call("GET", "/config")).body, url).toEqual(before);
  }

  it.each(SSRF_SPELLINGS)("refuses a production platform the webhook endpoint %s with 400 naming rule %s", async (url, rule) => {
    await expectRefused(prod, url, rule);
  });

  it("refuses a production platform a loopback endpoint although sandbox platforms may use one here", async () => {
    await expectRefused(prod, receiver.url, "NON_PUBLIC_ADDRESS");
    await expectRefused(prod, "http://localhost:3000/hooks", "INTERNAL_HOSTNAME");
  });

  it("accepts a production platform's public https endpoint", async () => {
    const res = await prod.call("PATCH", "/config", { webhookEndpoint: "https://hooks.example.com/corridor" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.webhookEndpoint).toBe("https://hooks.example.com/corridor");
  });

  it("refuses a sandbox platform metadata, private and IPv4-mapped endpoints, and accepts loopback (the operator's default)", async () => {
    for (const [url, rule] of SSRF_SPELLINGS.filter(([u]) => !/127\.|0x7f|0177|2130706433|localhost/.test(u))) await expectRefused(sandbox, url, rule);
    await expectRefused(sandbox, "http://[::ffff:127.0.0.1]:3000/hooks", "NON_PUBLIC_ADDRESS");
    const res = await sandbox.call("PATCH", "/config", { webhookEndpoint: receiver.url });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  /** The TEST webhook once notifications has the sandbox platform's endpoint (it learns it from an event). */
  async function testWebhook(endpoint: string) {
    expect((await sandbox.call("PATCH", "/config", { webhookEndpoint: endpoint })).status).toBe(200);
    return eventually(async () => {
      const res = await sandbox.call("POST", "/sandbox/webhooks/test");
      // 200: the endpoint answered; 400 WEBHOOK_DELIVERY_FAILED: no answer came (details name it).
      if (res.status === 200 && res.body.url === endpoint) return res.body;
      if (res.status === 400 && res.body.code === "WEBHOOK_DELIVERY_FAILED" && res.body.details.url === endpoint) return res.body;
      return undefined;
    });
  }

  it("does not follow a redirect: the TEST webhook answers the 302 and the Location is never asked", async () => {
    receiver.state.handle = (_req, res) => void res.writeHead(302, { location: elsewhere.url }).end("moved");
    const body = await testWebhook(receiver.url);
    expect(body).toEqual({ url: receiver.url, response_status: 302, response_body: "moved" });
    expect(elsewhere.state.hits).toBe(0);
  });

  it("shows at most a bounded excerpt of an answer that never ends", async () => {
    receiver.state.handle = (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(16 * 1024, "q");
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
    };
    const body = await testWebhook(`${receiver.url}?endless`);
    expect(body).toMatchObject({ response_status: 200, response_body: "q".repeat(1024) });
  });

  it("answers a closed port with 'connection failed', never the socket error (no port scanning)", async () => {
    const closed = await startReceiver();
    const url = closed.url;
    await closed.close();
    const body = await testWebhook(url);
    expect(body).toMatchObject({ status: 400, code: "WEBHOOK_DELIVERY_FAILED", details: { url, reason: "connection failed" } });
    expect(JSON.stringify(body)).not.toMatch(/ECONN|errno|syscall|127\.0\.0\.1:\d+ /);
  });
});
