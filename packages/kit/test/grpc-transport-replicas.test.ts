// The service transport given a service's replicas (a comma-separated URL setting, as
// `start:split --replicas N` passes it): each call goes to the next replica in turn, a replica
// that refuses the connection is skipped, and only when every one refuses does the call fail
// (Unavailable), as with one URL. Real h2c servers on loopback, each answering grpc.health.v1 and
// recording which of them served.
import { createServer, type AddressInfo } from "node:net";
import { Code, ConnectError, createClient, type ConnectRouter } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@corridor/proto/grpc/health/v1/health_pb.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createServiceTransport, env, loadConfig, serveConnect, serviceUrlSettings, z, type ConnectServer } from "../src/index.js";

/** Which replica served each call, in order. */
const served: string[] = [];

/** A replica named `name`: Check answers SERVING (or fails, when `failChecks`), Watch sends one status and ends. */
async function replica(name: string, opts: { port?: number; failChecks?: boolean } = {}): Promise<ConnectServer> {
  const routes = (router: ConnectRouter) =>
    router.service(Health, {
      check: async () => {
        served.push(name);
        if (opts.failChecks) throw new ConnectError(`${name} is failing`, Code.Unavailable);
        return { status: Status.SERVING };
      },
      async *watch() {
        served.push(name);
        yield { status: Status.SERVING };
      },
    });
  return serveConnect({ routes, interceptors: [], port: opts.port ?? 0, host: "127.0.0.1" });
}

const urlOf = (port: number) => `http://127.0.0.1:${port}`;

/** A loopback port nothing listens on (it was free a moment ago): connections to it are refused. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", () => resolve()));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

async function checks(transport: ReturnType<typeof createServiceTransport>, n: number) {
  const client = createClient(Health, transport);
  for (let i = 0; i < n; i++) expect((await client.check({ service: "" })).status).toBe(Status.SERVING);
}

describe("the service transport over a service's replicas", () => {
  let a: ConnectServer;
  let b: ConnectServer;
  const extra: ConnectServer[] = [];

  beforeAll(async () => {
    a = await replica("a");
    b = await replica("b");
  });
  afterEach(async () => {
    served.length = 0;
    for (const s of extra.splice(0)) await s.close();
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it("sends each call to the next replica in turn, over one connection per replica", async () => {
    await checks(createServiceTransport({ baseUrl: `${urlOf(a.port)},${urlOf(b.port)}` }), 6);
    expect(served).toEqual(["a", "b", "a", "b", "a", "b"]);
    // Spaces around the commas are allowed, as in every list setting.
    served.length = 0;
    await checks(createServiceTransport({ baseUrl: ` ${urlOf(b.port)} , ${urlOf(a.port)} ` }), 2);
    expect(served).toEqual(["b", "a"]);
  });

  it("picks the replica of a server stream in turn too", async () => {
    const client = createClient(Health, createServiceTransport({ baseUrl: `${urlOf(a.port)},${urlOf(b.port)}` }));
    for (let i = 0; i < 4; i++) {
      const statuses = [];
      for await (const res of client.watch({ service: "" })) statuses.push(res.status);
      expect(statuses).toEqual([Status.SERVING]);
    }
    expect(served).toEqual(["a", "b", "a", "b"]);
  });

  it("sends every call to the replica that accepts when the other refuses connections, whichever comes first in the list", async () => {
    const dead = urlOf(await closedPort());
    await checks(createServiceTransport({ baseUrl: `${urlOf(a.port)},${dead}` }), 5);
    await checks(createServiceTransport({ baseUrl: `${dead},${urlOf(a.port)}` }), 5);
    expect(served).toEqual(Array(10).fill("a"));
  });

  it("sends a stream only to the replica in turn (its input cannot be sent twice): refused there, it fails; the next goes on", async () => {
    const client = createClient(Health, createServiceTransport({ baseUrl: `${urlOf(await closedPort())},${urlOf(b.port)}` }));
    const watch = async () => {
      const statuses = [];
      for await (const res of client.watch({ service: "" })) statuses.push(res.status);
      return statuses;
    };
    await expect(watch()).rejects.toMatchObject({ code: Code.Unavailable });
    expect(await watch()).toEqual([Status.SERVING]);
    expect(served).toEqual(["b"]);
  });

  it("gives a replica that comes back (a restart on its port) its turn again", async () => {
    const port = await closedPort();
    const transport = createServiceTransport({ baseUrl: `${urlOf(a.port)},${urlOf(port)}` });
    await checks(transport, 4);
    expect(served).toEqual(["a", "a", "a", "a"]);
    extra.push(await replica("c", { port }));
    served.length = 0;
    await checks(transport, 4);
    expect(served).toEqual(["a", "c", "a", "c"]);
  });

  it("fails Unavailable, as one URL does, only when every replica refuses the connection", async () => {
    const dead = [urlOf(await closedPort()), urlOf(await closedPort())];
    const failure = (baseUrl: string, make = createServiceTransport) =>
      createClient(Health, make({ baseUrl }))
        .check({ service: "" })
        .then(
          () => undefined,
          (err: unknown) => ConnectError.from(err).code,
        );
    expect(await failure(dead.join(","))).toBe(Code.Unavailable);
    // One URL behaves as the stock transport (and as before replicas).
    expect(await failure(dead[0]!)).toBe(Code.Unavailable);
    expect(await failure(dead[0]!, createGrpcTransport)).toBe(Code.Unavailable);
    expect(served).toEqual([]);
  });

  it("never sends again a call a replica received and failed (it may have been processed)", async () => {
    const failing = await replica("failing", { failChecks: true });
    extra.push(failing);
    const client = createClient(Health, createServiceTransport({ baseUrl: `${urlOf(failing.port)},${urlOf(a.port)}` }));
    await expect(client.check({ service: "" })).rejects.toMatchObject({ code: Code.Unavailable, rawMessage: "failing is failing" });
    expect(served).toEqual(["failing"]);
  });

  it("with one URL sends every call there", async () => {
    await checks(createServiceTransport({ baseUrl: urlOf(b.port) }), 3);
    expect(served).toEqual(["b", "b", "b"]);
  });
});

describe("the CORRIDOR_<SERVICE>_URL settings", () => {
  const schema = z.object({ ...serviceUrlSettings() });

  it("take one base URL or several comma-separated, and default to the split port", () => {
    const config = loadConfig(schema, { CORRIDOR_LEDGER_URL: "http://127.0.0.1:8112, http://127.0.0.1:8122" });
    expect(config.CORRIDOR_LEDGER_URL).toBe("http://127.0.0.1:8112, http://127.0.0.1:8122");
    expect(config.CORRIDOR_AUTH_SESSIONS_URL).toBe("http://127.0.0.1:8101");
    expect(loadConfig(z.object({ U: env.urls("http://x:1") }), { U: "https://ledger.corridor:8102" }).U).toBe("https://ledger.corridor:8102");
  });

  it("refuse the start naming each entry that is not an http(s) URL", () => {
    expect(() => loadConfig(schema, { CORRIDOR_LEDGER_URL: "http://127.0.0.1:8112,127.0.0.1:8122,ftp://x" })).toThrow(
      /CORRIDOR_LEDGER_URL: "127\.0\.0\.1:8122" is not an http\(s\) base URL[^\n]*\n\s*CORRIDOR_LEDGER_URL: "ftp:\/\/x" is not an http\(s\) base URL/,
    );
    expect(() => loadConfig(schema, { CORRIDOR_QUOTES_FX_URL: " , " })).toThrow(/CORRIDOR_QUOTES_FX_URL: needs an http\(s\) base URL/);
  });
});
