import { createVerify, generateKeyPairSync } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ManualClock } from "@corridor/kit";
import { PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { PlatformConfigSchema } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { loadNotificationsConfig } from "../src/config.js";
import { envelopeFor, eventTypeFor, gridEventType, gridSignature, newSigningKeyPem, signingKeyOf, signingKeyProblem } from "../src/domain/grid-webhooks.js";
import { configUpdated, newPlatformId, openTestDatabase, outgoingCompleted, startNotifications, type NotificationsUnderTest } from "./support.js";

/**
 * Verification as Grid's webhook documentation describes it, written from that text and not from
 * our signer: take X-Grid-Signature, decode it from base64, and verify the raw request body with
 * the public key (PEM, SPKI) using SHA-256 ECDSA.
 */
function gridDocsVerify(publicKeyPem: string, rawBody: string, header: string | undefined): boolean {
  if (!header) return false;
  const verifier = createVerify("SHA256");
  verifier.update(rawBody);
  verifier.end();
  return verifier.verify({ key: publicKeyPem, format: "pem", type: "spki" }, Buffer.from(header, "base64"));
}

// Every type Corridor sends (docs/events.md) and the name a Grid-naming platform receives.
const MAPPING: [string, string][] = [
  ["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT.PENDING"],
  ["OUTGOING_PAYMENT_PROCESSING", "OUTGOING_PAYMENT.PROCESSING"],
  ["OUTGOING_PAYMENT_COMPLETED", "OUTGOING_PAYMENT.COMPLETED"],
  ["OUTGOING_PAYMENT_FAILED", "OUTGOING_PAYMENT.FAILED"],
  ["OUTGOING_PAYMENT_EXPIRED", "OUTGOING_PAYMENT.EXPIRED"],
  ["OUTGOING_PAYMENT_REFUND_PENDING", "OUTGOING_PAYMENT.REFUND_PENDING"],
  ["OUTGOING_PAYMENT_REFUND_COMPLETED", "OUTGOING_PAYMENT.REFUND_COMPLETED"],
  ["OUTGOING_PAYMENT_REFUND_FAILED", "OUTGOING_PAYMENT.REFUND_FAILED"],
  ["INCOMING_PAYMENT_PENDING", "INCOMING_PAYMENT.PENDING"],
  ["INCOMING_PAYMENT_COMPLETED", "INCOMING_PAYMENT.COMPLETED"],
  ["INCOMING_PAYMENT_FAILED", "INCOMING_PAYMENT.FAILED"],
  ["INTERNAL_ACCOUNT_BALANCE_UPDATED", "INTERNAL_ACCOUNT.BALANCE_UPDATED"],
  ["EXTERNAL_ACCOUNT_UPDATED", "EXTERNAL_ACCOUNT.UPDATED"],
  ["CUSTOMER_KYC_APPROVED", "CUSTOMER.KYC_APPROVED"],
  ["CUSTOMER_KYC_REJECTED", "CUSTOMER.KYC_REJECTED"],
  ["CUSTOMER_KYC_PENDING", "CUSTOMER.KYC_PENDING"],
  ["CUSTOMER_KYB_APPROVED", "CUSTOMER.KYB_APPROVED"],
  ["CUSTOMER_KYB_REJECTED", "CUSTOMER.KYB_REJECTED"],
  ["CUSTOMER_KYB_PENDING", "CUSTOMER.KYB_PENDING"],
  ["VERIFICATION_APPROVED", "VERIFICATION.APPROVED"],
  ["VERIFICATION_RESOLVE_ERRORS", "VERIFICATION.RESOLVE_ERRORS"],
  ["VERIFICATION_IN_PROGRESS", "VERIFICATION.IN_PROGRESS"],
  ["INVITATION_CLAIMED", "INVITATION.CLAIMED"],
  ["AGENT_ACTION_PENDING_APPROVAL", "AGENT_ACTION.PENDING_APPROVAL"],
  ["BULK_UPLOAD_COMPLETED", "BULK_UPLOAD.COMPLETED"],
  ["BULK_UPLOAD_FAILED", "BULK_UPLOAD.FAILED"],
  ["CARD_STATE_CHANGE", "CARD.STATE_CHANGE"],
  ["TEST", "TEST"],
];

describe("Grid's event names and X-Grid-Signature (pure)", () => {
  it.each(MAPPING)("names %s as %s for a GRID platform and leaves it for a CORRIDOR one", (ours, grid) => {
    expect(gridEventType(ours)).toBe(grid);
    expect(eventTypeFor("GRID", ours)).toBe(grid);
    expect(eventTypeFor("CORRIDOR", ours)).toBe(ours);
  });

  it("rewrites only the envelope's type", () => {
    const body = JSON.stringify({ id: "Webhook:1", type: "OUTGOING_PAYMENT_COMPLETED", timestamp: "2025-10-13T09:30:02.015Z", data: { id: "Transaction:1", amount: 5 } });
    expect(JSON.parse(envelopeFor("GRID", body))).toEqual({ ...JSON.parse(body), type: "OUTGOING_PAYMENT.COMPLETED" });
    expect(envelopeFor("CORRIDOR", body)).toBe(body);
  });

  it("signs the exact body so Grid's documented verification accepts it, and a tampered body or another key fails", () => {
    const key = signingKeyOf(newSigningKeyPem());
    const body = JSON.stringify({ id: "Webhook:1", type: "OUTGOING_PAYMENT.COMPLETED", timestamp: "t", data: { amount: 1000, note: "é" } });
    const header = gridSignature(body, key);
    expect(key.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(gridDocsVerify(key.publicKeyPem, body, header)).toBe(true);
    expect(gridDocsVerify(key.publicKeyPem, body.replace("1000", "1001"), header)).toBe(false);
    expect(gridDocsVerify(signingKeyOf(newSigningKeyPem()).publicKeyPem, body, header)).toBe(false);
  });

  it("refuses a configured key that is not a P-256 private key, without quoting it", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    expect(signingKeyProblem(rsa)).toBe("must be an EC key on the P-256 curve");
    expect(signingKeyProblem("not a key")).toBe("is not a PEM private key");
    expect(signingKeyProblem(newSigningKeyPem())).toBeUndefined();
    let message = "";
    try {
      loadNotificationsConfig({ CORRIDOR_WEBHOOK_SIGNING_KEY: rsa });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain("CORRIDOR_WEBHOOK_SIGNING_KEY: must be an EC key on the P-256 curve");
    expect(message).not.toContain("PRIVATE KEY");
  });

  it("reads a configured PEM with \\n escapes (one env line)", () => {
    const pem = newSigningKeyPem();
    const config = loadNotificationsConfig({ CORRIDOR_WEBHOOK_SIGNING_KEY: pem.trim().replace(/\n/g, "\\n") });
    expect(config.CORRIDOR_WEBHOOK_SIGNING_KEY).toBe(pem.trim());
  });
});

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

async function startReceiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks`, received, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe("X-Grid-Signature on every delivery", () => {
  const clock = new ManualClock(new Date());
  let closeDb: () => Promise<void>;
  let handle: Awaited<ReturnType<typeof openTestDatabase>>["handle"];
  let n: NotificationsUnderTest;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    const db = await openTestDatabase();
    closeDb = db.close;
    handle = db.handle;
    n = await startNotifications(handle, clock, { NOTIFICATIONS_WEBHOOK_TIMEOUT_MS: "5000" });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await closeDb();
  });
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(clock.now());
    receiver.received.length = 0;
  });
  afterEach(() => vi.useRealTimers());

  async function completedPayment(platformId: string, txId: string) {
    await n.handle(n.ledgerConsumer, outgoingCompleted(platformId, txId, clock.now()));
    while ((await n.worker.runOnce()) > 0);
  }

  async function gridPlatform(): Promise<string> {
    const platformId = newPlatformId();
    const ts = timestampFromDate(clock.now());
    await n.deliver(
      create(PlatformEventSchema, {
        eventId: `Event:${crypto.randomUUID()}`,
        platformId,
        occurredAt: ts,
        payload: {
          case: "configUpdated",
          value: { config: create(PlatformConfigSchema, { id: `PlatformConfig:${crypto.randomUUID()}`, platformId, webhookEndpoint: receiver.url, webhookEventNaming: "GRID", updatedAt: ts, createdAt: ts }) },
        },
      }),
    );
    return platformId;
  }

  it("gives a platform that opted into GRID naming Grid's OBJECT.EVENT types, which a handler written for Grid dispatches on", async () => {
    const platformId = await gridPlatform();
    const { publicKey } = await n.client.getWebhookPublicKey({ platformId });
    const secret = (await n.client.getWebhookSettings({ platformId })).settings!.secret;
    await completedPayment(platformId, "Transaction:grid1");

    // A receiver as Grid's documentation writes one: verify, then route on the type's object.
    const handled: string[] = [];
    for (const r of receiver.received) {
      expect(gridDocsVerify(publicKey, r.body, r.headers["x-grid-signature"] as string)).toBe(true);
      expect(() => new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
      const webhook = JSON.parse(r.body) as { type: string; data: { id: string } };
      if (webhook.type.startsWith("OUTGOING_PAYMENT.")) handled.push(`outgoing ${webhook.type} ${webhook.data.id}`);
      else if (webhook.type.startsWith("INCOMING_PAYMENT.")) handled.push(`incoming ${webhook.type}`);
    }
    expect(handled).toEqual(["outgoing OUTGOING_PAYMENT.COMPLETED Transaction:grid1"]);
    // The events API keeps the event's stored (Corridor) payload; the attempt records the body as sent.
    const rows = await n.db.selectFrom("webhook_deliveries").select("request_body").where("platform_id", "=", platformId).execute();
    expect(rows.map((r) => JSON.parse(r.request_body).type)).toEqual(["OUTGOING_PAYMENT.COMPLETED"]);
  });

  it("asks a GRID platform for incoming-payment approval as INCOMING_PAYMENT.PENDING, signed with X-Grid-Signature", async () => {
    const platformId = await gridPlatform();
    const { publicKey } = await n.client.getWebhookPublicKey({ platformId });
    await n.client.requestIncomingPaymentApproval({ platformId, transaction: { id: "Transaction:in1", status: "PENDING", type: "INCOMING" }, requestedReceiverCustomerInfoFields: [] });
    expect(receiver.received).toHaveLength(1);
    const r = receiver.received[0]!;
    expect(JSON.parse(r.body).type).toBe("INCOMING_PAYMENT.PENDING");
    expect(gridDocsVerify(publicKey, r.body, r.headers["x-grid-signature"] as string)).toBe(true);
  });

  it("signs the TEST webhook and an event webhook: Grid's verification and Standard Webhooks' both pass", async () => {
    const platformId = newPlatformId();
    await n.deliver(configUpdated(platformId, receiver.url, clock.now()));
    const { publicKey, algorithm } = await n.client.getWebhookPublicKey({ platformId });
    expect(algorithm).toBe("ECDSA_P256_SHA256");
    const secret = (await n.client.getWebhookSettings({ platformId })).settings!.secret;

    await n.client.sendTestWebhook({ platformId });
    await completedPayment(platformId, "Transaction:g1");

    expect(receiver.received.map((r) => JSON.parse(r.body).type)).toEqual(["TEST", "OUTGOING_PAYMENT_COMPLETED"]);
    for (const r of receiver.received) {
      expect(gridDocsVerify(publicKey, r.body, r.headers["x-grid-signature"] as string)).toBe(true);
      expect(() => new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
      expect(gridDocsVerify(publicKey, r.body.replace(platformId, newPlatformId()).replace("1000", "999"), r.headers["x-grid-signature"] as string)).toBe(false);
    }
  });

  it("keeps one generated key across restarts and replicas (stored in the schema)", async () => {
    const platformId = newPlatformId();
    const again = await startNotifications(handle, clock, {});
    expect((await again.client.getWebhookPublicKey({ platformId })).publicKey).toBe((await n.client.getWebhookPublicKey({ platformId })).publicKey);
  });

  it("uses the operator's key when CORRIDOR_WEBHOOK_SIGNING_KEY is set", async () => {
    const pem = newSigningKeyPem();
    const configured = await startNotifications(handle, clock, { CORRIDOR_WEBHOOK_SIGNING_KEY: pem });
    const platformId = newPlatformId();
    expect((await configured.client.getWebhookPublicKey({ platformId })).publicKey).toBe(signingKeyOf(pem).publicKeyPem);
    expect((await configured.client.getWebhookPublicKey({ platformId })).publicKey).not.toBe((await n.client.getWebhookPublicKey({ platformId })).publicKey);
  });
});
