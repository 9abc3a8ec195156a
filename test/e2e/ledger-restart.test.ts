import { createClient } from "@connectrpc/connect";
import { createProcessLogger } from "@corridor/kit";
import { startEmbedded, type EmbeddedSystem } from "@corridor/embedded";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, describe, expect, it } from "vitest";
import { createFreshDatabase } from "../infra/databases.js";
import { eventually, mode, tmp, type Caller } from "./harness.js";
import { usdAccountInfo } from "./ledger-helpers.js";

/**
 * A restart in the middle of pending transfers loses nothing: the sandbox schedule, the ledger's
 * holds and the outbox are all in the database, so after a stop and a start on the same data the
 * pending transfers finish as if nothing had happened. Embedded mode owns its processes, so this
 * runs there (against PGlite on disk, or a fresh Postgres database when DATABASE_URL is set).
 *
 * A transfer made right before the stop completes after the start too, on either bus: its rail
 * instruction stays in the ledger's outbox until the bus holds it durably (Kafka: the broker's ack;
 * in-process: every consumer group has processed it), so a stop in between publishes it again.
 */
describe.skipIf(mode === "split")("ledger across a restart", () => {
  const dataDir = tmp();
  let fresh: Awaited<ReturnType<typeof createFreshDatabase>> | undefined;
  let system: EmbeddedSystem | undefined;

  afterAll(async () => {
    await system?.stop();
    await fresh?.drop();
  });

  const kafkaBrokers = process.env.KAFKA_BROKERS ? process.env.KAFKA_BROKERS.split(",") : undefined;
  const kafkaTopicPrefix = `restart-${Date.now()}.`;

  async function start() {
    return startEmbedded({
      kafkaBrokers,
      kafkaTopicPrefix,
      log: createProcessLogger("e2e-restart", process.env.LOG_LEVEL ?? "warn"),
      databaseUrl: fresh?.url,
      dataDir,
      httpHost: "127.0.0.1",
      httpPort: 0,
    });
  }

  const caller = (url: () => string, clientId: string, clientSecret: string): Caller => ({
    platformId: "",
    clientId,
    clientSecret,
    async call(method, path, body, headers = {}) {
      const res = await fetch(`${url()}/2025-10-13${path}`, {
        method,
        body: body === undefined ? undefined : JSON.stringify(body),
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
    },
  });

  it("finishes pending transfers and keeps every balance after a stop and a start", async () => {
    if (process.env.DATABASE_URL) fresh = await createFreshDatabase(process.env.DATABASE_URL, "corridor_e2e", { migrated: true });
    system = await start();
    const admin = createClient(PlatformAdminService, system.transportFor("auth-sessions"));
    const created = await admin.createPlatform({ name: "restart", environment: Environment.SANDBOX });
    const p = caller(() => system!.url, created.token!.clientId, created.clientSecret);

    const usd = await eventually(async () => (await p.call("GET", "/platform/internal-accounts?currency=USD")).body?.data?.[0]);
    expect((await p.call("POST", `/sandbox/internal-accounts/${usd.id}/fund`, { amount: 10_000 })).status).toBe(200);
    const slow = (await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("005") })).body;
    const fast = (await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000") })).body;

    const out = async (dest: string, amount: number) =>
      (await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: dest }, amount })).body;
    const status = async (id: string) => (await p.call("GET", `/transactions/${id}`)).body.status;

    const pendingOut = await out(slow.id, 1000);
    const pendingIn = (await p.call("POST", "/transfer-in", { source: { accountId: slow.id }, destination: { accountId: usd.id }, amount: 500 })).body;
    await eventually(async () => ((await status(pendingOut.id)) === "PROCESSING" && (await status(pendingIn.id)) === "PROCESSING" ? true : undefined));
    // Created right before the stop: its rail instruction may still sit in the outbox or on the bus.
    const lastMinute = await out(fast.id, 2000);

    await system.stop();
    system = await start();

    expect(await status(pendingOut.id)).toBe("PROCESSING");
    expect((await p.call("GET", "/platform/internal-accounts?currency=USD")).body.data[0].balance.amount).toBeLessThanOrEqual(7000);
    await eventually(async () => ((await status(lastMinute.id)) === "COMPLETED" ? true : undefined));
    expect((await p.call("POST", "/sandbox/clock/advance", { seconds: 30 })).status).toBe(200);
    await eventually(async () => ((await status(pendingOut.id)) === "FAILED" && (await status(pendingIn.id)) === "FAILED" ? true : undefined));
    // 10000 funded, 2000 paid out, the failed 1000 released, the failed pull credited nothing.
    await eventually(async () => ((await p.call("GET", "/platform/internal-accounts?currency=USD")).body.data[0].balance.amount === 8000 ? true : undefined));
  }, 120_000);
});
