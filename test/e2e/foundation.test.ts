import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { NotificationsService } from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

const expectErrorShape = (body: any, status: number, code?: string) => {
  expect(body).toMatchObject({ status, code: code ?? expect.any(String), message: expect.any(String), details: expect.any(Object) });
};

describe.skipIf(skipReason())(`foundation (${mode})`, () => {
  let system: TestSystem;
  let platform: Caller;

  beforeAll(async () => {
    system = await startTestSystem();
    platform = await system.createPlatform();
  });
  afterAll(async () => {
    await system?.stop();
  });

  describe("platform auth", () => {
    it("answers GET /config with 200 for a valid token", async () => {
      const res = await platform.call("GET", "/config");
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: expect.stringMatching(/^PlatformConfig:/),
        isRegulatedFinancialInstitution: false,
        supportedCurrencies: expect.any(Array),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
    });

    it("rejects a wrong secret with 401 in the error shape", async () => {
      const res = await system.as(platform.clientId, "not-the-secret").call("GET", "/config");
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, "UNAUTHORIZED");
    });

    it("rejects a request without credentials with 401", async () => {
      const res = await system.raw("GET", "/2025-10-13/config");
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, "UNAUTHORIZED");
    });

    it("answers 403 FORBIDDEN when a VIEW-only token creates a token", async () => {
      const created = await platform.call("POST", "/tokens", { name: "viewer", permissions: ["VIEW"] });
      expect(created.status).toBe(201);
      const viewer = system.as(created.body.clientId, created.body.clientSecret);
      expect((await viewer.call("GET", "/config")).status).toBe(200);
      const res = await viewer.call("POST", "/tokens", { name: "nope", permissions: ["VIEW"] });
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, "FORBIDDEN");
    });

    it("stops accepting a deleted token at once", async () => {
      const created = await platform.call("POST", "/tokens", { name: "short-lived", permissions: ["VIEW", "MANAGE"] });
      const token = system.as(created.body.clientId, created.body.clientSecret);
      expect((await token.call("GET", "/config")).status).toBe(200); // now cached by the gateway
      const del = await platform.call("DELETE", `/tokens/${created.body.id}`);
      expect(del.status).toBe(204);
      expect(del.body).toBeUndefined();
      const res = await token.call("GET", "/config");
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, "UNAUTHORIZED");
    });
  });

  describe("tokens", () => {
    it("shows the secret only at creation and never stores it in reads", async () => {
      const created = await platform.call("POST", "/tokens", { name: "ops", permissions: ["VIEW", "TRANSACT"] });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        id: expect.stringMatching(/^Token:/),
        name: "ops",
        permissions: ["VIEW", "TRANSACT"],
        clientId: expect.any(String),
        clientSecret: expect.any(String),
      });
      const read = await platform.call("GET", `/tokens/${created.body.id}`);
      expect(read.status).toBe(200);
      expect(read.body.clientSecret).toBeUndefined();
      expect(read.body.clientId).toBe(created.body.clientId);
    });

    it("walks every page of GET /tokens with a right totalCount", async () => {
      const other = await system.createPlatform();
      for (let i = 0; i < 4; i++) {
        expect((await other.call("POST", "/tokens", { name: `t${i}`, permissions: ["VIEW"] })).status).toBe(201);
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await other.call("GET", `/tokens?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        expect(res.status).toBe(200);
        expect(res.body.totalCount).toBe(5); // 4 + the bootstrap token
        seen.push(...res.body.data.map((t: any) => t.id));
        if (!res.body.hasMore) {
          expect(res.body.nextCursor).toBeUndefined();
          break;
        }
        cursor = res.body.nextCursor;
      }
      expect(new Set(seen).size).toBe(5);
      const filtered = await other.call("GET", "/tokens?name=t2");
      expect(filtered.body.totalCount).toBe(1);
      expect(filtered.body.data[0].name).toBe("t2");
    });

    it("rejects bad token input with 400 INVALID_INPUT naming the field", async () => {
      const res = await platform.call("POST", "/tokens", { name: "x", permissions: ["ROOT"] });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, "INVALID_INPUT");
      expect(JSON.stringify(res.body.details.errors)).toContain("permissions");
    });

    it("rejects an out-of-range limit with 400", async () => {
      const res = await platform.call("GET", "/tokens?limit=500");
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, "INVALID_INPUT");
    });

    it("answers 404 for another platform's token", async () => {
      const other = await system.createPlatform();
      const mine = await platform.call("POST", "/tokens", { name: "mine", permissions: ["VIEW"] });
      const res = await other.call("GET", `/tokens/${mine.body.id}`);
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404);
      expect((await other.call("DELETE", `/tokens/${mine.body.id}`)).status).toBe(404);
      expect((await platform.call("GET", `/tokens/${mine.body.id}`)).status).toBe(200);
    });
  });

  describe("errors and routing", () => {
    it("answers 404 NOT_FOUND for an unknown route", async () => {
      const res = await platform.call("GET", "/no-such-thing");
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, "NOT_FOUND");
    });

    it("answers 404 VERSION_NOT_FOUND for an unknown version", async () => {
      const res = await system.raw("GET", "/2024-01-01/config");
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, "VERSION_NOT_FOUND");
    });

    it("answers 400 INVALID_INPUT for malformed JSON and changes nothing", async () => {
      const before = await platform.call("GET", "/config");
      const res = await system.raw("PATCH", "/2025-10-13/config", {
        body: '{"webhookEndpoint": ',
        headers: {
          authorization: `Basic ${Buffer.from(`${platform.clientId}:${platform.clientSecret}`).toString("base64")}`,
          "content-type": "application/json",
        },
      });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, "INVALID_INPUT");
      expect((await platform.call("GET", "/config")).body).toEqual(before.body);
    });

    it("serves a valid OpenAPI 3.1 document and a reference page", async () => {
      const res = await system.raw("GET", "/2025-10-13/openapi.json");
      expect(res.status).toBe(200);
      expect(res.body.openapi).toMatch(/^3\.1\./);
      const result = await new Validator().validate(res.body);
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
      const docs = await system.raw("GET", "/2025-10-13/docs/");
      expect(docs.status).toBe(200);
    });

    it("answers healthz and readyz", async () => {
      expect((await system.raw("GET", "/healthz")).status).toBe(200);
      expect((await system.raw("GET", "/readyz")).status).toBe(200);
    });
  });

  describe("config", () => {
    it("rejects a plain-http webhook endpoint that is not localhost", async () => {
      const res = await platform.call("PATCH", "/config", { webhookEndpoint: "http://example.com/hooks" });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, "INVALID_INPUT");
      expect(JSON.stringify(res.body.details.errors)).toContain("webhookEndpoint");
    });

    it("updates supported currencies and rejects min above max", async () => {
      const ok = await platform.call("PATCH", "/config", {
        supportedCurrencies: [
          { currencyCode: "USD", minAmount: 100, maxAmount: 1000000, requiredCounterpartyFields: [{ name: "FULL_NAME", mandatory: true }], enabledTransactionTypes: ["OUTGOING", "INCOMING"], providerRequiredCustomerFields: [], providerRequiredCounterpartyCustomerFields: [] },
        ],
      });
      expect(ok.status).toBe(200);
      expect(ok.body.supportedCurrencies[0]).toMatchObject({ currencyCode: "USD", minAmount: 100, maxAmount: 1000000 });
      const bad = await platform.call("PATCH", "/config", {
        supportedCurrencies: [{ currencyCode: "USD", minAmount: 10, maxAmount: 5, requiredCounterpartyFields: [], enabledTransactionTypes: ["OUTGOING"], providerRequiredCustomerFields: [], providerRequiredCounterpartyCustomerFields: [] }],
      });
      expect(bad.status).toBe(400);
      expect((await platform.call("GET", "/config")).body.supportedCurrencies[0].maxAmount).toBe(1000000);
    });

    it("takes a currency with only its code and limits: the field lists default to none, the directions to both", async () => {
      const before = (await platform.call("GET", "/config")).body.supportedCurrencies;
      const ok = await platform.call("PATCH", "/config", {
        supportedCurrencies: [...before, { currencyCode: "EUR", minAmount: 1, maxAmount: 500000 }],
      });
      expect(ok.status).toBe(200);
      expect(ok.body.supportedCurrencies.find((c: { currencyCode: string }) => c.currencyCode === "EUR")).toEqual({
        currencyCode: "EUR",
        minAmount: 1,
        maxAmount: 500000,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: ["OUTGOING", "INCOMING"],
        providerRequiredCustomerFields: [],
        providerRequiredCounterpartyCustomerFields: [],
      });
      // What was given explicitly is kept as given.
      expect(ok.body.supportedCurrencies.find((c: { currencyCode: string }) => c.currencyCode === "USD").requiredCounterpartyFields).toEqual([{ name: "FULL_NAME", mandatory: true }]);
      const unknown = await platform.call("PATCH", "/config", { supportedCurrencies: [...before, { currencyCode: "XYZ", minAmount: 1, maxAmount: 5 }] });
      expectErrorShape(unknown.body, 400, "INVALID_INPUT");
      expect(unknown.body.details.errors.map((e: { field: string }) => e.field)).toEqual([`body.supportedCurrencies[${before.length}].currencyCode`]);
      const missingLimits = await platform.call("PATCH", "/config", { supportedCurrencies: [{ currencyCode: "GBP" }] });
      expectErrorShape(missingLimits.body, 400, "INVALID_INPUT");
      expect(missingLimits.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(["body.supportedCurrencies[0].maxAmount", "body.supportedCurrencies[0].minAmount"]);
      await platform.call("PATCH", "/config", { supportedCurrencies: before });
    });
  });

  describe("PATCH /config reaches notifications through the outbox and the bus", () => {
    let receiver: Server;
    const received: { headers: IncomingMessage["headers"]; body: string }[] = [];

    beforeAll(async () => {
      receiver = createServer((req, res) => {
        let body = "";
        req.on("data", (c) => (body += c));
        req.on("end", () => {
          received.push({ headers: req.headers, body });
          res.writeHead(200).end();
        });
      });
      await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    });
    afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

    it("delivers a signed TEST webhook to the endpoint set by PATCH /config", async () => {
      const hook = await system.createPlatform();
      const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const patched = await hook.call("PATCH", "/config", { webhookEndpoint: endpoint });
      expect(patched.status).toBe(200);
      expect(patched.body.webhookEndpoint).toBe(endpoint);

      // notifications keeps its own copy of the endpoint from the PlatformConfigUpdated event:
      // outbox → bus → inbox, asynchronously. Its settings RPC shows the copy as the event left it.
      const notifications = createClient(NotificationsService, system.transportFor("notifications"));
      const copy = await eventually(async () => {
        const { settings } = await notifications.getWebhookSettings({ platformId: hook.platformId });
        return settings?.webhookEndpoint === endpoint ? settings : undefined;
      });
      expect(copy.webhookEndpoint).toBe(endpoint);

      const test = await hook.call("POST", "/sandbox/webhooks/test");
      expect(test.status).toBe(200);
      const attempt = test.body;
      expect(attempt).toMatchObject({ url: endpoint, response_status: 200 });

      const secret = await hook.call("GET", "/config/webhook-secret");
      expect(secret.status).toBe(200);
      const last = received[received.length - 1]!;
      const verified = new Webhook(secret.body.secret).verify(last.body, {
        "webhook-id": String(last.headers["webhook-id"]),
        "webhook-timestamp": String(last.headers["webhook-timestamp"]),
        "webhook-signature": String(last.headers["webhook-signature"]),
      }) as any;
      expect(verified).toMatchObject({ type: "TEST", id: expect.stringMatching(/^Webhook:/) });
    });

    it("a TEST sent right after PATCH /config goes to the new endpoint without waiting for the event", async () => {
      const hook = await system.createPlatform();
      const port = (receiver.address() as AddressInfo).port;
      for (const path of ["/first", "/second"]) {
        const endpoint = `http://127.0.0.1:${port}${path}`;
        expect((await hook.call("PATCH", "/config", { webhookEndpoint: endpoint })).status).toBe(200);
        const test = await hook.call("POST", "/sandbox/webhooks/test");
        expect(test.status, JSON.stringify(test.body)).toBe(200);
        expect(test.body).toMatchObject({ url: endpoint, response_status: 200 });
      }
      expect((await hook.call("PATCH", "/config", { webhookEndpoint: "" })).status).toBe(200);
      const cleared = await hook.call("POST", "/sandbox/webhooks/test");
      expectErrorShape(cleared.body, 400, "WEBHOOK_ENDPOINT_NOT_SET");
    });

    it("refuses sandbox endpoints to a production platform with 403", async () => {
      const prod = await system.createPlatform({ environment: "PRODUCTION" });
      const res = await prod.call("POST", "/sandbox/webhooks/test");
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, "FORBIDDEN");
    });
  });
});
