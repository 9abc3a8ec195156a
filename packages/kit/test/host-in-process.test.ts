import { createClient, type Transport } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus } from "@corridor/proto/grpc/health/v1/health_pb.js";
import { afterAll, describe, expect, it } from "vitest";
import { createInProcessBus } from "../src/bus/index.js";
import { systemClock } from "../src/clock.js";
import { openDatabase } from "../src/db/index.js";
import { startInProcess, type InProcessSystem } from "../src/host/index.js";
import { createLogger } from "../src/log.js";
import type { ServiceModule } from "../src/service.js";

const noMigrations = "/nonexistent/migrations";

describe("startInProcess", () => {
  let system: InProcessSystem | undefined;
  afterAll(async () => system?.stop());

  it("lets a service take a transport to a service that starts after it", async () => {
    let captured: Transport | undefined;
    const first: ServiceModule = {
      name: "auth-sessions",
      schema: "first_svc",
      migrationsDir: noMigrations,
      build: ({ transportFor }) => {
        captured = transportFor("ledger"); // ledger is not running yet
        return { routes: () => {}, consumers: [], workers: [] };
      },
    };
    const second: ServiceModule = {
      name: "ledger",
      schema: "second_svc",
      migrationsDir: noMigrations,
      build: () => ({ routes: () => {}, consumers: [], workers: [] }),
    };
    const db = await openDatabase({});
    system = await startInProcess({
      modules: [first, second],
      db,
      bus: createInProcessBus(),
      clock: systemClock,
      log: createLogger("host-test", "silent"),
    });
    const res = await createClient(Health, captured!).check({});
    expect(res.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("fails a call to a service that is not part of the process", async () => {
    await expect(createClient(Health, system!.transportFor("agents")).check({})).rejects.toThrow(/not running/);
  });
});
