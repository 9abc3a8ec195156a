import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { createRouterTransport } from "@connectrpc/connect";
import { appErrorInterceptor, errors } from "@corridor/kit";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { InternalAccountSchema } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SoftwareAuthenticator, newClientKeyPair, openSealed } from "../../../test/support/wallet-client.js";
import { ledgerAccounts } from "../src/clients/ledger-accounts.js";
import { expectPublicError, startHarness, type Harness } from "./harness.js";

/**
 * Wallet expiries of a sandbox platform run on its sandbox clock (issue 29, item 7): the service
 * clock (h.clock) stands still here while a platform's sandbox offset moves, so every assertion
 * shows which clock decided. Production platforms ignore any offset; the 30 s challenge re-issue
 * limit stays on the service clock.
 */
const accounts = new Map<string, { platformId: string; type: string }>();
const ledgerTransport = createRouterTransport(
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

const mail: { to: string; code: string }[] = [];
const lastCode = (to: string) => [...mail].reverse().find((m) => m.to === to)!.code;
/** Each platform's sandbox offset (ms); what SandboxService.GetClock would answer is h.clock + it. */
const offsets = new Map<string, number>();
const advance = (platformId: string, ms: number) => offsets.set(platformId, (offsets.get(platformId) ?? 0) + ms);
const RP = { rpId: "wallet.example", origin: "https://wallet.example" };

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    accounts: ledgerAccounts(ledgerTransport),
    mailer: { deliversTo: () => true, sendOtp: async (to, code) => void mail.push({ to, code }), sendContactCode: async () => false },
    env: { CORRIDOR_PASSKEY_RP_ID: RP.rpId, CORRIDOR_PASSKEY_ORIGINS: RP.origin, CORRIDOR_WALLET_ENCRYPTION_KEY: "11".repeat(32) },
    sandboxNow: async (platformId) => new Date(h.clock.now().getTime() + (offsets.get(platformId) ?? 0)),
  });
});
afterAll(async () => {
  await h?.close();
});

async function walletAccount(environment: Environment) {
  const p = await h.newPlatform({ environment });
  const accountId = `InternalAccount:${randomUUID()}`;
  accounts.set(accountId, { platformId: p.platformId, type: "EMBEDDED_WALLET" });
  return { platformId: p.platformId, accountId };
}

async function otpCredential(platformId: string, accountId: string, email: string) {
  const created = await h.wallet.createCredential({ platformId, accountId, type: "EMAIL_OTP", email });
  return (created.result.value as { id: string }).id;
}

describe("sandbox platforms' wallet expiries follow their sandbox clock", () => {
  it("an OTP code (not the magic value) expires 5 sandbox minutes after it was sent, with the service clock unmoved", async () => {
    const { platformId, accountId } = await walletAccount(Environment.SANDBOX);
    const credentialId = await otpCredential(platformId, accountId, "clock-otp@example.com");
    advance(platformId, 5 * 60_000);
    const err = await expectPublicError(
      h.wallet.verifyCredential({ platformId, credentialId, type: "EMAIL_OTP", otp: lastCode("clock-otp@example.com"), clientPublicKey: newClientKeyPair().clientPublicKey }),
      "UNAUTHENTICATED",
      "UNAUTHORIZED",
    );
    expect(err.message).toContain("expired");
  });

  it("a session's createdAt and expiresAt are sandbox times 15 minutes apart, and it leaves the list when the sandbox clock passes expiresAt", async () => {
    const { platformId, accountId } = await walletAccount(Environment.SANDBOX);
    const credentialId = await otpCredential(platformId, accountId, "clock-session@example.com");
    advance(platformId, 3_600_000);
    const { session } = await h.wallet.verifyCredential({ platformId, credentialId, type: "EMAIL_OTP", otp: "000000", clientPublicKey: newClientKeyPair().clientPublicKey });
    const sandboxNow = h.clock.now().getTime() + 3_600_000;
    expect(timestampDate(session!.createdAt!).getTime()).toBe(sandboxNow);
    expect(timestampDate(session!.expiresAt!).getTime()).toBe(sandboxNow + 15 * 60_000);
    advance(platformId, 15 * 60_000 - 1);
    expect((await h.wallet.listSessions({ platformId, accountId })).sessions.map((s) => s.id)).toEqual([session!.id]);
    advance(platformId, 1);
    expect((await h.wallet.listSessions({ platformId, accountId })).sessions).toEqual([]);
  });

  it("a signed-retry challenge's expiresAt (in payloadToSign too) is 5 sandbox minutes away, and the retry is refused once the sandbox clock reaches it", async () => {
    const { platformId, accountId } = await walletAccount(Environment.SANDBOX);
    await otpCredential(platformId, accountId, "clock-retry@example.com");
    advance(platformId, 86_400_000);
    const client = newClientKeyPair();
    const first = await h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey });
    const ch = first.result.value as { payloadToSign: string; requestId: string; expiresAt?: Timestamp };
    const expiresAt = h.clock.now().getTime() + 86_400_000 + 5 * 60_000;
    expect(timestampDate(ch.expiresAt!).getTime()).toBe(expiresAt);
    expect(JSON.parse(ch.payloadToSign).expiresAt).toBe(new Date(expiresAt).toISOString());
    advance(platformId, 5 * 60_000);
    const err = await expectPublicError(
      h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey, signedRetry: { requestId: ch.requestId, signature: "sandbox-valid-signature" } }),
      "UNAUTHENTICATED",
      "UNAUTHORIZED",
    );
    expect(err.details?.reason).toBe("Signed-retry challenge expired");
  });

  it("a passkey challenge expires 5 sandbox minutes after it was issued", async () => {
    const { platformId, accountId } = await walletAccount(Environment.SANDBOX);
    const authenticator = new SoftwareAuthenticator(RP.rpId, RP.origin);
    const reg = Buffer.from("registration-clock").toString("base64url");
    const created = await h.wallet.createCredential({ platformId, accountId, type: "PASSKEY", nickname: "Clock", challenge: reg, attestation: authenticator.register(reg) });
    const credentialId = (created.result.value as { id: string }).id;
    const client = newClientKeyPair();
    const ch = (await h.wallet.challengeCredential({ platformId, credentialId, clientPublicKey: client.clientPublicKey })).result.value as { challenge: string; requestId: string };
    advance(platformId, 5 * 60_000);
    const err = await expectPublicError(
      h.wallet.verifyCredential({ platformId, credentialId, type: "PASSKEY", assertion: authenticator.assert(ch.challenge), requestId: ch.requestId }),
      "UNAUTHENTICATED",
      "UNAUTHORIZED",
    );
    expect(err.details?.reason).toBe("Passkey challenge expired");
  });

  it("the 30 s challenge re-issue limit runs on the service clock: a sandbox advance does not lift it, 30 real seconds do", async () => {
    const { platformId, accountId } = await walletAccount(Environment.SANDBOX);
    const credentialId = await otpCredential(platformId, accountId, "clock-limit@example.com");
    await h.wallet.challengeCredential({ platformId, credentialId });
    advance(platformId, 3_600_000);
    await expectPublicError(h.wallet.challengeCredential({ platformId, credentialId }), "RATE_LIMITED", "RATE_LIMITED");
    h.clock.advance(30_000);
    expect((await h.wallet.challengeCredential({ platformId, credentialId })).result.case).toBe("authMethod");
  });

  it("a production platform ignores any sandbox offset: its session expires by the service clock", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const credentialId = await otpCredential(platformId, accountId, "clock-prod@example.com");
    advance(platformId, 3_600_000);
    const client = newClientKeyPair();
    const { session } = await h.wallet.verifyCredential({ platformId, credentialId, type: "EMAIL_OTP", otp: lastCode("clock-prod@example.com"), clientPublicKey: client.clientPublicKey });
    expect(await openSealed(session!.encryptedSessionSigningKey, client)).toHaveLength(32);
    expect(timestampDate(session!.expiresAt!).getTime()).toBe(h.clock.now().getTime() + 15 * 60_000);
  });
});
