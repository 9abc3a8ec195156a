import { createServer } from "node:net";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { ManualClock, appErrorInterceptor, createLogger, openDatabase, type DatabaseHandle } from "@corridor/kit";
import { expectRefusal } from "@corridor/kit/testing";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import { afterAll, beforeAll, describe, it } from "vitest";
import { buildSandbox } from "../src/server.js";

/** A local port nothing listens on: connecting to it is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("sandbox with its database unreachable", () => {
  let db: DatabaseHandle;
  beforeAll(async () => {
    db = await openDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:${await closedPort()}/corridor`, poolSize: 1 });
  });
  afterAll(async () => db.close());

  it("answers UNAVAILABLE SERVICE_UNAVAILABLE (the gateway's 503) for a refused connection (ECONNREFUSED), not an unknown error (500)", async () => {
    const built = buildSandbox({ db, clock: new ManualClock("2025-10-13T12:00:00.000Z"), log: createLogger("sandbox-test", "silent"), env: {} });
    const client = createClient(SandboxService, createRouterTransport((r) => built.routes(r), { router: { interceptors: [appErrorInterceptor] } }));
    await expectRefusal(client.getClock({ platformId: "Platform:down" }), "UNAVAILABLE", "SERVICE_UNAVAILABLE");
  });
});
