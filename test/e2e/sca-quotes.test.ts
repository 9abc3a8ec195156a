import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { otpCodeOf, remoteMailbox, startMailCatcher, type MailCatcher, type Mailbox } from "../support/mail-catcher.js";
import { address, uniq, verifiedCustomer } from "./customers-fixtures.js";
import { GRID, gridViolations } from "./grid-schema.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { advanceClock, fund, iban } from "./ledger-helpers.js";

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

  it("the transaction of a waiting quote is PENDING_AUTHORIZATION in GET /transactions/{id}, the list and its filter, then PENDING once authorized", async () => {
    const { p, customerId, quote } = await setup("DE");
    const waiting = (await quote()).body;
    const authorized = (await quote()).body;
    expect((await authorize(p, authorized.id, "123456")).status).toBe(200);
    const other = await setup("US");
    const notWaiting = (await other.quote()).body;
    expect(notWaiting.status).toBe("PENDING");

    const got = await p.call("GET", `/transactions/${waiting.transactionId}`);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body).toMatchObject({ id: waiting.transactionId, status: "PENDING_AUTHORIZATION", type: "OUTGOING", quoteId: waiting.id });
    expect(gridViolations(GRID.TransactionStatus, got.body.status)).toEqual([]);
    expect((await p.call("GET", `/transactions/${authorized.transactionId}`)).body.status).toBe("PENDING");
    expect((await other.p.call("GET", `/transactions/${notWaiting.transactionId}`)).body.status).toBe("PENDING");

    const listed = await p.call("GET", "/transactions?status=PENDING_AUTHORIZATION");
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.data.map((t: any) => t.id)).toEqual([waiting.transactionId]);
    expect(listed.body.data[0]).toMatchObject({ status: "PENDING_AUTHORIZATION", quoteId: waiting.id });
    expect(gridViolations(GRID.TransactionStatus, listed.body.data[0].status)).toEqual([]);
    // Every answer of the unfiltered list is one of Grid's statuses too.
    const all = (await p.call("GET", "/transactions")).body.data;
    expect(all.map((t: any) => t.status).sort()).toEqual(["PENDING", "PENDING_AUTHORIZATION"]);
    for (const t of all) expect(gridViolations(GRID.TransactionStatus, t.status)).toEqual([]);
    // A plain status filter: PENDING no longer includes the waiting one, and every other filter applies.
    expect((await p.call("GET", "/transactions?status=PENDING")).body.data.map((t: any) => t.id)).toEqual([authorized.transactionId]);
    expect((await p.call("GET", `/transactions?status=PENDING_AUTHORIZATION&customerId=${encodeURIComponent(customerId)}&type=OUTGOING`)).body.data).toHaveLength(1);
    expect((await p.call("GET", "/transactions?status=PENDING_AUTHORIZATION&type=INCOMING")).body).toMatchObject({ data: [], hasMore: false });
    const asc = await p.call("GET", "/transactions?status=PENDING_AUTHORIZATION&sortOrder=asc");
    expect(asc.status, JSON.stringify(asc.body)).toBe(200);
    expect(asc.body.data.map((t: any) => t.id)).toEqual([waiting.transactionId]);
    const reference = got.body.reconciliationInstructions?.reference;
    expect(reference).toBeTruthy();
    expect((await p.call("GET", `/transactions?status=PENDING_AUTHORIZATION&reference=${encodeURIComponent(reference)}`)).body.data.map((t: any) => t.id)).toEqual([waiting.transactionId]);
    expect((await p.call("GET", `/transactions?status=PENDING_AUTHORIZATION&reference=${encodeURIComponent(reference)}-none`)).body.data).toEqual([]);
    expect((await other.p.call("GET", "/transactions?status=PENDING_AUTHORIZATION")).body.data).toEqual([]);

    // Authorized: the same transaction is PENDING everywhere.
    expect((await authorize(p, waiting.id, "123456")).status).toBe(200);
    expect((await p.call("GET", `/transactions/${waiting.transactionId}`)).body.status).toBe("PENDING");
    expect((await p.call("GET", "/transactions?status=PENDING_AUTHORIZATION")).body.data).toEqual([]);
  });

  it("webhooks: a transaction created PENDING_AUTHORIZATION sends nothing; authorization sends OUTGOING_PAYMENT_PENDING carrying PENDING", async () => {
    const { p, quote } = await setup("DE");
    const waiting = (await quote()).body;
    const plain = await setup("US");
    const notWaiting = (await plain.quote()).body;
    const eventsOf = async (caller: Caller, transactionId: string) => (await caller.call("GET", `/events?resourceId=${encodeURIComponent(transactionId)}`)).body.data as any[];
    // The control: a PENDING creation is announced (its event is recorded even without a webhook endpoint).
    await eventually(async () => ((await eventsOf(plain.p, notWaiting.transactionId)).length > 0 ? true : undefined));
    expect((await eventsOf(p, waiting.transactionId)).map((e) => e.type)).toEqual([]);

    expect((await authorize(p, waiting.id, "123456")).status).toBe(200);
    const events = await eventually(async () => {
      const e = await eventsOf(p, waiting.transactionId);
      return e.length > 0 ? e : undefined;
    });
    expect(events.map((e) => [e.type, e.payload.data.status])).toEqual([["OUTGOING_PAYMENT_PENDING", "PENDING"]]);
    expect(gridViolations(GRID.TransactionStatus, events[0].payload.data.status)).toEqual([]);
  });

  it("cancelling a waiting quote's transaction fails it and its quote; a waiting quote that expires takes its transaction along", async () => {
    const { p, quote } = await setup("DE");
    const waiting = (await quote()).body;
    const cancelled = await p.call("POST", `/transactions/${waiting.transactionId}/cancel`, {});
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({ status: "FAILED", failureDetail: "CANCELLED" });
    await eventually(async () => ((await p.call("GET", `/quotes/${waiting.id}`)).body.status === "FAILED" ? true : undefined));
    const late = await authorize(p, waiting.id, "123456");
    expect(late.status, JSON.stringify(late.body)).toBe(409);

    const second = (await quote()).body;
    await advanceClock(p, 301);
    expect((await p.call("GET", `/quotes/${second.id}`)).body.status).toBe("EXPIRED");
    const tx = await eventually(async () => {
      const t = (await p.call("GET", `/transactions/${second.transactionId}`)).body;
      return t.status === "EXPIRED" ? t : undefined;
    });
    expect(tx).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
  });

  it("GET /agents/me/transactions filters by status PENDING_AUTHORIZATION for the agent's customer", async () => {
    const { p, customerId, quote } = await setup("DE");
    const waiting = (await quote()).body;
    const authorized = (await quote()).body;
    expect((await authorize(p, authorized.id, "123456")).status).toBe(200);
    const other = await setup("DE");
    const othersWaiting = (await other.quote()).body;
    expect(othersWaiting.status).toBe("PENDING_AUTHORIZATION");

    const created = await p.call("POST", "/agents", { name: "sca viewer", customerId, policy: { permissions: ["VIEW_TRANSACTIONS"] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const redeemed = await sys.raw("POST", `/2025-10-13/agents/device-codes/${created.body.deviceCode.code}/redeem`);
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    const agent = (path: string) => sys.raw("GET", `/2025-10-13${path}`, { headers: { authorization: `Bearer ${redeemed.body.accessToken}` } });

    const mine = await agent("/agents/me/transactions?status=PENDING_AUTHORIZATION");
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect(mine.body.data.map((t: any) => t.id)).toEqual([waiting.transactionId]);
    expect(mine.body.data[0].status).toBe("PENDING_AUTHORIZATION");
    expect(gridViolations(GRID.TransactionStatus, mine.body.data[0].status)).toEqual([]);
    expect((await agent("/agents/me/transactions?status=PENDING")).body.data.map((t: any) => t.id)).toEqual([authorized.transactionId]);
    expect((await agent("/agents/me/transactions?status=PENDING_AUTHORIZATION&sortOrder=asc&type=OUTGOING")).body.data.map((t: any) => t.id)).toEqual([waiting.transactionId]);
    expect((await agent(`/agents/me/transactions/${waiting.transactionId}`)).body.status).toBe("PENDING_AUTHORIZATION");
  });
});
