import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { individual } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { platformAccount } from "./ledger-helpers.js";

/** Issue 27: Grid's PATCH /internal-accounts/{id} (embedded-wallet privacy) by signed retry, sandbox magic signature. */
describe.skipIf(skipReason())(`wallet privacy (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let wallet: string;

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform({ name: "Wallet privacy e2e" });
    const customer = (await p.call("POST", "/customers", individual())).body;
    wallet = (
      await eventually(async () => {
        const res = await p.call("GET", `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&type=EMBEDDED_WALLET`);
        return res.status === 200 && res.body.data.length > 0 ? res.body.data[0] : undefined;
      }, 30_000)
    ).id;
  }, 120_000);
  afterAll(async () => system?.stop());

  const sign = (c: { requestId: string }) => ({ "Request-Id": c.requestId, "Service-Wallet-Signature": "sandbox-valid-signature" });

  it("answers 202 with a challenge, changes nothing, then 200 with privateEnabled on the signed retry of the same body; the requestId is single use", async () => {
    // auth-sessions learns of the wallet from the ledger's events: the first challenge may have to wait for it.
    const first = await eventually(async () => {
      const r = await p.call("PATCH", `/internal-accounts/${wallet}`, { privateEnabled: true });
      return r.status === 202 ? r : undefined;
    }, 30_000);
    expect(first.body).toMatchObject({ payloadToSign: expect.any(String), requestId: expect.stringMatching(/^Request:/), expiresAt: expect.any(String) });
    const before = (await p.call("GET", `/customers/internal-accounts?type=EMBEDDED_WALLET`)).body.data.find((a: { id: string }) => a.id === wallet);
    expect(before.privateEnabled).toBe(false);

    const done = await p.call("PATCH", `/internal-accounts/${wallet}`, { privateEnabled: true }, sign(first.body));
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ id: wallet, type: "EMBEDDED_WALLET", privateEnabled: true });
    const after = (await p.call("GET", `/customers/internal-accounts?type=EMBEDDED_WALLET`)).body.data.find((a: { id: string }) => a.id === wallet);
    expect(after.privateEnabled).toBe(true);

    const reused = await p.call("PATCH", `/internal-accounts/${wallet}`, { privateEnabled: true }, sign(first.body));
    expect(reused.status).toBe(401);
  });

  it("refuses a signed retry whose body differs (401 WALLET_SIGNATURE_BODY_MISMATCH), half the headers (401), and changes nothing", async () => {
    const first = await p.call("PATCH", `/internal-accounts/${wallet}`, { privateEnabled: false });
    expect(first.status).toBe(202);
    const other = await p.call("PATCH", `/internal-accounts/${wallet}`, { privateEnabled: true }, sign(first.body));
    expect([other.status, other.body.code]).toEqual([401, "WALLET_SIGNATURE_BODY_MISMATCH"]);
    const half = await p.call("PATCH", `/internal-accounts/${wallet}`, { privateEnabled: false }, { "Request-Id": first.body.requestId });
    expect([half.status, half.body.code]).toEqual([401, "WALLET_SIGNATURE_MISSING"]);
    const after = (await p.call("GET", `/customers/internal-accounts?type=EMBEDDED_WALLET`)).body.data.find((a: { id: string }) => a.id === wallet);
    expect(after.privateEnabled).toBe(true);
  });

  it("answers 400 INVALID_INPUT for an empty body or an account that is no embedded wallet, 404 for an unknown account", async () => {
    const empty = await p.call("PATCH", `/internal-accounts/${wallet}`, {});
    expect([empty.status, empty.body.code]).toEqual([400, "INVALID_INPUT"]);
    const fiat = await platformAccount(p);
    const notWallet = await p.call("PATCH", `/internal-accounts/${fiat.id}`, { privateEnabled: true });
    expect([notWallet.status, notWallet.body.code]).toEqual([400, "INVALID_INPUT"]);
    const unknown = await p.call("PATCH", "/internal-accounts/InternalAccount:019542f5-b3e7-7d02-8000-000000000000", { privateEnabled: true });
    expect([unknown.status, unknown.body.code]).toEqual([404, "INTERNAL_ACCOUNT_NOT_FOUND"]);
  });
});
