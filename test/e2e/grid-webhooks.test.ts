import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { individual } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { gridVerified, type ReceivedWebhook as Received } from "./grid-signature.js";
import { fund, platformAccount, platformExternal, txStatus } from "./ledger-helpers.js";


/** Issue 27: a platform may take Grid's event names; every webhook carries X-Grid-Signature. */
describe.skipIf(skipReason())(`Grid-style webhooks (${mode})`, () => {
  let system: TestSystem;
  let grid: Caller;
  let seed: Caller;
  const servers: Server[] = [];

  async function receiver(): Promise<{ url: string; received: Received[] }> {
    const received: Received[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    servers.push(server);
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
  }

  beforeAll(async () => {
    system = await startTestSystem();
    grid = await system.createPlatform({ name: "grid naming e2e" });
    seed = await system.createPlatform({ name: "seed naming e2e" });
  });
  afterAll(async () => {
    await system?.stop();
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  });

  it("serves the deployment's public key and names the naming in the config (default CORRIDOR)", async () => {
    const key = await grid.call("GET", "/config/webhook-public-key");
    expect(key.status).toBe(200);
    expect(key.body).toEqual({ publicKey: expect.stringMatching(/^-----BEGIN PUBLIC KEY-----\n/), algorithm: "ECDSA_P256_SHA256" });
    // One key per deployment: every platform reads the same.
    expect((await seed.call("GET", "/config/webhook-public-key")).body.publicKey).toBe(key.body.publicKey);
    expect((await seed.call("GET", "/config")).body.webhookEventNaming).toBe("CORRIDOR");
    const bad = await seed.call("PATCH", "/config", { webhookEventNaming: "STRIPE" });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("INVALID_INPUT");
    expect((await seed.call("GET", "/config")).body.webhookEventNaming).toBe("CORRIDOR");
  });

  it("sends an opted-in platform Grid's types, verified by a Grid handler; the default platform keeps the seed's names", async () => {
    const { publicKey } = (await grid.call("GET", "/config/webhook-public-key")).body as { publicKey: string };
    const g = await receiver();
    const s = await receiver();
    const patched = await grid.call("PATCH", "/config", { webhookEndpoint: g.url, webhookEventNaming: "GRID" });
    expect(patched.status).toBe(200);
    expect(patched.body.webhookEventNaming).toBe("GRID");
    expect((await seed.call("PATCH", "/config", { webhookEndpoint: s.url })).status).toBe(200);
    for (const p of [grid, seed]) {
      await eventually(async () => {
        const res = await p.call("POST", "/sandbox/webhooks/test");
        return res.status === 200 && res.body.response_status === 200 ? true : undefined;
      });
    }

    const payout = async (p: Caller) => {
      const customer = (await p.call("POST", "/customers", individual())).body;
      expect((await p.call("POST", "/verifications", { customerId: customer.id })).body.verificationStatus).toBe("APPROVED");
      const usd = await platformAccount(p);
      await fund(p, usd.id, 10_000);
      const ext = await platformExternal(p, "000");
      const out = await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.id }, amount: 2500 });
      expect(out.status, JSON.stringify(out.body)).toBe(201);
      await txStatus(p, out.body.id, "COMPLETED");
      return { customerId: customer.id as string, txId: out.body.id as string };
    };
    const gp = await payout(grid);
    const sp = await payout(seed);

    // A handler written for Grid: verify X-Grid-Signature, then route on the type's object.
    const routed = () => {
      const out: { kind: string; type: string; id: string }[] = [];
      for (const r of g.received) {
        if (!gridVerified(publicKey, r)) throw new Error(`a webhook did not verify: ${r.body.slice(0, 80)}`);
        const webhook = JSON.parse(r.body) as { type: string; data: { id?: string } };
        const kind = webhook.type.startsWith("OUTGOING_PAYMENT.") ? "payout" : webhook.type.startsWith("CUSTOMER.") ? "customer" : webhook.type === "TEST" ? "test" : "other";
        out.push({ kind, type: webhook.type, id: webhook.data.id ?? "" });
      }
      return out;
    };
    await eventually(async () => (routed().some((w) => w.type === "OUTGOING_PAYMENT.COMPLETED" && w.id === gp.txId) ? true : undefined));
    await eventually(async () => (routed().some((w) => w.type === "CUSTOMER.KYC_APPROVED" && w.id === gp.customerId) ? true : undefined));
    const types = routed().map((w) => w.type);
    expect(types.every((t) => t === "TEST" || /^[A-Z_]+\.[A-Z_]+$/.test(t)), types.join(", ")).toBe(true);
    expect(routed().filter((w) => w.kind === "payout").length).toBeGreaterThan(0);

    // The same deliveries verify per Standard Webhooks with the platform's secret.
    const gridSecret = (await grid.call("GET", "/config/webhook-secret")).body.secret as string;
    for (const r of g.received) {
      expect(() =>
        new Webhook(gridSecret).verify(r.body, {
          "webhook-id": String(r.headers["webhook-id"]),
          "webhook-timestamp": String(r.headers["webhook-timestamp"]),
          "webhook-signature": String(r.headers["webhook-signature"]),
        }),
      ).not.toThrow();
    }
    // A tampered body fails Grid's verification.
    const one = g.received.find((r) => r.body.includes(gp.txId))!;
    expect(gridVerified(publicKey, { ...one, body: one.body.replace("2500", "2501") })).toBe(false);

    // The default platform: the seed's names, still signed both ways.
    await eventually(async () => (s.received.some((r) => JSON.parse(r.body).type === "OUTGOING_PAYMENT_COMPLETED" && JSON.parse(r.body).data.id === sp.txId) ? true : undefined));
    expect(s.received.every((r) => gridVerified(publicKey, r))).toBe(true);
    expect(s.received.map((r) => JSON.parse(r.body).type as string).filter((t) => t !== "TEST").every((t) => !t.includes("."))).toBe(true);
  }, 90_000);
});
