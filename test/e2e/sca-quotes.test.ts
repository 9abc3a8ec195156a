import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { otpCodeOf, remoteMailbox, startMailCatcher, type MailCatcher, type Mailbox } from "../support/mail-catcher.js";
import { address, uniq, verifiedCustomer } from "./customers-fixtures.js";
import { GRID, gridViolations } from "./grid-schema.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { fund, iban } from "./ledger-helpers.js";

/**
 * Strong customer authentication of quotes (issue 27, docs/sca.md) through the gateway: a customer
 * in an SCA-regulated region (the EEA) paying an external account waits in PENDING_AUTHORIZATION
 * until the code mailed to them (or, on a sandbox platform, 123456) authorizes the quote.
 */
process.env.CORRIDOR_FX_SANDBOX_DRIFT_BPS = "0";

let sys: TestSystem;
let mailbox: Mailbox;
let catcher: MailCatcher | undefined;

beforeAll(async () => {
  if (skipReason()) return;
  if (mode === "embedded") {
    catcher = await startMailCatcher();
    process.env.CORRIDOR_SMTP_URL = catcher.smtpUrl;
    mailbox = catcher;
  } else {
    mailbox = remoteMailbox(inject("splitMailboxUrl")!);
  }
  sys = await startTestSystem();
}, 120_000);
afterAll(async () => {
  await sys?.stop();
  await catcher?.close();
});

/** A sandbox platform with USD and EUR, a verified customer living in `country` with a funded USD account, and an EUR payee of theirs. */
async function setup(country: string) {
  const p = await sys.createPlatform();
  const cfg = (await p.call("GET", "/config")).body;
  const usd = cfg.supportedCurrencies[0];
  expect((await p.call("PATCH", "/config", { supportedCurrencies: [usd, { ...usd, currencyCode: "EUR" }] })).status).toBe(200);
  const email = `${uniq("sca")}@example.com`;
  const customer = await verifiedCustomer(p, { currencies: ["USD"], address: { ...address, country }, email });
  const fiat = await eventually(async () => {
    const res = await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}`);
    return res.body.data?.find((a: any) => a.type === "INTERNAL_FIAT") as { id: string } | undefined;
  });
  await fund(p, fiat.id, 1_000_000);
  const ext = await p.call("POST", "/customers/external-accounts", { customerId: customer.id, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000") } });
  expect(ext.status, JSON.stringify(ext.body)).toBe(201);
  const quote = (over: Record<string, unknown> = {}) =>
    p.call("POST", "/quotes", { source: { sourceType: "ACCOUNT", accountId: fiat.id }, destination: { destinationType: "ACCOUNT", accountId: ext.body.id }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 10_000, ...over });
  return { p, customerId: customer.id as string, email, fiat, payee: ext.body as { id: string }, quote };
}

const authorize = (p: Caller, id: string, code: unknown) => p.call("POST", `/quotes/${id}/authorize`, { code });

describe.skipIf(Boolean(skipReason()))(`strong customer authentication of quotes (${mode})`, () => {
  it("an EEA customer's quote waits in PENDING_AUTHORIZATION with an scaChallenge; execute is 409 until the mailed code authorizes it, then it executes", async () => {
    const { p, email, quote } = await setup("DE");
    const created = await quote();
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const q = created.body;
    expect(q.status).toBe("PENDING_AUTHORIZATION");
    expect(q.scaChallenge).toMatchObject({ factor: "SMS_OTP", availableFactors: ["SMS_OTP"], purpose: "TRANSFER" });
    expect(q.scaChallenge.id).toMatch(/^ScaChallenge:/);
    expect(new Date(q.scaChallenge.expiresAt).getTime()).toBeGreaterThan(Date.now());

    const early = await p.call("POST", `/quotes/${q.id}/execute`);
    expect(early.status, JSON.stringify(early.body)).toBe(409);
    expect(early.body.code).toBe("QUOTE_PENDING_AUTHORIZATION");
    const listed = await p.call("GET", "/quotes?status=PENDING_AUTHORIZATION");
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.data.map((x: any) => x.id)).toContain(q.id);

    const mails = await eventually(async () => {
      const m = await mailbox.mailsTo(email);
      return m.length > 0 ? m : undefined;
    });
    const code = otpCodeOf(mails.at(-1)!);
    const wrong = await authorize(p, q.id, code === "999999" ? "999998" : "999999");
    expect(wrong.status, JSON.stringify(wrong.body)).toBe(400);
    expect(wrong.body).toMatchObject({ code: "SCA_CODE_INVALID", details: { attemptsLeft: 4 } });

    const ok = await authorize(p, q.id, code);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.status).toBe("PENDING");
    expect(ok.body.scaChallenge).toBeUndefined();
    const again = await authorize(p, q.id, code);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("SCA_NOT_PENDING");

    const executed = await p.call("POST", `/quotes/${q.id}/execute`);
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
    expect(["PROCESSING", "COMPLETED"]).toContain(executed.body.status);
  });

  it("sandbox: 123456 authorizes; a quote created with immediatelyExecute executes on authorization", async () => {
    const { p, quote } = await setup("FR");
    const created = await quote({ immediatelyExecute: true });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.status).toBe("PENDING_AUTHORIZATION");
    const ok = await authorize(p, created.body.id, "123456");
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(["PROCESSING", "COMPLETED"]).toContain(ok.body.status);
  });

  it("a challenge takes at most 5 wrong codes, also when they arrive at once; then even the right code is refused", async () => {
    const { p, quote } = await setup("NL");
    const { body: q } = await quote();
    expect(q.status).toBe("PENDING_AUTHORIZATION");
    const answers = await Promise.all(Array.from({ length: 8 }, () => authorize(p, q.id, "000001")));
    const codes = answers.map((a) => a.body.code).sort();
    expect(codes.filter((c) => c === "SCA_CODE_INVALID")).toHaveLength(5);
    expect(codes.filter((c) => c === "SCA_ATTEMPTS_EXCEEDED")).toHaveLength(3);
    const right = await authorize(p, q.id, "123456");
    expect(right.status).toBe(400);
    expect(right.body.code).toBe("SCA_ATTEMPTS_EXCEEDED");
    // A dead challenge has no code to send again.
    const resend = await p.call("POST", `/quotes/${q.id}/authorize/resend`);
    expect(resend.status, JSON.stringify(resend.body)).toBe(409);
    expect(resend.body.code).toBe("SCA_NOT_PENDING");
  });

  it("resend: one code per 30 seconds (429 RATE_LIMITED with Retry-After); a malformed code is 400 INVALID_INPUT", async () => {
    const { p, quote } = await setup("DE");
    const { body: q } = await quote();
    const resend = await p.call("POST", `/quotes/${q.id}/authorize/resend`);
    expect(resend.status, JSON.stringify(resend.body)).toBe(429);
    expect(resend.body.code).toBe("RATE_LIMITED");
    const bad = await authorize(p, q.id, "12ab");
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("INVALID_INPUT");
    const none = await p.call("POST", `/quotes/${q.id}/authorize`, {});
    expect(none.status).toBe(400);
    expect(none.body.details.errors[0].field).toBe("body.code");
  });

  it("a customer outside SCA-regulated regions never waits: PENDING, and authorize/resend are 409 SCA_NOT_PENDING", async () => {
    const { p, quote } = await setup("US");
    const { body: q } = await quote();
    expect(q.status).toBe("PENDING");
    expect(q.scaChallenge).toBeUndefined();
    for (const path of ["authorize", "authorize/resend"]) {
      const res = await p.call("POST", `/quotes/${q.id}/${path}`, path === "authorize" ? { code: "123456" } : undefined);
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body.code).toBe("SCA_NOT_PENDING");
    }
    const missing = await authorize(p, "Quote:019a8f3e-5b0c-7a41-8d9f-2e3c4b5a6978", "123456");
    expect(missing.status).toBe(404);
  });

  it("a REALTIME_FUNDING quote gets its paymentInstructions only once authorized", async () => {
    const { p, customerId, payee } = await setup("DE");
    const created = await p.call("POST", "/quotes", {
      source: { sourceType: "REALTIME_FUNDING", customerId, currency: "USD" },
      destination: { destinationType: "ACCOUNT", accountId: payee.id },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 10_000,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.status).toBe("PENDING_AUTHORIZATION");
    expect(created.body.paymentInstructions).toBeUndefined();
    const ok = await authorize(p, created.body.id, "123456");
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.status).toBe("PENDING");
    expect(ok.body.paymentInstructions?.length).toBeGreaterThan(0);
  });

  it("GET /transactions?status=PENDING_AUTHORIZATION lists the transactions of waiting quotes (answered PENDING), and no others", async () => {
    const { p, customerId, quote } = await setup("DE");
    const waiting = (await quote()).body;
    const authorized = (await quote()).body;
    expect((await authorize(p, authorized.id, "123456")).status).toBe(200);
    const other = await setup("US");
    const notWaiting = (await other.quote()).body;
    expect(notWaiting.status).toBe("PENDING");

    const listed = await p.call("GET", "/transactions?status=PENDING_AUTHORIZATION");
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.data.map((t: any) => t.id)).toEqual([waiting.transactionId]);
    expect(listed.body.data[0]).toMatchObject({ status: "PENDING", type: "OUTGOING", quoteId: waiting.id });
    expect(gridViolations(GRID.TransactionStatus, listed.body.data[0].status)).toEqual([]);
    expect((await p.call("GET", `/transactions?status=PENDING_AUTHORIZATION&customerId=${encodeURIComponent(customerId)}&type=OUTGOING`)).body.data).toHaveLength(1);
    expect((await p.call("GET", "/transactions?status=PENDING_AUTHORIZATION&type=INCOMING")).body).toMatchObject({ data: [], hasMore: false });
    // The ledger's PENDING still holds every quote's transaction, waiting or not.
    const pending = (await p.call("GET", "/transactions?status=PENDING")).body.data.map((t: any) => t.id);
    expect(pending).toEqual(expect.arrayContaining([waiting.transactionId, authorized.transactionId]));
    expect((await other.p.call("GET", "/transactions?status=PENDING_AUTHORIZATION")).body.data).toEqual([]);

    const asc = await p.call("GET", "/transactions?status=PENDING_AUTHORIZATION&sortOrder=asc");
    expect(asc.status).toBe(400);
    expect(asc.body.details.errors).toEqual([expect.objectContaining({ field: "query.sortOrder" })]);
  });
});
