// Split mode from the one image: the gateway and each service as a container of its own (the
// argument names the deployable, as the Helm chart's `args` do), all in the host's network
// namespace, against this machine's Postgres, Redis and Kafka (DATABASE_URL, REDIS_URL and
// KAFKA_BROKERS, which .ci/run sets), then the same smoke as the embedded container.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ensureSandboxPlatform } from "@corridor/embedded/bootstrap";
import { serviceUrlEnvKey, type ServiceName } from "@corridor/kit";
import { CorridorReadyWaitStrategy, freePort, ownerLabels } from "@corridor/testcontainers";
import { GenericContainer, Wait, type StartedTestContainer } from "testcontainers";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { deployables } from "../../scripts/build.mjs";
import { createFreshDatabase } from "../infra/databases.js";
import { apiClient, runSmoke, startReceiver, type Receiver } from "./smoke.js";

const image = inject("containerImage");
const required = inject("containerRequired");
const missing = ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS"].filter((k) => !process.env[k]);
const reason = !image ? inject("containerSkipReason") : missing.length ? `split containers need ${missing.join(", ")} (CI sets them via .ci/run)` : "";

const services = deployables()
  .map((d) => d.name)
  // The gateway starts below; embedded and admin are not services; a rail connector needs its
  // bank's settings and has suites of its own (test/chaos/connector-kill.test.ts runs one split).
  .filter((n) => !["embedded", "gateway", "admin", "connector"].includes(n)) as ServiceName[];
const CLIENT_ID = "plat_split_containers";
const CLIENT_SECRET = "split-containers-secret-0123456789";

describe.skipIf(reason !== "" && !required)(`split deployables as containers of one image${reason ? ` — skipped: ${reason}` : ""}`, () => {
  const started: StartedTestContainer[] = [];
  let db: Awaited<ReturnType<typeof createFreshDatabase>> | undefined;
  let receiver: Receiver;
  let gatewayUrl = "";
  const dataDir = mkdtempSync(join(tmpdir(), "corridor-split-containers-"));

  beforeAll(async () => {
    if (reason) throw new Error(`the container suites must run here (CI): ${reason}`);
    receiver = await startReceiver();
    db = await createFreshDatabase(process.env.DATABASE_URL!, "corridor_containers");
    const ports = Object.fromEntries(await Promise.all([...services, "gateway"].map(async (n) => [n, await freePort()] as const)));
    const urls = Object.fromEntries(services.map((s) => [serviceUrlEnvKey(s), `http://127.0.0.1:${ports[s]}`]));
    const common = {
      ...urls,
      DATABASE_URL: db.url,
      REDIS_URL: process.env.REDIS_URL!,
      KAFKA_BROKERS: process.env.KAFKA_BROKERS!,
      KAFKA_TOPIC_PREFIX: `containers-${randomBytes(4).toString("hex")}.`,
      HOST: "127.0.0.1",
      NOTIFICATIONS_DELIVERY_POLL_MS: "200",
    };
    const container = (name: string) =>
      new GenericContainer(image!.tag)
        .withNetworkMode("host")
        .withLabels(ownerLabels())
        .withEnvironment({ ...common, PORT: String(ports[name]) })
        .withStartupTimeout(180_000);

    // Every service at once, each ready when it logs that it listens (after its migrations)...
    const all = services.map((name) =>
      container(name)
        .withCommand([name])
        .withWaitStrategy(Wait.forLogMessage(`"msg":"${name} listening"`))
        .start()
        .then((c) => (started.push(c), c)),
    );
    // ...and the gateway, named by CORRIDOR_DEPLOYABLE instead of the argument: ready when its
    // /readyz finds every service SERVING.
    gatewayUrl = `http://127.0.0.1:${ports.gateway}`;
    all.push(
      container("gateway")
        .withEnvironment({ CORRIDOR_DEPLOYABLE: "gateway" })
        .withWaitStrategy(new CorridorReadyWaitStrategy(() => gatewayUrl).withStartupTimeout(180_000))
        .start()
        .then((c) => (started.push(c), c)),
    );
    await Promise.all(all);

    // What `npm run start:split` does once everything is up: the sandbox platform, over Connect.
    await ensureSandboxPlatform({
      transport: createGrpcTransport({ baseUrl: urls[serviceUrlEnvKey("auth-sessions")]! }),
      credentialsFile: join(dataDir, "credentials.json"),
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
    });
  }, 240_000);

  afterAll(async () => {
    await Promise.all(started.map((c) => c.stop().catch(() => undefined)));
    await receiver?.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("runs every deployable from the same image, each its own process, as the non-root user", async () => {
    expect(started).toHaveLength(services.length + 1);
    const ready = (await (await fetch(`${gatewayUrl}/readyz`)).json()) as { services: Record<string, string> };
    expect(Object.keys(ready.services).sort()).toEqual([...services].sort());
    expect(Object.values(ready.services).every((s) => s === "SERVING")).toBe(true);
    for (const c of started) {
      const pid1 = await c.exec(["node", "-e", "process.stdout.write(require('fs').readFileSync('/proc/1/status', 'utf8').match(/Uid:\\s+(\\d+)/)[1])"]);
      expect(pid1.output.trim(), c.getName()).toBe("1000");
    }
  });

  it("runs the smoke through the gateway container, webhooks from the notifications container to the host", async () => {
    await runSmoke(apiClient(`${gatewayUrl}/2025-10-13`, CLIENT_ID, CLIENT_SECRET), receiver);
  }, 120_000);
});
