import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicError, startLedgerHarness, type LedgerHarness } from "./harness.js";

// Issue 27: Grid's PATCH /internal-accounts/{id} (wallet privacy) by signed retry through auth-sessions.
describe("ledger wallet privacy (signed retry)", () => {
  let h: LedgerHarness;
  let platformId: string;
  let wallet: string;
  let fiat: string;
  beforeAll(async () => {
    h = await startLedgerHarness();
    platformId = await h.newPlatform();
    await h.newCustomer(platformId, { currencies: ["USD", "USDC"] });
    const accounts = (await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER" })).accounts;
    wallet = accounts.find((a) => a.type === "EMBEDDED_WALLET")!.id;
    fiat = accounts.find((a) => a.type === "INTERNAL_FIAT")!.id;
  });
  afterAll(async () => h?.close());

  const patch = (accountId: string, privateEnabled: boolean | undefined, retry = { requestId: "", signature: "" }) =>
    h.ledger.updateInternalAccount({ platformId, accountId, privateEnabled, ...retry });

  it("answers a challenge first and changes nothing, then applies the signed retry of the same body", async () => {
    const first = await patch(wallet, true);
    expect(first.result.case).toBe("challenge");
    const requestId = first.result.case === "challenge" ? first.result.value.requestId : "";
    expect(requestId).toMatch(/^Request:/);
    expect((await h.ledger.getInternalAccount({ platformId, accountId: wallet })).account!.privateEnabled).toBe(false);

    const done = await patch(wallet, true, { requestId, signature: "sandbox-valid-signature" });
    expect(done.result.case).toBe("account");
    expect(done.result.case === "account" && done.result.value.privateEnabled).toBe(true);
    expect((await h.ledger.getInternalAccount({ platformId, accountId: wallet })).account!.privateEnabled).toBe(true);
    // The requestId is single use.
    expect(await publicError(patch(wallet, true, { requestId, signature: "sandbox-valid-signature" }))).toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("refuses a retry whose body differs from the challenged one, a bad signature, and changes nothing", async () => {
    const first = await patch(wallet, false);
    const requestId = first.result.case === "challenge" ? first.result.value.requestId : "";
    expect(await publicError(patch(wallet, true, { requestId, signature: "sandbox-valid-signature" }))).toMatchObject({ code: "WALLET_SIGNATURE_BODY_MISMATCH" });
    expect(await publicError(patch(wallet, false, { requestId, signature: "not-a-signature" }))).toMatchObject({ code: "UNAUTHORIZED" });
    expect((await h.ledger.getInternalAccount({ platformId, accountId: wallet })).account!.privateEnabled).toBe(true);
  });

  it("answers 400 without privateEnabled or for an account that is no embedded wallet, 404 for an unknown one", async () => {
    expect(await publicError(patch(wallet, undefined))).toMatchObject({ code: "INVALID_INPUT" });
    expect(await publicError(patch(fiat, true))).toMatchObject({ code: "INVALID_INPUT" });
    expect(await publicError(patch("InternalAccount:019542f5-b3e7-7d02-8000-000000000000", true))).toMatchObject({ code: "INTERNAL_ACCOUNT_NOT_FOUND" });
    expect((await h.ledger.getInternalAccount({ platformId, accountId: fiat })).account!.privateEnabled).toBe(false);
  });
});
