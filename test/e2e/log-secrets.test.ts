import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createProcessLogger } from "@corridor/kit";
import { startEmbedded } from "@corridor/embedded";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFreshDatabase } from "../infra/databases.js";
import { E2E_WALLET_ENCRYPTION_KEY } from "../infra/split-setup.js";
import { startSplitSystem } from "../infra/split-system.js";
import { otpCodeOf, startMailCatcher, type MailCatcher } from "../support/mail-catcher.js";
import { E2E_OIDC_AUDIENCES, OIDC_OTHER_CLIENT, OidcProviderClient, startOidcProvider, type RunningOidcProvider } from "../support/oidc-provider.js";
import { newClientKeyPair, openSealed, stamp } from "../support/wallet-client.js";
import { individual } from "./customers-fixtures.js";
import { eventually, mode, skipReason } from "./harness.js";

// Issue 14, defect 2: no secret in any log line. The system runs here with every process logging at
// trace into memory (embedded: one logger; split: the eight processes' output), the flows that create
// each kind of secret are driven through the public API, and no captured line may contain any of
// them: API token secrets and their Basic headers (right and wrong), webhook secrets (read and
// rotated), EMAIL_OTP codes (production and sandbox, mailed by SMTP), session keys, exported wallet
// keys, agent device codes and access tokens (Bearer), OIDC ID tokens (accepted and refused; issued
// by a real OpenID provider, test/support/oidc-provider.ts).

type Json = any;

interface Running {
  api: string;
  admin: ReturnType<typeof createClient<typeof PlatformAdminService>>;
  lines: string[];
  stop(): Promise<void>;
}

/** The settings that make the system trust the suite's OpenID provider (docs/auth.md). */
const oidcEnv = (provider: RunningOidcProvider) => ({
  CORRIDOR_OIDC_ISSUERS: JSON.stringify([{ issuer: provider.issuer, audience: E2E_OIDC_AUDIENCES }]),
  CORRIDOR_OIDC_CA_FILE: provider.caFile,
  CORRIDOR_OIDC_ALLOW_LOOPBACK: "true",
});

async function startEmbeddedLogged(catcher: MailCatcher, provider: RunningOidcProvider): Promise<Running> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  });
  // Embedded services read these from process.env when they are built.
  process.env.CORRIDOR_SMTP_URL = catcher.smtpUrl;
  process.env.CORRIDOR_WALLET_ENCRYPTION_KEY = E2E_WALLET_ENCRYPTION_KEY;
  process.env.NOTIFICATIONS_DELIVERY_POLL_MS ??= "100";
  Object.assign(process.env, oidcEnv(provider));
  const fresh = process.env.DATABASE_URL ? await createFreshDatabase(process.env.DATABASE_URL, "corridor_logscan", { migrated: true }) : undefined;
  const system = await startEmbedded({
    log: createProcessLogger("e2e-logscan", "trace", sink),
    databaseUrl: fresh?.url,
    httpHost: "127.0.0.1",
    httpPort: 0,
  });
  return {
    api: `${system.url}/2025-10-13`,
    admin: createClient(PlatformAdminService, system.transportFor("auth-sessions")),
    lines,
    async stop() {
      await system.stop();
      await fresh?.drop();
    },
  };
}

async function startSplitLogged(catcher: MailCatcher, provider: RunningOidcProvider): Promise<Running> {
  const lines: string[] = [];
  const split = await startSplitSystem(
    { DATABASE_URL: process.env.DATABASE_URL!, REDIS_URL: process.env.REDIS_URL!, KAFKA_BROKERS: process.env.KAFKA_BROKERS! },
    {
      LOG_LEVEL: "trace",
      CORRIDOR_SMTP_URL: catcher.smtpUrl,
      CORRIDOR_WALLET_ENCRYPTION_KEY: E2E_WALLET_ENCRYPTION_KEY,
      NOTIFICATIONS_DELIVERY_POLL_MS: "200",
      CORRIDOR_DATA_DIR: mkdtempSync(join(tmpdir(), "corridor-logscan-")),
      ...oidcEnv(provider),
    },
    (line) => lines.push(line),
  );
  const transport: Transport = createGrpcTransport({ baseUrl: split.info.serviceUrls["auth-sessions"] });
  return { api: `${split.info.url}/2025-10-13`, admin: createClient(PlatformAdminService, transport), lines, stop: () => split.stop() };
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;

describe.skipIf(skipReason())(`no secret in any log line (${mode})`, () => {
  let sys: Running;
  let catcher: MailCatcher;
  let provider: RunningOidcProvider;
  let receiver: Server;
  let received = 0;
  /** Every secret this suite created or sent, by what it is. */
  const secrets = new Map<string, string>();

  beforeAll(async () => {
    catcher = await startMailCatcher();
    provider = await startOidcProvider();
    receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        received++;
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    sys = mode === "split" ? await startSplitLogged(catcher, provider) : await startEmbeddedLogged(catcher, provider);
  }, 180_000);
  afterAll(async () => {
    await sys?.stop();
    await catcher?.close();
    await provider?.close();
    await new Promise<void>((r) => receiver?.close(() => r()));
  });

  async function call(auth: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${sys.api}${path}`, {
      method,
      headers: { ...(auth ? { authorization: auth } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json };
  }

  async function platform(environment: "SANDBOX" | "PRODUCTION") {
    const res = await sys.admin.createPlatform({ name: `logscan ${environment}`, environment: environment === "SANDBOX" ? Environment.SANDBOX : Environment.PRODUCTION });
    const auth = basic(res.token!.clientId, res.clientSecret);
    secrets.set(`${environment} platform clientSecret`, res.clientSecret);
    secrets.set(`${environment} platform Basic header`, auth.slice("Basic ".length));
    return { auth, platformId: res.platform!.id };
  }

  /** A verified customer and its embedded wallet account. */
  async function walletOwner(auth: string) {
    const customer = await call(auth, "POST", "/customers", individual());
    expect(customer.status, JSON.stringify(customer.body)).toBe(201);
    await call(auth, "POST", "/verifications", { customerId: customer.body.id });
    const wallet = await eventually(async () => {
      const res = await call(auth, "GET", `/customers/internal-accounts?customerId=${encodeURIComponent(customer.body.id)}&type=EMBEDDED_WALLET`);
      return res.body?.data?.[0];
    });
    return { customerId: customer.body.id as string, walletId: wallet.id as string };
  }

  /** EMAIL_OTP by SMTP, verified into a session; records the code and the session key. */
  async function otpSession(label: string, auth: string, accountId: string) {
    const email = `${label.toLowerCase()}-${Date.now()}@example.com`;
    const created = await call(auth, "POST", "/auth/credentials", { type: "EMAIL_OTP", accountId, email });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const [mail] = await eventually(async () => {
      const mails = await catcher.mailsTo(email);
      return mails.length ? mails : undefined;
    });
    const code = otpCodeOf(mail!);
    secrets.set(`${label} OTP code`, code);
    const client = newClientKeyPair();
    const verified = await call(auth, "POST", `/auth/credentials/${created.body.id}/verify`, { type: "EMAIL_OTP", otp: code, clientPublicKey: client.clientPublicKey });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    secrets.set(`${label} encryptedSessionSigningKey`, verified.body.encryptedSessionSigningKey);
    const sessionKey = await openSealed(verified.body.encryptedSessionSigningKey, client);
    secrets.set(`${label} session private key`, Buffer.from(sessionKey).toString("hex"));
    return sessionKey;
  }

  it("creates every kind of secret through the public API, and none of them appears in any log line", async () => {
    const prod = await platform("PRODUCTION");
    const sandbox = await platform("SANDBOX");

    // API tokens: created, used, and a wrong secret tried.
    const token = await call(sandbox.auth, "POST", "/tokens", { name: "dashboard", permissions: ["VIEW"] });
    expect(token.status, JSON.stringify(token.body)).toBe(201);
    const tokenAuth = basic(token.body.clientId, token.body.clientSecret);
    secrets.set("token clientSecret", token.body.clientSecret);
    secrets.set("token Basic header", tokenAuth.slice("Basic ".length));
    expect((await call(tokenAuth, "GET", "/config")).status).toBe(200);
    const wrong = basic(token.body.clientId, "not-the-secret-but-still-a-credential");
    secrets.set("wrong secret", "not-the-secret-but-still-a-credential");
    secrets.set("wrong Basic header", wrong.slice("Basic ".length));
    expect((await call(wrong, "GET", "/config")).status).toBe(401);

    // Webhook secrets: read, used to sign, rotated.
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    expect((await call(sandbox.auth, "PATCH", "/config", { webhookEndpoint: endpoint })).status).toBe(200);
    const whsec = await call(sandbox.auth, "GET", "/config/webhook-secret");
    expect(whsec.body.secret).toMatch(/^whsec_/);
    secrets.set("webhook secret", whsec.body.secret);
    await eventually(async () => ((await call(sandbox.auth, "POST", "/sandbox/webhooks/test")).body?.response_status === 200 ? true : undefined));
    const rotated = await call(sandbox.auth, "POST", "/config/webhook-secret/rotate");
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    secrets.set("rotated webhook secret", rotated.body.secret);
    await eventually(async () => ((await call(sandbox.auth, "POST", "/sandbox/webhooks/test")).body?.response_status === 200 ? true : undefined));

    // EMAIL_OTP, sessions and a wallet export on a production platform (real codes, real keys) and a sandbox one.
    const owner = await walletOwner(prod.auth);
    const sessionKey = await otpSession("PRODUCTION", prod.auth, owner.walletId);
    const exportKey = newClientKeyPair();
    const challenge = await call(prod.auth, "POST", `/internal-accounts/${owner.walletId}/export`, { clientPublicKey: exportKey.clientPublicKey });
    expect(challenge.status, JSON.stringify(challenge.body)).toBe(202);
    const exported = await call(
      prod.auth,
      "POST",
      `/internal-accounts/${owner.walletId}/export`,
      { clientPublicKey: exportKey.clientPublicKey },
      { "Request-Id": challenge.body.requestId, "Service-Wallet-Signature": stamp(challenge.body.payloadToSign, sessionKey) },
    );
    expect(exported.status, JSON.stringify(exported.body)).toBe(200);
    secrets.set("encryptedWalletCredentials", exported.body.encryptedWalletCredentials);
    secrets.set("wallet private key", Buffer.from(await openSealed(exported.body.encryptedWalletCredentials, exportKey)).toString("hex"));
    // OAUTH on the production platform: real ID tokens registered and verified, and refused ones.
    const idp = new OidcProviderClient({ issuer: provider.issuer, caPem: provider.caPem });
    const oidcToken = async (what: string, clientId?: string) => {
      const t = await idp.idToken("logscan-user", clientId);
      secrets.set(what, t);
      secrets.set(`${what} (signature)`, t.split(".")[2]!);
      return t;
    };
    const oauth = await call(prod.auth, "POST", "/auth/credentials", { type: "OAUTH", accountId: owner.walletId, oidcToken: await oidcToken("OIDC token (create)") });
    expect(oauth.status, JSON.stringify(oauth.body)).toBe(202);
    const oauthDone = await call(
      prod.auth,
      "POST",
      "/auth/credentials",
      { type: "OAUTH", accountId: owner.walletId, oidcToken: secrets.get("OIDC token (create)") },
      { "Request-Id": oauth.body.requestId, "Service-Wallet-Signature": stamp(oauth.body.payloadToSign, sessionKey) },
    );
    expect(oauthDone.status, JSON.stringify(oauthDone.body)).toBe(201);
    const oauthVerify = async (token: string) =>
      call(prod.auth, "POST", `/auth/credentials/${oauthDone.body.id}/verify`, { type: "OAUTH", oidcToken: token, clientPublicKey: newClientKeyPair().clientPublicKey });
    expect((await oauthVerify(await oidcToken("OIDC token (verify)"))).status).toBe(200);
    expect((await oauthVerify(await oidcToken("OIDC token (wrong audience)", OIDC_OTHER_CLIENT))).status).toBe(401);
    const sandboxOwner = await walletOwner(sandbox.auth);
    await otpSession("SANDBOX", sandbox.auth, sandboxOwner.walletId);

    // Strong customer authentication: a TOTP secret and its recovery codes, and a mailed login code (production).
    const scaEmail = `sca-${Date.now()}@example.com`;
    const scaCustomer = await call(prod.auth, "POST", "/customers", individual({ email: scaEmail, address: { line1: "1 Rue de Rivoli", postalCode: "75001", country: "FR", city: "Paris" } }));
    expect(scaCustomer.status, JSON.stringify(scaCustomer.body)).toBe(201);
    const scaQ = `?customerId=${encodeURIComponent(scaCustomer.body.id)}`;
    const totpStart = await call(prod.auth, "POST", `/sca/factors${scaQ}`, { type: "TOTP" });
    expect(totpStart.status, JSON.stringify(totpStart.body)).toBe(200);
    secrets.set("SCA TOTP secret", totpStart.body.secret);
    const loginStart = await call(prod.auth, "POST", `/sca/login/start${scaQ}`, { factor: "SMS_OTP" });
    expect(loginStart.status, JSON.stringify(loginStart.body)).toBe(200);
    const [scaMail] = await eventually(async () => {
      const mails = await catcher.mailsTo(scaEmail);
      return mails.length ? mails : undefined;
    });
    const scaCode = otpCodeOf(scaMail!);
    secrets.set("SCA login code", scaCode);
    const loginDone = await call(prod.auth, "POST", `/sca/login/complete${scaQ}`, { factor: "SMS_OTP", challengeId: loginStart.body.challengeId, code: scaCode, endUserIpAddress: "203.0.113.7" });
    expect(loginDone.status, JSON.stringify(loginDone.body)).toBe(200);
    // A factor reset: its liveness access token, in the answer and in the hosted page's URL (visited, a selfie uploaded).
    const reset = await call(prod.auth, "POST", `/sca/factors/reset${scaQ}`, { factor: "SMS_OTP", endUserIpAddress: "203.0.113.7" });
    expect(reset.status, JSON.stringify(reset.body)).toBe(201);
    secrets.set("SCA reset liveness access token", reset.body.livenessAccessToken);
    expect((await fetch(reset.body.verificationLink)).status).toBe(200);
    const selfie = new FormData();
    selfie.append("file", new Blob([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46])], { type: "image/jpeg" }), "me.jpg");
    expect((await fetch(`${reset.body.verificationLink}/selfie`, { method: "POST", body: selfie })).status).toBe(200);

    // Agents: a device code (looked up, redeemed without auth) and the access token it gives (Bearer).
    const agent = await call(sandbox.auth, "POST", "/agents", { name: "Bookkeeper", customerId: sandboxOwner.customerId, policy: { permissions: ["VIEW_TRANSACTIONS"] } });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const code = agent.body.deviceCode.code as string;
    secrets.set("device code", code);
    expect((await call(sandbox.auth, "GET", `/agents/device-codes/${code}/status`)).status).toBe(200);
    const redeemed = await call("", "POST", `/agents/device-codes/${code}/redeem`);
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    secrets.set("agent access token", redeemed.body.accessToken);
    expect((await call(`Bearer ${redeemed.body.accessToken}`, "GET", "/agents/me")).status).toBe(200);
    expect((await call("Bearer agt_wrongwrongwrongwrongwrongwrongwrong", "GET", "/agents/me")).status).toBe(401);
    secrets.set("wrong agent token", "agt_wrongwrongwrongwrongwrongwrongwrong");

    // Let the asynchronous work these started (events, webhooks, mails) log what it logs.
    await eventually(async () => (received >= 2 ? true : undefined));
    await new Promise((r) => setTimeout(r, 1_500));

    // The capture works: trace-level request logs of this suite's calls are there.
    expect(sys.lines.length).toBeGreaterThan(50);
    expect(sys.lines.some((l) => l.includes("/auth/credentials") && l.includes("incoming request"))).toBe(true);
    expect(sys.lines.some((l) => l.includes("/device-codes/[REDACTED]/redeem"))).toBe(true);
    expect(sys.lines.some((l) => l.includes("/liveness/[REDACTED]/selfie"))).toBe(true);

    const leaks: string[] = [];
    for (const [what, value] of secrets) {
      // An OTP code is 6 digits: only a standalone number counts (not digits inside an id, hash or time).
      const found = /^\d{6}$/.test(value)
        ? sys.lines.filter((l) => new RegExp(`(?<![0-9A-Za-z.])${value}(?![0-9A-Za-z.])`).test(l))
        : sys.lines.filter((l) => l.includes(value));
      for (const line of found.slice(0, 3)) leaks.push(`${what}: ${line.slice(0, 400)}`);
    }
    expect(leaks).toEqual([]);
    expect(secrets.size).toBeGreaterThanOrEqual(20);
  }, 120_000);
});
