import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { ManualClock, appErrorInterceptor, createLogger } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { ScaService } from "@corridor/proto/corridor/auth_sessions/v1/sca_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScaCustomer } from "../src/domain/sca/ports.js";
import { buildAuthSessions, service } from "../src/server.js";
import { expectPublicError, scaCustomerDirectory } from "./harness.js";

// Strong customer authentication (issue 27, docs/sca.md): ScaService over a real database, a
// fake customers-kyc and a mailer that captures what it is given; the clock is manual.

const customers = new Map<string, ScaCustomer & { platformId: string }>();
const mails: { to: string; code: string }[] = [];
const lines: string[] = [];
const clock = new ManualClock("2025-10-13T12:00:00.000Z");
let drop: () => Promise<void>;
let sca: ReturnType<typeof createClient<typeof ScaService>>;
let admin: ReturnType<typeof createClient<typeof PlatformAdminService>>;
let noMailSca: ReturnType<typeof createClient<typeof ScaService>>;

beforeAll(async () => {
  const opened = await openServiceTestDatabase(service);
  drop = opened.drop;
  const log = createLogger("auth-sessions", "trace", new Writable({ write: (c, _e, done) => (lines.push(c.toString()), done()) }));
  const directory = scaCustomerDirectory(customers);
  const mailer = {
    deliversTo: () => true,
    sendOtp: async (to: string, code: string) => void mails.push({ to, code }),
    sendContactCode: async () => false,
  };
  const built = buildAuthSessions({ db: opened.db, clock, log, customers: directory, mailer });
  const transport = createRouterTransport(built.routes, { router: { interceptors: [appErrorInterceptor] } });
  sca = createClient(ScaService, transport);
  admin = createClient(PlatformAdminService, transport);
  // The same database, no mail server (no CORRIDOR_SMTP_URL, no mailer given).
  const bare = buildAuthSessions({ db: opened.db, clock, log, customers: directory });
  noMailSca = createClient(ScaService, createRouterTransport(bare.routes, { router: { interceptors: [appErrorInterceptor] } }));
});
afterAll(async () => drop?.());

async function customerIn(country: string, environment = Environment.PRODUCTION) {
  const { platform } = await admin.createPlatform({ name: "SCA", environment, isRegulatedFinancialInstitution: false });
  const id = `Customer:${randomUUID()}`;
  const email = `${randomUUID()}@example.com`;
  customers.set(id, { id, platformId: platform!.id, country, email });
  return { platformId: platform!.id, customerId: id, email };
}
const begin = (c: { platformId: string; customerId: string }, subjectId = `Quote:${randomUUID()}`, externalAccountId = "") =>
  sca.beginAuthorization({ platformId: c.platformId, customerId: c.customerId, subjectType: "QUOTE", subjectId, externalAccountId }).then((r) => ({ ...r, subjectId }));
const lastCodeTo = (email: string) => mails.filter((m) => m.to === email).at(-1)?.code;

describe("ScaService", () => {
  it("an EEA customer's payment needs SCA: one challenge per subject, its code mailed and never logged", async () => {
    const c = await customerIn("DE");
    const r = await begin(c);
    expect(r.required).toBe(true);
    expect(r.challenge).toMatchObject({ factor: "SMS_OTP", availableFactors: ["SMS_OTP"], purpose: "TRANSFER" });
    const code = lastCodeTo(c.email)!;
    expect(code).toMatch(/^\d{6}$/);
    // Asked again for the same subject: the same challenge, no second mail.
    const again = await sca.beginAuthorization({ platformId: c.platformId, customerId: c.customerId, subjectType: "QUOTE", subjectId: r.subjectId, externalAccountId: "" });
    expect(again.challenge?.id).toBe(r.challenge?.id);
    expect(mails.filter((m) => m.to === c.email)).toHaveLength(1);
    const ok = await sca.authorize({ platformId: c.platformId, subjectType: "QUOTE", subjectId: r.subjectId, code });
    expect(ok.challenge?.authorizedAt).toBeDefined();
    expect(lines.join("\n")).not.toContain(code);
  });

  it("outside SCA-regulated regions nothing is required and nothing is mailed", async () => {
    const c = await customerIn("US");
    expect((await begin(c)).required).toBe(false);
    expect(mails.some((m) => m.to === c.email)).toBe(false);
  });

  it("production: the sandbox code is just a wrong code; wrong codes are counted down to 400 SCA_ATTEMPTS_EXCEEDED", async () => {
    const c = await customerIn("FR");
    const { subjectId } = await begin(c);
    const right = lastCodeTo(c.email)!;
    const wrong = right === "123456" ? "654321" : "123456";
    for (let left = 4; left >= 0; left--) {
      const err = await expectPublicError(sca.authorize({ platformId: c.platformId, subjectType: "QUOTE", subjectId, code: wrong }), "INVALID", "SCA_CODE_INVALID");
      expect(err.details).toMatchObject({ attemptsLeft: left });
    }
    await expectPublicError(sca.authorize({ platformId: c.platformId, subjectType: "QUOTE", subjectId, code: right }), "INVALID", "SCA_ATTEMPTS_EXCEEDED");
  });

  it("sandbox: 123456 satisfies a challenge", async () => {
    const c = await customerIn("IT", Environment.SANDBOX);
    const { subjectId } = await begin(c);
    const ok = await sca.authorize({ platformId: c.platformId, subjectType: "QUOTE", subjectId, code: "123456" });
    expect(ok.challenge?.authorizedAt).toBeDefined();
  });

  it("resend: 429 within 30 s (service clock); then a fresh code replaces the old one, the expiry stays, and after 5 minutes the challenge is expired", async () => {
    const c = await customerIn("ES");
    const { subjectId, challenge } = await begin(c);
    const first = lastCodeTo(c.email)!;
    await expectPublicError(sca.resendCode({ platformId: c.platformId, subjectType: "QUOTE", subjectId }), "RATE_LIMITED", "RATE_LIMITED");
    clock.advance(30_000);
    await sca.resendCode({ platformId: c.platformId, subjectType: "QUOTE", subjectId });
    const second = lastCodeTo(c.email)!;
    expect(mails.filter((m) => m.to === c.email)).toHaveLength(2);
    if (second !== first) await expectPublicError(sca.authorize({ platformId: c.platformId, subjectType: "QUOTE", subjectId, code: first }), "INVALID", "SCA_CODE_INVALID");
    const again = await sca.beginAuthorization({ platformId: c.platformId, customerId: c.customerId, subjectType: "QUOTE", subjectId, externalAccountId: "" });
    expect(again.challenge?.expiresAt).toEqual(challenge?.expiresAt);
    clock.advance(5 * 60_000);
    await expectPublicError(sca.authorize({ platformId: c.platformId, subjectType: "QUOTE", subjectId, code: second }), "INVALID", "SCA_CHALLENGE_EXPIRED");
    await expectPublicError(sca.resendCode({ platformId: c.platformId, subjectType: "QUOTE", subjectId }), "CONFLICT", "SCA_NOT_PENDING");
  });

  it("a subject without a challenge is 409 SCA_NOT_PENDING; a malformed code is 400 INVALID_INPUT", async () => {
    const c = await customerIn("DE");
    await expectPublicError(sca.authorize({ platformId: c.platformId, subjectType: "QUOTE", subjectId: `Quote:${randomUUID()}`, code: "123456" }), "CONFLICT", "SCA_NOT_PENDING");
    await expectPublicError(sca.authorize({ platformId: c.platformId, subjectType: "QUOTE", subjectId: `Quote:${randomUUID()}`, code: "12345" }), "INVALID", "INVALID_INPUT");
  });

  it("without a mail server: a production customer is refused (400 SCA_DELIVERY_NOT_CONFIGURED, nothing issued); a sandbox one uses 123456", async () => {
    const prod = await customerIn("DE");
    const subjectId = `Quote:${randomUUID()}`;
    await expectPublicError(
      noMailSca.beginAuthorization({ platformId: prod.platformId, customerId: prod.customerId, subjectType: "QUOTE", subjectId, externalAccountId: "" }),
      "INVALID",
      "SCA_DELIVERY_NOT_CONFIGURED",
    );
    await expectPublicError(noMailSca.authorize({ platformId: prod.platformId, subjectType: "QUOTE", subjectId, code: "123456" }), "CONFLICT", "SCA_NOT_PENDING");
    const sandbox = await customerIn("DE", Environment.SANDBOX);
    const r = await noMailSca.beginAuthorization({ platformId: sandbox.platformId, customerId: sandbox.customerId, subjectType: "QUOTE", subjectId, externalAccountId: "" });
    expect(r.required).toBe(true);
    expect(mails.some((m) => m.to === sandbox.email)).toBe(false);
  });
});
