import { describe, expect, it } from "vitest";
import { beneficiaryName, sandboxSuffix, validateAccountInfo } from "../src/domain/account-info.js";
import { verifyBeneficiary } from "../src/domain/beneficiary.js";
import { isValidClabe, isValidCnpj, isValidCpf, isValidIban, isValidRoutingNumber } from "../src/domain/checksums.js";

const fields = (r: ReturnType<typeof validateAccountInfo>) => ("errors" in r ? r.errors.map((e) => e.field) : []);

describe("bank identifier checksums", () => {
  it("accepts real ABA routing numbers and rejects a changed digit", () => {
    expect(isValidRoutingNumber("021000021")).toBe(true);
    expect(isValidRoutingNumber("011000015")).toBe(true);
    expect(isValidRoutingNumber("021000022")).toBe(false);
    expect(isValidRoutingNumber("02100002")).toBe(false);
  });
  it("checks IBANs by mod 97 and the UAE length", () => {
    expect(isValidIban("DE89370400440532013000")).toBe(true);
    expect(isValidIban("DE89370400440532013001")).toBe(false);
    expect(isValidIban("AE070331234567890123456", "AE")).toBe(true);
    expect(isValidIban("DE89370400440532013000", "AE")).toBe(false);
  });
  it("checks the CLABE check digit", () => {
    expect(isValidClabe("002010077777777771")).toBe(true);
    expect(isValidClabe("002010077777777772")).toBe(false);
    expect(isValidClabe("00201007777777777")).toBe(false);
  });
  it("checks CPF and CNPJ check digits", () => {
    expect(isValidCpf("52998224725")).toBe(true);
    expect(isValidCpf("52998224726")).toBe(false);
    expect(isValidCpf("11111111111")).toBe(false);
    expect(isValidCnpj("11222333000181")).toBe(true);
    expect(isValidCnpj("11222333000182")).toBe(false);
  });
});

describe("accountInfo validation", () => {
  it("names each bad USD_ACCOUNT field", () => {
    const r = validateAccountInfo("USD", { accountType: "USD_ACCOUNT", accountNumber: "12", routingNumber: "123456789", bankAccountType: "GOLD" });
    expect(fields(r).sort()).toEqual(["accountInfo.accountNumber", "accountInfo.bankAccountType", "accountInfo.routingNumber"]);
  });
  it("requires the currency to fit the account type", () => {
    expect(fields(validateAccountInfo("EUR", { accountType: "USD_ACCOUNT", accountNumber: "123456789", routingNumber: "021000021" }))).toEqual(["currency"]);
  });
  it("validates PIX keys by their type", () => {
    const ok = validateAccountInfo("BRL", { accountType: "BRL_ACCOUNT", pixKey: "ana@example.com", pixKeyType: "EMAIL", taxId: "52998224725" });
    expect("ok" in ok && ok.ok.identifier).toBe("ana@example.com");
    expect(fields(validateAccountInfo("BRL", { accountType: "BRL_ACCOUNT", pixKey: "12345678901", pixKeyType: "CPF", taxId: "52998224725" }))).toEqual(["accountInfo.pixKey"]);
    expect(fields(validateAccountInfo("BRL", { accountType: "BRL_ACCOUNT", pixKey: "+5511987654321", pixKeyType: "PHONE", taxId: "1" }))).toEqual(["accountInfo.taxId"]);
  });
  it("validates AED, EUR, MXN, Spark and Lightning variants", () => {
    expect(fields(validateAccountInfo("AED", { accountType: "AED_ACCOUNT", iban: "AE070331234567890123456", swiftCode: "EBILAEAD" }))).toEqual([]);
    expect(fields(validateAccountInfo("AED", { accountType: "AED_ACCOUNT", iban: "AE070331234567890123457", swiftCode: "EB" }))).toEqual(["accountInfo.iban", "accountInfo.swiftCode"]);
    expect(fields(validateAccountInfo("EUR", { accountType: "EUR_ACCOUNT", iban: "DE89 3704 0044 0532 0130 00" }))).toEqual([]);
    expect(fields(validateAccountInfo("MXN", { accountType: "MXN_ACCOUNT", clabe: "002010077777777772" }))).toEqual(["accountInfo.clabe"]);
    expect(fields(validateAccountInfo("USDC", { accountType: "SPARK_WALLET", address: "not-an-address" }))).toEqual(["accountInfo.address"]);
    expect(fields(validateAccountInfo("BTC", { accountType: "LIGHTNING" }))).toEqual(["accountInfo.invoice"]);
    expect(fields(validateAccountInfo("BTC", { accountType: "LIGHTNING", lightningAddress: "ana@wallet.example" }))).toEqual([]);
  });
  it("rejects unknown fields and a bad beneficiary", () => {
    const r = validateAccountInfo("USD", {
      accountType: "USD_ACCOUNT",
      accountNumber: "123456789",
      routingNumber: "021000021",
      colour: "red",
      beneficiary: { beneficiaryType: "ROBOT", fullName: "" },
    });
    expect(fields(r).sort()).toEqual(["accountInfo.beneficiary.beneficiaryType", "accountInfo.beneficiary.fullName", "accountInfo.colour"]);
  });
  it("takes a BUSINESS beneficiary (legalName required) beside the INDIVIDUAL one, each with its own fields", () => {
    const usd = (beneficiary: Record<string, unknown>) =>
      validateAccountInfo("USD", { accountType: "USD_ACCOUNT", accountNumber: "123456789", routingNumber: "021000021", beneficiary });
    const business = {
      beneficiaryType: "BUSINESS",
      legalName: "Acme Payouts LLC",
      registrationNumber: "REG-1",
      taxId: "12-3456789",
      email: "ops@acme.example",
      phoneNumber: "+14155550123",
      countryOfResidence: "US",
      address: { line1: "1 Main St", postalCode: "94105", country: "US" },
    };
    const ok = usd(business);
    expect(fields(ok)).toEqual([]);
    expect("ok" in ok && ok.ok.info.beneficiary).toEqual(business);
    expect(fields(usd({ beneficiaryType: "BUSINESS", registrationNumber: "REG-1" }))).toEqual(["accountInfo.beneficiary.legalName"]);
    expect(fields(usd({ beneficiaryType: "BUSINESS", legalName: "Acme", fullName: "Ada" }))).toEqual(["accountInfo.beneficiary.fullName"]);
    expect(fields(usd({ beneficiaryType: "INDIVIDUAL", fullName: "Ada", legalName: "Acme" }))).toEqual(["accountInfo.beneficiary.legalName"]);
    expect(fields(usd({ beneficiaryType: "INDIVIDUAL", fullName: "Ada", email: "ada@example.com", phoneNumber: "+442071234567", countryOfResidence: "GB" }))).toEqual([]);
    expect(fields(usd({ beneficiaryType: "BUSINESS", legalName: "Acme", phoneNumber: "555", email: "nope", countryOfResidence: "usa" })).sort()).toEqual([
      "accountInfo.beneficiary.countryOfResidence",
      "accountInfo.beneficiary.email",
      "accountInfo.beneficiary.phoneNumber",
    ]);
  });
});

describe("BUSINESS beneficiary named with the spec's fullName (issue 29)", () => {
  const usd = (beneficiary: Record<string, unknown>) =>
    validateAccountInfo("USD", { accountType: "USD_ACCOUNT", accountNumber: "123456789", routingNumber: "021000021", beneficiary });

  it("takes fullName in place of legalName, stores it as given and verifies that name", () => {
    const business = { beneficiaryType: "BUSINESS", fullName: "Acme Payouts LLC", registrationNumber: "REG-1" };
    const ok = usd(business);
    expect(fields(ok)).toEqual([]);
    expect("ok" in ok && ok.ok.info.beneficiary).toEqual(business);
    expect(beneficiaryName(business)).toBe("Acme Payouts LLC");
  });

  it("takes both when they are equal and refuses them on fullName when they differ", () => {
    expect(fields(usd({ beneficiaryType: "BUSINESS", legalName: "Acme", fullName: "Acme" }))).toEqual([]);
    expect(beneficiaryName({ beneficiaryType: "BUSINESS", legalName: "Acme", fullName: "Acme" })).toBe("Acme");
    const differ = usd({ beneficiaryType: "BUSINESS", legalName: "Acme", fullName: "Acme Inc" });
    expect("errors" in differ && differ.errors).toEqual([{ field: "accountInfo.beneficiary.fullName", reason: "must equal legalName when both are given (they name the same business)" }]);
  });
});

describe("sandbox beneficiary verification", () => {
  it("maps the 1xx suffixes and answers 400 for 105", () => {
    expect(verifyBeneficiary("SANDBOX", "123456102", "Ana").status).toBe("NOT_MATCHED");
    expect(verifyBeneficiary("SANDBOX", "123456103", "Ana").status).toBe("PARTIAL_MATCH");
    expect(verifyBeneficiary("SANDBOX", "123456104", "Ana").status).toBe("PENDING");
    expect(verifyBeneficiary("SANDBOX", "123456106", "Ana").status).toBe("UNSUPPORTED");
    expect(verifyBeneficiary("SANDBOX", "123456107", "Ana").status).toBe("CHECKED_BY_RECEIVING_FI");
    expect(verifyBeneficiary("SANDBOX", "123456000", "Ana")).toEqual({ status: "MATCHED", verifiedData: { fullName: "Ana" } });
    expect(() => verifyBeneficiary("SANDBOX", "123456105", "Ana")).toThrowError(/invalid/);
    expect(verifyBeneficiary("PRODUCTION", "123456105", "Ana").status).toBe("UNSUPPORTED");
  });
  it("reads the digits before the domain of an email-like identifier", () => {
    expect(sandboxSuffix("ana105@example.com")).toBe("105");
  });
});
