import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { create } from "@bufbuild/protobuf";
import { createRouterTransport } from "@connectrpc/connect";
import { appErrorInterceptor, createLogger, errors } from "@corridor/kit";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { InternalAccountSchema } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { newClientKeyPair } from "../../../test/support/wallet-client.js";
import { ledgerAccounts } from "../src/clients/ledger-accounts.js";
import { expectPublicError, startHarness, type Harness } from "./harness.js";

// Issue 25, item 4: EMAIL_OTP codes over real SMTP (smtp-server as the listener, on loopback), with
// STARTTLS to a server whose certificate a private CA signed, transient failures retried, a
// permanent refusal and an unreachable server each answered with a code of their own; nothing is
// stored when the code could not be handed over, and no code ever reaches the log.

// A test CA and a certificate for 127.0.0.1 it signs, made with openssl.
const dir = mkdtempSync(join(tmpdir(), "corridor-smtp-"));
const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Corridor test mail CA");
ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1");
writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1\n");
ssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.ext");
const caFile = join(dir, "ca.pem");

interface Received {
  to: string;
  secure: boolean;
  raw: string;
}

/** An SMTP listener on loopback: `answers` is the reply to each DATA in turn (undefined accepts). */
async function mailServer(opts: { starttls: boolean; answers?: (number | undefined)[] }) {
  const received: Received[] = [];
  let data = 0;
  const options: SMTPServerOptions = {
    authOptional: true,
    logger: false,
    disabledCommands: opts.starttls ? ["AUTH"] : ["AUTH", "STARTTLS"],
    ...(opts.starttls ? { key: readFileSync(join(dir, "server.key")), cert: readFileSync(join(dir, "server.pem")) } : {}),
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const answer = opts.answers?.[data++];
        if (answer !== undefined) {
          const err = Object.assign(new Error(answer >= 500 ? "mailbox unavailable" : "try again later"), { responseCode: answer });
          return callback(err);
        }
        received.push({ to: session.envelope.rcptTo.map((r) => r.address).join(","), secure: session.secure, raw: Buffer.concat(chunks).toString("utf8") });
        callback();
      });
    },
  };
  const server = new SMTPServer(options);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const accounts = new Map<string, string>();
const ledger = createRouterTransport(
  (router) =>
    router.service(LedgerService, {
      async getInternalAccount(req: { platformId: string; accountId: string }) {
        if (accounts.get(req.accountId) !== req.platformId) throw errors.notFound("InternalAccount", req.accountId);
        return { account: create(InternalAccountSchema, { id: req.accountId, platformId: req.platformId, type: "EMBEDDED_WALLET" }) };
      },
    } as never),
  { router: { interceptors: [appErrorInterceptor] } },
);

const lines: string[] = [];
const log = createLogger("auth-sessions", "trace", new Writable({ write: (c, _e, done) => (lines.push(c.toString()), done()) }));

const harnesses: Harness[] = [];
afterEach(async () => {
  while (harnesses.length) await harnesses.pop()!.close();
});

async function system(env: Record<string, string>) {
  const h = await startHarness({ accounts: ledgerAccounts(ledger), log, env: { CORRIDOR_WALLET_ENCRYPTION_KEY: "11".repeat(32), CORRIDOR_SMTP_RETRY_MS: "1", ...env } });
  harnesses.push(h);
  const p = await h.newPlatform({ environment: Environment.PRODUCTION });
  const accountId = `InternalAccount:${randomUUID()}`;
  accounts.set(accountId, p.platformId);
  const create = (email: string) => h.wallet.createCredential({ platformId: p.platformId, accountId, type: "EMAIL_OTP", email });
  const credentials = async () => (await h.wallet.listCredentials({ platformId: p.platformId, accountId })).authMethods ?? [];
  return { h, create, credentials, platformId: p.platformId };
}

describe("EMAIL_OTP over SMTP", () => {
  let tls: Awaited<ReturnType<typeof mailServer>>;
  beforeAll(async () => {
    tls = await mailServer({ starttls: true });
  });
  afterAll(async () => tls.close());

  it("mails the code over STARTTLS to a server whose certificate the configured CA signed, and the code verifies", async () => {
    const s = await system({ CORRIDOR_SMTP_URL: tls.url, CORRIDOR_SMTP_CA_FILE: caFile, CORRIDOR_SMTP_REQUIRE_TLS: "true" });
    const before = lines.length;
    const res = await s.create("ada@example.com");
    expect(res.result.case).toBe("authMethod");
    const mail = tls.received.find((m) => m.to === "ada@example.com")!;
    expect(mail.secure).toBe(true);
    const code = /verification code is (\d{6})\b/.exec(mail.raw)![1]!;
    const credentialId = res.result.case === "authMethod" ? res.result.value.id : "";
    const { session } = await s.h.wallet.verifyCredential({ platformId: s.platformId, credentialId, type: "EMAIL_OTP", otp: code, clientPublicKey: newClientKeyPair().clientPublicKey });
    expect(session?.id).toMatch(/^Session:/);
    expect(lines.slice(before).join("")).not.toContain(code);
  });

  it("never sends to a server whose certificate no trusted CA signed: 503 EMAIL_DELIVERY_FAILED and no credential", async () => {
    const s = await system({ CORRIDOR_SMTP_URL: tls.url });
    await expectPublicError(s.create("eve@example.com"), "UNAVAILABLE", "EMAIL_DELIVERY_FAILED");
    expect(tls.received.some((m) => m.to === "eve@example.com")).toBe(false);
    expect(await s.credentials()).toEqual([]);
  });

  it("with CORRIDOR_SMTP_REQUIRE_TLS, never sends in clear to a server that offers no STARTTLS", async () => {
    const plain = await mailServer({ starttls: false });
    try {
      const s = await system({ CORRIDOR_SMTP_URL: plain.url, CORRIDOR_SMTP_REQUIRE_TLS: "true" });
      await expectPublicError(s.create("bob@example.com"), "UNAVAILABLE", "EMAIL_DELIVERY_FAILED");
      expect(plain.received).toEqual([]);
    } finally {
      await plain.close();
    }
  });

  it("retries a transient refusal (451) and delivers exactly one code", async () => {
    const flaky = await mailServer({ starttls: false, answers: [451, 451] });
    try {
      const s = await system({ CORRIDOR_SMTP_URL: flaky.url });
      expect((await s.create("grace@example.com")).result.case).toBe("authMethod");
      expect(flaky.received.map((m) => m.to)).toEqual(["grace@example.com"]);
    } finally {
      await flaky.close();
    }
  });

  it("answers 503 EMAIL_DELIVERY_FAILED after the attempts run out, stores nothing, and the same call succeeds once the server is back", async () => {
    const down = await mailServer({ starttls: false, answers: [421, 421, 421] });
    try {
      const s = await system({ CORRIDOR_SMTP_URL: down.url, CORRIDOR_SMTP_ATTEMPTS: "3" });
      const before = lines.length;
      await expectPublicError(s.create("linus@example.com"), "UNAVAILABLE", "EMAIL_DELIVERY_FAILED");
      expect(await s.credentials()).toEqual([]);
      expect(lines.slice(before).join("")).not.toMatch(/verification code|\b\d{6}\b/);
      expect((await s.create("linus@example.com")).result.case).toBe("authMethod");
      expect(down.received.map((m) => m.to)).toEqual(["linus@example.com"]);
    } finally {
      await down.close();
    }
  });

  it("answers 400 EMAIL_UNDELIVERABLE when the server refuses the address for good (550), without retrying", async () => {
    const refusing = await mailServer({ starttls: false, answers: [550, 550, 550] });
    try {
      const s = await system({ CORRIDOR_SMTP_URL: refusing.url });
      const err = await expectPublicError(s.create("nobody@example.com"), "INVALID", "EMAIL_UNDELIVERABLE");
      expect(err.details).toMatchObject({ responseCode: 550 });
      expect(await s.credentials()).toEqual([]);
      // One attempt only: the second answer (550) would have been used by a retry; a third create gets it.
      await expectPublicError(s.create("nobody@example.com"), "INVALID", "EMAIL_UNDELIVERABLE");
    } finally {
      await refusing.close();
    }
  });
});
