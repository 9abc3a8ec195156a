import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address, uniq, verifiedCustomer } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type TestSystem } from "./harness.js";
import { fund, iban } from "./ledger-helpers.js";

/**
 * Trusted beneficiaries (issue 27, docs/sca.md): an EEA customer trusts an external account with a
 * one-time code (sandbox: 123456), after which quotes paying it need no SCA; untrusting brings it back.
 */
process.env.CORRIDOR_FX_SANDBOX_DRIFT_BPS = "0";

let sys: TestSystem;
beforeAll(async () => {
  if (skipReason()) return;
  sys = await startTestSystem();
}, 120_000);
afterAll(async () => sys?.stop());

async function setup(country: string) {
  const p = await sys.createPlatform();
  const cfg = (await p.call("GET", "/config")).body;
  const usd = cfg.supportedCurrencies[0];
  expect((await p.call("PATCH", "/config", { supportedCurrencies: [usd, { ...usd, currencyCode: "EUR" }] })).status).toBe(200);
  const customer = await verifiedCustomer(p, { currencies: ["USD"], address: { ...address, country }, email: `${uniq("trust")}@example.com` });
  const fiat = await eventually(async () => {
    const res = await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}`);
    return res.body.data?.find((a: any) => a.type === "INTERNAL_FIAT") as { id: string } | undefined;
  });
  await fund(p, fiat.id, 1_000_000);
  const ext = await p.call("POST", "/customers/external-accounts", { customerId: customer.id, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000") } });
  expect(ext.status, JSON.stringify(ext.body)).toBe(201);
  const quote = () => p.call("POST", "/quotes", { source: { sourceType: "ACCOUNT", accountId: fiat.id }, destination: { destinationType: "ACCOUNT", accountId: ext.body.id }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 10_000 });
  return { p, payeeId: ext.body.id as string, quote };
}

describe.skipIf(Boolean(skipReason()))(`trusted beneficiaries (${mode})`, () => {
  it("trust with the code: quotes to the account need no SCA; untrust: they wait for it again", async () => {
    const { p, payeeId, quote } = await setup("DE");
    expect((await quote()).body.status).toBe("PENDING_AUTHORIZATION");

    const confirmFirst = await p.call("POST", `/customers/external-accounts/${payeeId}/trust/confirm`, { code: "123456" });
    expect(confirmFirst.status, JSON.stringify(confirmFirst.body)).toBe(409);
    expect(confirmFirst.body.code).toBe("SCA_NOT_PENDING");

    const start = await p.call("POST", `/customers/external-accounts/${payeeId}/trust`);
    expect(start.status, JSON.stringify(start.body)).toBe(200);
    expect(start.body).toMatchObject({ whitelistedId: payeeId, scaChallenge: { factor: "SMS_OTP", purpose: "TRUST_BENEFICIARY" } });
    const again = await p.call("POST", `/customers/external-accounts/${payeeId}/trust`);
    expect(again.status).toBe(429);
    const stale = await p.call("POST", `/customers/external-accounts/${payeeId}/trust/confirm`, { code: "123456", challengeId: "ScaChallenge:019a8f3e-5b0c-7a41-8d9f-2e3c4b5a6978" });
    expect(stale.status).toBe(409);
    const wrong = await p.call("POST", `/customers/external-accounts/${payeeId}/trust/confirm`, { code: "000001", challengeId: start.body.scaChallenge.id });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe("SCA_CODE_INVALID");
    const ok = await p.call("POST", `/customers/external-accounts/${payeeId}/trust/confirm`, { code: "123456", challengeId: start.body.scaChallenge.id });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toEqual({ trusted: true });
    const trustedQuote = await quote();
    expect(trustedQuote.status, JSON.stringify(trustedQuote.body)).toBe(201);
    expect(trustedQuote.body.status).toBe("PENDING");

    const untrust = await p.call("POST", `/customers/external-accounts/${payeeId}/untrust`);
    expect(untrust.status, JSON.stringify(untrust.body)).toBe(200);
    expect(untrust.body.scaChallenge.purpose).toBe("UNTRUST_BENEFICIARY");
    const done = await p.call("POST", `/customers/external-accounts/${payeeId}/untrust/confirm`, { code: "123456" });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toEqual({ trusted: false });
    expect((await quote()).body.status).toBe("PENDING_AUTHORIZATION");
  });

  it("outside SCA-regulated regions trust is 409 SCA_NOT_REQUIRED; an unknown account is 404", async () => {
    const { p, payeeId } = await setup("US");
    const res = await p.call("POST", `/customers/external-accounts/${payeeId}/trust`);
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.code).toBe("SCA_NOT_REQUIRED");
    const missing = await p.call("POST", "/customers/external-accounts/ExternalAccount:019a8f3e-5b0c-7a41-8d9f-2e3c4b5a6978/trust");
    expect(missing.status).toBe(404);
  });
});
