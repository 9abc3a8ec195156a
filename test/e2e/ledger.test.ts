import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { balanceOf, clabe, fund, iban, platformAccount, platformExternal, txStatus, usdAccountInfo } from "./ledger-helpers.js";

/**
 * Issue 4 end to end: accounts, sandbox funding, external accounts and their validation,
 * transfers with every sandbox suffix outcome (driven by the sandbox clock, never by sleeping),
 * Idempotency-Key, transactions and isolation between platforms.
 */
describe.skipIf(skipReason())(`ledger (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let usd: any;

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform();
    usd = await platformAccount(p);
  });
  afterAll(async () => system?.stop());

  const out = (source: string, destination: string, amount: number, headers: Record<string, string> = {}) =>
    p.call("POST", "/transfer-out", { source: { accountId: source }, destination: { accountId: destination }, amount }, headers);
  const pull = (source: string, destination: string, amount: number) =>
    p.call("POST", "/transfer-in", { source: { accountId: source }, destination: { accountId: destination }, amount });
  const fieldsOf = (body: any) => (body?.details?.errors ?? []).map((e: any) => e.field);

  /** A customer through the public API (a missing route fails the test: it must never hide as a skip). */
  async function customer(fullName: string) {
    const cfg = (await p.call("GET", "/config")).body;
    if (!cfg.supportedCurrencies.some((c: any) => c.currencyCode === "USDC")) {
      const supportedCurrencies = [...cfg.supportedCurrencies, { ...cfg.supportedCurrencies[0], currencyCode: "USDC" }];
      expect((await p.call("PATCH", "/config", { supportedCurrencies })).status).toBe(200);
    }
    const res = await p.call("POST", "/customers", {
      customerType: "INDIVIDUAL",
      platformCustomerId: `ledger-${fullName.replace(/\W/g, "")}-${Date.now()}`,
      fullName,
      birthDate: "1990-01-01",
      nationality: "US",
      address: { line1: "1 Main St", postalCode: "10001", country: "US" },
      currencies: ["USD", "USDC"],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  }

  describe("internal accounts and sandbox funding", () => {
    it("opens the platform's USD account with USD_ACCOUNT funding instructions", async () => {
      expect(usd).toMatchObject({
        id: expect.stringMatching(/^InternalAccount:/),
        type: "INTERNAL_FIAT",
        balance: { amount: 0, currency: { code: "USD", decimals: 2 } },
        fundingPaymentInstructions: [
          { accountOrWalletInfo: { accountType: "USD_ACCOUNT", accountNumber: expect.any(String), routingNumber: expect.any(String), reference: expect.any(String) }, isPlatformAccount: true },
        ],
      });
      expect(usd.customerId).toBeUndefined();
      expect((await p.call("GET", "/platform/internal-accounts?type=EMBEDDED_WALLET")).body.data).toEqual([]);
    });

    it("opens an account for a currency added to the config", async () => {
      const cfg = await p.call("GET", "/config");
      const supportedCurrencies = [...cfg.body.supportedCurrencies, { ...cfg.body.supportedCurrencies[0], currencyCode: "EUR" }];
      expect((await p.call("PATCH", "/config", { supportedCurrencies })).status).toBe(200);
      const eur = await platformAccount(p, "EUR");
      expect(eur).toMatchObject({ type: "INTERNAL_FIAT", balance: { amount: 0, currency: { code: "EUR" } } });
    });

    it("funds an account and answers it with the new balance", async () => {
      const before = await balanceOf(p);
      const res = await fund(p, usd.id, 1_000_000);
      expect(res.balance.amount).toBe(before + 1_000_000);
    });

    it("rejects fund amounts outside 1..100000000000 naming body.amount", async () => {
      for (const amount of [0, 100_000_000_001, 1.5]) {
        const res = await p.call("POST", `/sandbox/internal-accounts/${usd.id}/fund`, { amount });
        expect(res.status).toBe(400);
        expect(fieldsOf(res.body)).toContain("body.amount");
      }
    });

    it("answers 404 for an unknown account and 403 to production platforms and VIEW-only tokens", async () => {
      expect((await p.call("POST", "/sandbox/internal-accounts/InternalAccount:0190f0f0-0000-7000-8000-000000000000/fund", { amount: 1 })).status).toBe(404);
      const prod = await system.createPlatform({ environment: "PRODUCTION" });
      expect((await prod.call("POST", `/sandbox/internal-accounts/${usd.id}/fund`, { amount: 1 })).status).toBe(403);
      expect((await prod.call("POST", "/sandbox/clock/advance", { seconds: 1 })).status).toBe(403);
      // A production rail no operator bound to a connector: 400 naming it (docs/connectors.md).
      const prodUsd = await platformAccount(prod);
      const prodExt = await prod.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("105") });
      expect(prodExt.body.beneficiaryVerificationStatus).toBe("UNSUPPORTED"); // sandbox magic values do not apply
      const prodOut = await prod.call("POST", "/transfer-out", { source: { accountId: prodUsd.id }, destination: { accountId: prodExt.body.id }, amount: 1 });
      expect(prodOut.status).toBe(400);
      expect(prodOut.body).toMatchObject({ code: "PAYMENT_RAIL_NOT_AVAILABLE", details: { currency: "USD", paymentRail: "ACH" } });
      const viewer = await p.call("POST", "/tokens", { name: "viewer", permissions: ["VIEW"] });
      const v = system.as(viewer.body.clientId, viewer.body.clientSecret);
      expect((await v.call("POST", `/sandbox/internal-accounts/${usd.id}/fund`, { amount: 1 })).status).toBe(403);
      expect((await v.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: usd.id }, amount: 1 })).status).toBe(403);
    });
  });

  describe("external accounts", () => {
    it("registers a platform account and reads, lists and deletes it", async () => {
      const created = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000"), platformAccountId: "ops-1" });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        id: expect.stringMatching(/^ExternalAccount:/),
        status: "ACTIVE",
        currency: "USD",
        customerId: null,
        platformAccountId: "ops-1",
        defaultUmaDepositAccount: false,
        beneficiaryVerificationStatus: "MATCHED",
        beneficiaryVerifiedData: { fullName: "Ada Lovelace" },
        accountInfo: { accountType: "USD_ACCOUNT", routingNumber: "021000021" },
      });
      const id = created.body.id;
      expect((await p.call("GET", `/platform/external-accounts/${id}`)).body.id).toBe(id);
      expect((await p.call("GET", "/platform/external-accounts?limit=100")).body.data.map((a: any) => a.id)).toContain(id);
      expect((await p.call("GET", `/customers/external-accounts/${id}`)).status).toBe(404); // not a customer's
      expect((await p.call("DELETE", `/platform/external-accounts/${id}`)).status).toBe(204);
      expect((await p.call("GET", `/platform/external-accounts/${id}`)).status).toBe(404);
    });

    it.each([
      ["routing number checksum", { currency: "USD", accountInfo: usdAccountInfo("000", { routingNumber: "021000022" }) }, "body.accountInfo.routingNumber"],
      ["routing number length", { currency: "USD", accountInfo: usdAccountInfo("000", { routingNumber: "12345" }) }, "body.accountInfo.routingNumber"],
      ["IBAN checksum", { currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: "DE89370400440532013001" } }, "body.accountInfo.iban"],
      ["UAE IBAN", { currency: "AED", accountInfo: { accountType: "AED_ACCOUNT", iban: "DE89370400440532013000", swiftCode: "EBILAEAD" } }, "body.accountInfo.iban"],
      ["CLABE check digit", { currency: "MXN", accountInfo: { accountType: "MXN_ACCOUNT", clabe: "002010077777777772" } }, "body.accountInfo.clabe"],
      ["PIX CPF key", { currency: "BRL", accountInfo: { accountType: "BRL_ACCOUNT", pixKey: "12345678900", pixKeyType: "CPF", taxId: "52998224725" } }, "body.accountInfo.pixKey"],
      ["PIX key type", { currency: "BRL", accountInfo: { accountType: "BRL_ACCOUNT", pixKey: "x", pixKeyType: "TWITTER", taxId: "52998224725" } }, "body.accountInfo.pixKeyType"],
      ["currency of the type", { currency: "EUR", accountInfo: usdAccountInfo("000") }, "body.currency"],
      ["Spark address", { currency: "USDC", accountInfo: { accountType: "SPARK_WALLET", address: "nope" } }, "body.accountInfo.address"],
      ["unknown account type", { currency: "USD", accountInfo: { accountType: "GBP_ACCOUNT" } }, "body.accountInfo.accountType"],
    ])("answers 400 INVALID_INPUT naming the field for a bad %s", async (_name, body, field) => {
      const res = await p.call("POST", "/platform/external-accounts", body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("INVALID_INPUT");
      expect(fieldsOf(res.body)).toContain(field);
    });

    it("accepts every supported variant", async () => {
      const bodies = [
        { currency: "AED", accountInfo: { accountType: "AED_ACCOUNT", iban: iban("AE", "0331234567890123456"), swiftCode: "EBILAEAD" } },
        { currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000") } },
        { currency: "MXN", accountInfo: { accountType: "MXN_ACCOUNT", clabe: clabe("000") } },
        { currency: "BRL", accountInfo: { accountType: "BRL_ACCOUNT", pixKey: "ana@example.com", pixKeyType: "EMAIL", taxId: "52998224725" } },
        { currency: "USDC", accountInfo: { accountType: "SPARK_WALLET", address: "sp1qqwertyupasdfghjklzxcvqqqqqqqqqqqq" } },
        { currency: "BTC", accountInfo: { accountType: "LIGHTNING", lightningAddress: "ana@wallet.example" } },
      ];
      for (const body of bodies) {
        const res = await p.call("POST", "/platform/external-accounts", body);
        expect(res.status, JSON.stringify(res.body)).toBe(201);
      }
    });

    it("reports beneficiary verification by the 1xx suffix and stores nothing for 105", async () => {
      const expected: Record<string, string> = { "102": "NOT_MATCHED", "103": "PARTIAL_MATCH", "104": "PENDING", "106": "UNSUPPORTED", "107": "CHECKED_BY_RECEIVING_FI", "108": "MATCHED" };
      for (const [suffix, status] of Object.entries(expected)) {
        const res = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo(suffix) });
        expect(res.body.beneficiaryVerificationStatus, suffix).toBe(status);
      }
      const mxn = await p.call("POST", "/platform/external-accounts", { currency: "MXN", accountInfo: { accountType: "MXN_ACCOUNT", clabe: clabe("103") } });
      expect(mxn.body.beneficiaryVerificationStatus).toBe("PARTIAL_MATCH");
      const pix = await p.call("POST", "/platform/external-accounts", { currency: "BRL", accountInfo: { accountType: "BRL_ACCOUNT", pixKey: "ana104@example.com", pixKeyType: "EMAIL", taxId: "52998224725" } });
      expect(pix.body.beneficiaryVerificationStatus).toBe("PENDING");

      const before = (await p.call("GET", "/platform/external-accounts?limit=1")).body.totalCount;
      const bad = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("105") });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe("INVALID_BANK_ACCOUNT");
      // Every field a 400 names carries its location, whatever the code.
      for (const e of bad.body.details.errors ?? []) expect(e.field).toMatch(/^body\./);
      expect((await p.call("GET", "/platform/external-accounts?limit=1")).body.totalCount).toBe(before);
    });

    it("pages with limit and cursor", async () => {
      const first = await p.call("GET", "/platform/external-accounts?limit=2");
      expect(first.body.data).toHaveLength(2);
      expect(first.body.hasMore).toBe(true);
      const second = await p.call("GET", `/platform/external-accounts?limit=2&cursor=${first.body.nextCursor}`);
      expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
      expect((await p.call("GET", "/platform/external-accounts?limit=0")).status).toBe(400);
    });
  });

  describe("transfer-out by destination suffix", () => {
    it("000 completes and the money leaves the account", async () => {
      const ext = await platformExternal(p, "000");
      const before = await balanceOf(p);
      const res = await out(usd.id, ext.id, 2500);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        id: expect.stringMatching(/^Transaction:/),
        type: "OUTGOING",
        status: "PENDING",
        source: { sourceType: "ACCOUNT", accountId: usd.id, currency: "USD" },
        destination: { destinationType: "ACCOUNT", accountId: ext.id, currency: "USD" },
        receivedAmount: { amount: 2500, currency: { code: "USD" } },
        sentAmount: { amount: 2500 },
        reconciliationInstructions: { reference: expect.any(String) },
      });
      expect(await balanceOf(p)).toBe(before - 2500); // held at once
      const done = await txStatus(p, res.body.id, "COMPLETED");
      expect(done.settledAt).toEqual(expect.any(String));
      expect(done.failureReason).toBeUndefined();
      expect(await balanceOf(p)).toBe(before - 2500);
    });

    // decisions §5: OUTGOING has no REJECTED status, so a bank's rejection (004) is FAILED too, the
    // rejection kept in failureDetail. 002 and 003 fail immediately (test/e2e/transfer-outcomes.test.ts).
    it.each([["004", "BANK_REJECTED"]])("%s ends FAILED OFFRAMP_FAILED (%s) and the hold goes back", async (suffix, detail) => {
      const ext = await platformExternal(p, suffix);
      const before = await balanceOf(p);
      const res = await out(usd.id, ext.id, 700);
      const t = await txStatus(p, res.body.id, "FAILED");
      expect(t).toMatchObject({ failureReason: "OFFRAMP_FAILED", failureDetail: detail });
      expect(t.settledAt).toBeUndefined();
      await eventually(async () => ((await balanceOf(p)) === before ? true : undefined));
    });

    it("005 fails when the clock is advanced right after the request, before the rail has seen the transfer", async () => {
      const ext = await platformExternal(p, "005");
      const res = await out(usd.id, ext.id, 700);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      // No wait for PROCESSING: the advance may reach the sandbox before the rail instruction does.
      expect((await p.call("POST", "/sandbox/clock/advance", { seconds: 31 })).status).toBe(200);
      const t = await txStatus(p, res.body.id, "FAILED");
      expect(t).toMatchObject({ failureReason: "OFFRAMP_FAILED", failureDetail: "TIMED_OUT" });
    });

    it("005 stays in flight until the sandbox clock has moved 30 s, then fails", async () => {
      const ext = await platformExternal(p, "005");
      const before = await balanceOf(p);
      const res = await out(usd.id, ext.id, 900);
      await txStatus(p, res.body.id, "PROCESSING");
      // Sandbox time is real time plus the advances, so the real seconds this test takes under
      // load count too: 20 s in, the transfer is well inside its 30 s; 15 s more is past them.
      expect((await p.call("POST", "/sandbox/clock/advance", { seconds: 20 })).status).toBe(200);
      expect((await p.call("GET", `/transactions/${res.body.id}`)).body.status).toBe("PROCESSING");
      expect(await balanceOf(p)).toBe(before - 900);
      expect((await p.call("POST", "/sandbox/clock/advance", { seconds: 15 })).status).toBe(200);
      const t = await txStatus(p, res.body.id, "FAILED");
      expect(t).toMatchObject({ failureReason: "OFFRAMP_FAILED", failureDetail: "TIMED_OUT" });
      await eventually(async () => ((await balanceOf(p)) === before ? true : undefined));
    });

    it("answers 400 INSUFFICIENT_BALANCE and 400 CURRENCY_MISMATCH", async () => {
      const ext = await platformExternal(p, "000");
      const res = await out(usd.id, ext.id, (await balanceOf(p)) + 1);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("INSUFFICIENT_BALANCE");
      const eur = await platformAccount(p, "EUR");
      const mismatch = await out(eur.id, ext.id, 1);
      expect(mismatch.status).toBe(400);
      expect(mismatch.body.code).toBe("CURRENCY_MISMATCH");
    });

    it("rejects amounts outside 1..9000000000000000 and missing accounts", async () => {
      const ext = await platformExternal(p, "000");
      expect(fieldsOf((await out(usd.id, ext.id, 0)).body)).toContain("body.amount");
      expect(fieldsOf((await out(usd.id, ext.id, 9_000_000_000_000_001)).body)).toContain("body.amount");
      expect((await p.call("POST", "/transfer-out", { source: {}, destination: { accountId: ext.id }, amount: 1 })).status).toBe(400);
      expect((await out(usd.id, "ExternalAccount:0190f0f0-0000-7000-8000-000000000000", 1)).status).toBe(404);
    });
  });

  describe("transfer-in by source suffix", () => {
    it("000 completes and credits the account", async () => {
      const ext = await platformExternal(p, "000");
      const before = await balanceOf(p);
      const res = await pull(ext.id, usd.id, 4200);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ type: "INCOMING", status: "PENDING", receivedAmount: { amount: 4200 } });
      expect(res.body.sentAmount).toBeUndefined();
      await txStatus(p, res.body.id, "COMPLETED");
      await eventually(async () => ((await balanceOf(p)) === before + 4200 ? true : undefined));
    });

    // A failed pull is a failed collection (COLLECTION_FAILED, not an off-ramp), and a bank's rejection is
    // FAILED as well (REJECTED is left to incoming payments their receiver declines). 002 and 003 fail
    // immediately (test/e2e/transfer-outcomes.test.ts).
    it.each([["004", "BANK_REJECTED"]])("%s ends FAILED COLLECTION_FAILED (%s) and credits nothing", async (suffix, detail) => {
      const ext = await platformExternal(p, suffix);
      const before = await balanceOf(p);
      const res = await pull(ext.id, usd.id, 100);
      const t = await txStatus(p, res.body.id, "FAILED");
      expect(t).toMatchObject({ type: "INCOMING", failureReason: "COLLECTION_FAILED", failureDetail: detail });
      expect(t.settledAt).toBeUndefined();
      expect(await balanceOf(p)).toBe(before);
    });

    it("005 fails after 30 sandbox seconds", async () => {
      const ext = await platformExternal(p, "005");
      const res = await pull(ext.id, usd.id, 100);
      await txStatus(p, res.body.id, "PROCESSING");
      await p.call("POST", "/sandbox/clock/advance", { seconds: 30 });
      const t = await txStatus(p, res.body.id, "FAILED");
      expect(t).toMatchObject({ failureReason: "COLLECTION_FAILED", failureDetail: "TIMED_OUT" });
    });

    it("refuses sources that cannot be pulled from", async () => {
      await platformAccount(p, "EUR");
      const ext = await p.call("POST", "/platform/external-accounts", { currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000") } });
      const eur = await platformAccount(p, "EUR");
      const res = await pull(ext.body.id, eur.id, 100);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("TRANSFER_IN_NOT_SUPPORTED");
      expect(res.body.message).toMatch(/fundingPaymentInstructions/);
    });
  });

  describe("Idempotency-Key", () => {
    it("replays the first response with Idempotent-Replayed and moves money once", async () => {
      const ext = await platformExternal(p, "000");
      const before = await balanceOf(p);
      const headers = { "idempotency-key": `replay-${Date.now()}` };
      const first = await out(usd.id, ext.id, 111, headers);
      const second = await out(usd.id, ext.id, 111, headers);
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.headers.get("idempotent-replayed")).toBe("true");
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      expect(second.body).toEqual(first.body);
      await txStatus(p, first.body.id, "COMPLETED");
      expect(await balanceOf(p)).toBe(before - 111);
    });

    it("answers 422 IDEMPOTENCY_KEY_REUSED for another body", async () => {
      const ext = await platformExternal(p, "000");
      const headers = { "idempotency-key": `reuse-${Date.now()}` };
      await out(usd.id, ext.id, 5, headers);
      const res = await out(usd.id, ext.id, 6, headers);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("IDEMPOTENCY_KEY_REUSED");
    });

    it("lets concurrent duplicates create one transaction; the others get 409 IDEMPOTENCY_KEY_IN_USE or the replay", async () => {
      const ext = await platformExternal(p, "000");
      const headers = { "idempotency-key": `race-${Date.now()}` };
      const all = await Promise.all(Array.from({ length: 10 }, () => out(usd.id, ext.id, 3, headers)));
      const ids = new Set(all.filter((r) => r.status === 201).map((r) => r.body.id));
      expect(ids.size).toBe(1);
      for (const r of all) {
        if (r.status !== 201) {
          expect(r.status).toBe(409);
          expect(r.body.code).toBe("IDEMPOTENCY_KEY_IN_USE");
        }
      }
      const list = await p.call("GET", `/transactions?reference=${encodeURIComponent(all.find((r) => r.status === 201)!.body.reconciliationInstructions.reference)}`);
      expect(list.body.totalCount).toBe(1);
    });

    it("replays sandbox funding too", async () => {
      const headers = { "idempotency-key": `fund-${Date.now()}` };
      const a = await p.call("POST", `/sandbox/internal-accounts/${usd.id}/fund`, { amount: 10 }, headers);
      const b = await p.call("POST", `/sandbox/internal-accounts/${usd.id}/fund`, { amount: 10 }, headers);
      expect(b.headers.get("idempotent-replayed")).toBe("true");
      expect(b.body.balance.amount).toBe(a.body.balance.amount);
    });
  });

  describe("transactions", () => {
    it("lists with filters, both sort orders and paging", async () => {
      const all = await p.call("GET", "/transactions?limit=100");
      expect(all.status).toBe(200);
      expect(all.body.totalCount).toBeGreaterThan(5);
      const outgoing = await p.call("GET", "/transactions?type=OUTGOING&status=FAILED&limit=100");
      expect(outgoing.body.data.length).toBeGreaterThan(0);
      expect(outgoing.body.data.every((t: any) => t.type === "OUTGOING" && t.status === "FAILED")).toBe(true);
      const asc = await p.call("GET", "/transactions?sortOrder=asc&limit=100");
      expect(asc.body.data.map((t: any) => t.id)).toEqual([...all.body.data.map((t: any) => t.id)].reverse());
      const page1 = await p.call("GET", "/transactions?limit=2");
      const page2 = await p.call("GET", `/transactions?limit=2&cursor=${page1.body.nextCursor}`);
      expect(page2.body.data.map((t: any) => t.id)).toEqual(all.body.data.slice(2, 4).map((t: any) => t.id));
      const newest = all.body.data[0];
      const window = await p.call("GET", `/transactions?startDate=${encodeURIComponent(newest.createdAt)}&endDate=${encodeURIComponent(newest.createdAt)}`);
      expect(window.body.data.map((t: any) => t.id)).toContain(newest.id);
      const future = await p.call("GET", "/transactions?startDate=2999-01-01T00:00:00Z");
      expect(future.body).toMatchObject({ data: [], hasMore: false, totalCount: 0 });
      expect((await p.call("GET", "/transactions?status=LOST")).status).toBe(400);
    });

    it("answers 400 INVALID_INPUT on query.cursor for a forged cursor on every ledger list", async () => {
      const encode = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
      // {"k":"x","id":"y"}: the audit's example; then a date Date.parse takes but the API never issues, a number, and no JSON.
      const forged = ["eyJrIjoieCIsImlkIjoieSJ9", encode({ k: "2025", id: "y" }), encode({ k: 1, id: "y" }), encode({ k: new Date().toISOString(), id: 5 }), "garbage"];
      for (const path of ["/transactions", "/customers/internal-accounts", "/customers/external-accounts", "/platform/external-accounts"]) {
        for (const cursor of forged) {
          const res = await p.call("GET", `${path}?cursor=${cursor}`);
          expect(res.status, `${path} ${cursor}: ${JSON.stringify(res.body)}`).toBe(400);
          expect(res.body.code).toBe("INVALID_INPUT");
          expect(fieldsOf(res.body)).toEqual(["query.cursor"]);
        }
      }
      // A cursor the API issued still pages.
      const first = await p.call("GET", "/platform/external-accounts?limit=1");
      expect(first.body.nextCursor).toEqual(expect.any(String));
      expect((await p.call("GET", `/platform/external-accounts?limit=1&cursor=${first.body.nextCursor}`)).status).toBe(200);
    });

    it("keeps every platform's money and records to itself", async () => {
      const other = await system.createPlatform();
      const otherUsd = await platformAccount(other);
      const mine = (await p.call("GET", "/transactions?limit=1")).body.data[0];
      expect((await other.call("GET", `/transactions/${mine.id}`)).status).toBe(404);
      expect((await other.call("GET", "/transactions")).body.totalCount).toBe(0);
      expect((await other.call("POST", `/sandbox/internal-accounts/${usd.id}/fund`, { amount: 1 })).status).toBe(404);
      const ext = await platformExternal(p, "000");
      expect((await other.call("GET", `/platform/external-accounts/${ext.id}`)).status).toBe(404);
      expect((await other.call("POST", "/transfer-out", { source: { accountId: otherUsd.id }, destination: { accountId: ext.id }, amount: 1 })).status).toBe(404);
      expect((await other.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.id }, amount: 1 })).status).toBe(404);

      // A customer of this platform, with an account of each kind, seen from the other platform.
      const c = await customer("Iris Isolated");
      expect(c, "the customers routes").toBeDefined();
      const [cUsd] = await eventually(async () => {
        const res = await p.call("GET", `/customers/internal-accounts?customerId=${c.id}&currency=USD`);
        return res.body.data?.length ? res.body.data : undefined;
      });
      const cExt = await p.call("POST", "/customers/external-accounts", { customerId: c.id, currency: "USD", accountInfo: usdAccountInfo("000") });
      expect(cExt.status).toBe(201);
      const otherOwn = await platformExternal(other, "000");
      const txCount = (await p.call("GET", "/transactions?limit=1")).body.totalCount;
      const usdBefore = await balanceOf(p);

      expect((await other.call("GET", `/customers/external-accounts/${cExt.body.id}`)).status).toBe(404);
      expect((await other.call("DELETE", `/customers/external-accounts/${cExt.body.id}`)).status).toBe(404);
      expect((await other.call("DELETE", `/platform/external-accounts/${ext.id}`)).status).toBe(404);
      // Lists are scoped by platform: another platform's customer id is a filter that matches nothing (documented as a list, not a 404).
      for (const path of [`/customers/internal-accounts?customerId=${c.id}`, `/customers/external-accounts?customerId=${c.id}`]) {
        const res = await other.call("GET", path);
        expect(res.status, path).toBe(200);
        expect(res.body, path).toMatchObject({ data: [], hasMore: false, totalCount: 0 });
      }
      // Pulls into, or from, the first platform's accounts: 404 whichever side is foreign.
      for (const [source, destination] of [
        [ext.id, usd.id], // both foreign
        [ext.id, otherUsd.id], // foreign source
        [otherOwn.id, usd.id], // foreign destination
        [cExt.body.id, cUsd.id], // a foreign customer's accounts
      ]) {
        const res = await other.call("POST", "/transfer-in", { source: { accountId: source }, destination: { accountId: destination }, amount: 1 });
        expect(res.status, `${source} -> ${destination}: ${JSON.stringify(res.body)}`).toBe(404);
      }
      expect((await other.call("POST", "/transfer-out", { source: { accountId: cUsd.id }, destination: { accountId: cExt.body.id }, amount: 1 })).status).toBe(404);

      // Nothing changed on this platform.
      expect((await p.call("GET", `/customers/external-accounts/${cExt.body.id}`)).body).toMatchObject({ id: cExt.body.id, status: "ACTIVE" });
      expect((await p.call("GET", `/platform/external-accounts/${ext.id}`)).body).toMatchObject({ id: ext.id, status: "ACTIVE" });
      expect((await p.call("GET", "/transactions?limit=1")).body.totalCount).toBe(txCount);
      expect(await balanceOf(p)).toBe(usdBefore);
      expect((await other.call("GET", "/transactions")).body.totalCount).toBe(0);
      // Moving one platform's sandbox clock leaves the other's pending transfers alone.
      await fund(other, otherUsd.id, 100);
      const otherExt = await platformExternal(other, "005");
      const pending = await other.call("POST", "/transfer-out", { source: { accountId: otherUsd.id }, destination: { accountId: otherExt.id }, amount: 50 });
      await txStatus(other, pending.body.id, "PROCESSING");
      await p.call("POST", "/sandbox/clock/advance", { seconds: 3600 });
      expect((await other.call("GET", `/transactions/${pending.body.id}`)).body.status).toBe("PROCESSING");
    });
  });

  describe("customers", () => {
    it("opens a customer's accounts and lets only a verified customer move money", async () => {
      const c = await customer("Grace Hopper");
      const accounts = await eventually(async () => {
        const res = await p.call("GET", `/customers/internal-accounts?customerId=${c.id}`);
        return res.body.data.length === 3 ? res.body.data : undefined;
      });
      expect(accounts.map((a: any) => `${a.type}:${a.balance.currency.code}`).sort()).toEqual(["EMBEDDED_WALLET:USDC", "INTERNAL_CRYPTO:USDC", "INTERNAL_FIAT:USD"]);
      const fiat = accounts.find((a: any) => a.type === "INTERNAL_FIAT");
      await fund(p, fiat.id, 1000);
      const ext = await p.call("POST", "/customers/external-accounts", { customerId: c.id, currency: "USD", accountInfo: usdAccountInfo("000"), defaultUmaDepositAccount: true });
      expect(ext.status).toBe(201);
      expect(ext.body).toMatchObject({ customerId: c.id, defaultUmaDepositAccount: true });

      if (c.kycStatus !== "APPROVED") {
        const refused = await out(fiat.id, ext.body.id, 10);
        expect(refused.status).toBe(403);
        expect(refused.body.code).toBe("USER_NOT_READY");
        const v = await p.call("POST", "/verifications", { customerId: c.id });
        expect(v.status, JSON.stringify(v.body)).toBeLessThan(300);
      }
      const ok = await eventually(async () => {
        const res = await out(fiat.id, ext.body.id, 10);
        return res.status === 201 ? res : undefined;
      });
      expect(ok.body).toMatchObject({ customerId: c.id, platformCustomerId: c.platformCustomerId });
      const listed = await p.call("GET", `/transactions?customerId=${c.id}`);
      expect(listed.body.data.map((t: any) => t.id)).toContain(ok.body.id);
      const byPlatformId = await p.call("GET", `/transactions?platformCustomerId=${encodeURIComponent(c.platformCustomerId)}`);
      expect(byPlatformId.body.totalCount).toBe(1);

      // A second default moves the flag: at most one per customer.
      const ext2 = await p.call("POST", "/customers/external-accounts", { customerId: c.id, currency: "USD", accountInfo: usdAccountInfo("001"), defaultUmaDepositAccount: true });
      expect(ext2.body.defaultUmaDepositAccount).toBe(true);
      expect((await p.call("GET", `/customers/external-accounts/${ext.body.id}`)).body.defaultUmaDepositAccount).toBe(false);
      const defaults = (await p.call("GET", `/customers/external-accounts?customerId=${c.id}`)).body.data.filter((a: any) => a.defaultUmaDepositAccount);
      expect(defaults).toHaveLength(1);
    });

    it("refuses an external account for an unknown customer", async () => {
      const res = await p.call("POST", "/customers/external-accounts", { customerId: "Customer:0190f0f0-0000-7000-8000-000000000000", currency: "USD", accountInfo: usdAccountInfo("000") });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
    });
  });

  it("rejects clock moves outside 1..2592000 seconds", async () => {
    expect((await p.call("POST", "/sandbox/clock/advance", { seconds: 0 })).status).toBe(400);
    expect((await p.call("POST", "/sandbox/clock/advance", { seconds: 2_592_001 })).status).toBe(400);
  });
});
