import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { create } from "@bufbuild/protobuf";
import { createRouterTransport } from "@connectrpc/connect";
import { appErrorInterceptor, createLogger, errors } from "@corridor/kit";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { InternalAccountSchema } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMailer } from "../src/clients/mailer.js";
import { ledgerAccounts } from "../src/clients/ledger-accounts.js";
import { expectPublicError, startHarness, type Harness } from "./harness.js";

// Issue 14, defect 2: without a mail server, EMAIL_OTP codes of PRODUCTION platforms are never
// written to the log: creating or re-challenging such a credential answers 400
// EMAIL_DELIVERY_NOT_CONFIGURED; the process warns at start. Sandbox platforms get the development
// mailer, which shows their codes in the log, marked as such.

const accounts = new Map<string, { platformId: string; type: string }>();
const ledger = createRouterTransport(
  (router) =>
    router.service(LedgerService, {
      async getInternalAccount(req: { platformId: string; accountId: string }) {
        const a = accounts.get(req.accountId);
        if (!a || a.platformId !== req.platformId) throw errors.notFound("InternalAccount", req.accountId);
        return { account: create(InternalAccountSchema, { id: req.accountId, platformId: a.platformId, type: a.type }) };
      },
    } as never),
  { router: { interceptors: [appErrorInterceptor] } },
);

/** Every log line the service writes, as parsed JSON records. */
const lines: string[] = [];
const log = createLogger(
  "auth-sessions",
  "trace",
  new Writable({
    write(chunk, _enc, done) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  }),
);

let h: Harness;
beforeAll(async () => {
  // The real mailer, no CORRIDOR_SMTP_URL.
  h = await startHarness({ accounts: ledgerAccounts(ledger), log, env: { CORRIDOR_WALLET_ENCRYPTION_KEY: "11".repeat(32) } });
});
afterAll(async () => h?.close());

async function walletAccount(environment: Environment) {
  const p = await h.newPlatform({ environment });
  const accountId = `InternalAccount:${randomUUID()}`;
  accounts.set(accountId, { platformId: p.platformId, type: "EMBEDDED_WALLET" });
  return { platformId: p.platformId, accountId };
}

describe("EMAIL_OTP without a mail server", () => {
  it("warns at start that production EMAIL_OTP is refused and sandbox codes go to the log", () => {
    const warning = lines.map((l) => JSON.parse(l)).find((r) => r.level === 40 && String(r.msg).includes("CORRIDOR_SMTP_URL is not set"));
    expect(warning?.msg).toContain("EMAIL_DELIVERY_NOT_CONFIGURED");
  });

  it("refuses an EMAIL_OTP credential on a production platform with 400 EMAIL_DELIVERY_NOT_CONFIGURED, stores nothing and logs no code", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const before = lines.length;
    await expectPublicError(h.wallet.createCredential({ platformId, accountId, type: "EMAIL_OTP", email: "user@example.com" }), "INVALID", "EMAIL_DELIVERY_NOT_CONFIGURED");
    expect((await h.wallet.listCredentials({ platformId, accountId })).authMethods ?? []).toEqual([]);
    const logged = lines.slice(before).join("\n");
    expect(logged).not.toMatch(/developmentOtpCode|\b\d{6}\b/);
  });

  it("shows a sandbox platform's code through the development mailer, clearly marked, and it verifies", async () => {
    const { platformId, accountId } = await walletAccount(Environment.SANDBOX);
    const created = await h.wallet.createCredential({ platformId, accountId, type: "EMAIL_OTP", email: "dev@example.com" });
    expect(created.result.case).toBe("authMethod");
    const record = lines.map((l) => JSON.parse(l)).find((r) => r.developmentMailer === true && r.to === "dev@example.com");
    expect(record).toMatchObject({ level: 40, platformId, developmentOtpCode: expect.stringMatching(/^\d{6}$/) });
    expect(record.msg).toMatch(/^DEVELOPMENT MAILER .*sandbox platforms only/);
  });
});

describe("the development mailer", () => {
  it("refuses to write a production platform's code anywhere", async () => {
    const warned: unknown[] = [];
    const mailer = createMailer({ from: "x@example.com", log: { warn: (o) => warned.push(o) } });
    expect(mailer.deliversTo("PRODUCTION")).toBe(false);
    expect(mailer.deliversTo("SANDBOX")).toBe(true);
    await expect(mailer.sendOtp("user@example.com", "482913", { platformId: "Platform:p", credentialId: "AuthMethod:c", environment: "PRODUCTION" })).rejects.toThrow(/never written/);
    expect(JSON.stringify(warned)).not.toContain("482913");
  });

  it("delivers to every environment once SMTP is configured", () => {
    const mailer = createMailer({ smtpUrl: "smtp://127.0.0.1:2525", from: "x@example.com", log: { warn: () => {} } });
    expect(mailer.deliversTo("PRODUCTION")).toBe(true);
  });
});
