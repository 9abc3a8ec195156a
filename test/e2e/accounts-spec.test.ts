import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { individual, verifiedCustomer } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { platformAccount, usdAccountInfo } from "./ledger-helpers.js";

/**
 * Issue 29, items 2 and 8, through the public API: a SPARK_WALLET funding instruction carries
 * assetType, address and invoice (the spec's payment instruction item), and a BUSINESS
 * beneficiary may be named with the spec's fullName as well as Grid's legalName.
 */
describe.skipIf(skipReason())(`internal and external accounts against the spec (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform({ name: "accounts spec e2e" });
    const cfg = (await p.call("GET", "/config")).body;
    const supportedCurrencies = [...cfg.supportedCurrencies, { ...cfg.supportedCurrencies[0], currencyCode: "USDC" }];
    expect((await p.call("PATCH", "/config", { supportedCurrencies })).status).toBe(200);
  }, 120_000);
  afterAll(async () => system?.stop());

  const fieldsOf = (body: any): string[] => (body.details?.errors ?? []).map((e: { field: string }) => e.field);
  /** The bytes a bech32m Spark string carries (its data part, checksum dropped; the kit's unit tests check the checksum). */
  function payload(s: string): Uint8Array {
    const CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
    const words = [...s.slice(s.lastIndexOf("1") + 1, -6)].map((c) => CHARSET.indexOf(c));
    const out: number[] = [];
    let acc = 0;
    let bits = 0;
    for (const w of words) {
      acc = (acc << 5) | w;
      bits += 5;
      if (bits >= 8) {
        bits -= 8;
        out.push((acc >> bits) & 0xff);
      }
    }
    return Uint8Array.from(out);
  }

  describe("SPARK_WALLET funding instructions", () => {
    function expectSparkInstruction(account: any) {
      const [item] = account.fundingPaymentInstructions;
      expect(item.accountOrWalletInfo).toEqual({ accountType: "SPARK_WALLET", assetType: "USDC", address: expect.stringMatching(/^sparkrt1/), invoice: expect.stringMatching(/^sparkrt1/) });
      const { address, invoice } = item.accountOrWalletInfo;
      // The invoice is a Spark invoice (protobuf SparkAddress: field 1 the 33-byte identity key) to the address's own key.
      const inv = payload(invoice);
      expect([inv[0], inv[1]]).toEqual([0x0a, 33]);
      expect(inv.subarray(2, 35)).toEqual(payload(address));
      expect(item.instructionsNotes).toMatch(/invoice/);
      return invoice as string;
    }

    it("carry assetType, address and the account's own invoice on the platform's and a customer's crypto accounts", async () => {
      const platformUsdc = await platformAccount(p, "USDC");
      const platformInvoice = expectSparkInstruction(platformUsdc);
      expect(platformUsdc.fundingPaymentInstructions[0].isPlatformAccount).toBe(true);

      const customer = await verifiedCustomer(p, { currencies: ["USD", "USDC"] });
      const accounts = await eventually(async () => {
        const res = await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}`);
        const crypto = (res.body.data ?? []).filter((a: { type: string }) => a.type === "INTERNAL_CRYPTO" || a.type === "EMBEDDED_WALLET");
        return crypto.length === 2 ? crypto : undefined;
      });
      const invoices = accounts.map(expectSparkInstruction);
      // Each account its own invoice, stable across reads.
      expect(new Set([platformInvoice, ...invoices]).size).toBe(3);
      const again = (await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}`)).body.data;
      for (const a of accounts) expect(again.find((b: { id: string }) => b.id === a.id).fundingPaymentInstructions).toEqual(a.fundingPaymentInstructions);
    });
  });

  describe("BUSINESS beneficiary named with fullName", () => {
    const business = { beneficiaryType: "BUSINESS", fullName: "Acme Payouts LLC", registrationNumber: "REG-77", countryOfResidence: "US" };

    it("registers a platform and a customer account whose business beneficiary gives only fullName, answered as sent and verified on that name", async () => {
      const platformRes = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000", { beneficiary: business }) });
      expect(platformRes.status, JSON.stringify(platformRes.body)).toBe(201);
      expect(platformRes.body.accountInfo.beneficiary).toEqual(business);
      expect(platformRes.body).toMatchObject({ beneficiaryVerificationStatus: "MATCHED", beneficiaryVerifiedData: { fullName: "Acme Payouts LLC" } });
      expect((await p.call("GET", `/platform/external-accounts/${platformRes.body.id}`)).body.accountInfo.beneficiary).toEqual(business);

      const customer = (await p.call("POST", "/customers", individual())).body;
      const both = { ...business, legalName: "Acme Payouts LLC" };
      const customerRes = await p.call("POST", "/customers/external-accounts", { customerId: customer.id, currency: "USD", accountInfo: usdAccountInfo("000", { beneficiary: both }) });
      expect(customerRes.status, JSON.stringify(customerRes.body)).toBe(201);
      expect(customerRes.body.accountInfo.beneficiary).toEqual(both);
    });

    it("answers 400 INVALID_INPUT on fullName when legalName and fullName differ, and on legalName when neither is given, storing nothing", async () => {
      const before = (await p.call("GET", "/platform/external-accounts?limit=1")).body.totalCount;
      const differ = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000", { beneficiary: { ...business, legalName: "Acme Holdings Inc" } }) });
      expect(differ.status).toBe(400);
      expect(differ.body.code).toBe("INVALID_INPUT");
      expect(fieldsOf(differ.body)).toEqual(["body.accountInfo.beneficiary.fullName"]);
      const none = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000", { beneficiary: { beneficiaryType: "BUSINESS", taxId: "1" } }) });
      expect(none.status).toBe(400);
      expect(fieldsOf(none.body)).toEqual(["body.accountInfo.beneficiary.legalName"]);
      expect((await p.call("GET", "/platform/external-accounts?limit=1")).body.totalCount).toBe(before);
    });
  });
});
