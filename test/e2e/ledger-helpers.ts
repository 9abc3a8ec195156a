import { expect } from "vitest";
import { verifiedCustomer } from "./customers-fixtures.js";
import { eventually, type Caller, type TestSystem } from "./harness.js";

export { iban } from "../support/bank-ids.js";

/** Test data builders for the ledger suites: valid identifiers with chosen sandbox suffixes. */

export const usdAccountInfo = (suffix = "000", extra: Record<string, unknown> = {}) => ({
  accountType: "USD_ACCOUNT",
  accountNumber: `8812345${suffix.padStart(5, "0")}`.slice(-12),
  routingNumber: "021000021",
  bankAccountType: "CHECKING",
  bankName: "Test Bank",
  beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace" },
  ...extra,
});

/** An 18-digit CLABE whose last three digits are `suffix` (the first 17 digits are searched). */
export function clabe(suffix: string): string {
  for (let n = 0; n < 100000; n++) {
    const body = `0021800${String(n).padStart(8, "0")}${suffix.slice(0, 2)}`;
    const w = [3, 7, 1];
    let sum = 0;
    for (let i = 0; i < 17; i++) sum += (Number(body[i]) * w[i % 3]!) % 10;
    const check = (10 - (sum % 10)) % 10;
    if (String(check) === suffix[2]) return `${body}${check}`;
  }
  throw new Error("no CLABE");
}

export async function platformAccount(p: Caller, currency = "USD") {
  return eventually(async () => {
    const res = await p.call("GET", `/platform/internal-accounts?currency=${currency}`);
    return res.status === 200 && res.body.data.length > 0 ? res.body.data[0] : undefined;
  });
}

export async function platformExternal(p: Caller, suffix: string) {
  const res = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo(suffix) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

export async function fund(p: Caller, accountId: string, amount: number) {
  const res = await p.call("POST", `/sandbox/internal-accounts/${accountId}/fund`, { amount });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

export async function txStatus(p: Caller, id: string, status: string) {
  return eventually(async () => {
    const res = await p.call("GET", `/transactions/${id}`);
    return res.body?.status === status ? res.body : undefined;
  });
}

export async function balanceOf(p: Caller, currency = "USD"): Promise<number> {
  const res = await p.call("GET", `/platform/internal-accounts?currency=${currency}`);
  return res.body.data[0].balance.amount;
}

/** Moves the platform's sandbox clock forward (fires the sandbox outcomes that became due). */
export async function advanceClock(p: Caller, seconds: number) {
  const res = await p.call("POST", "/sandbox/clock/advance", { seconds });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { now: string; offsetSeconds: number; fired: number };
}

/** The available balance of one of a customer's internal accounts. */
export async function customerBalance(p: Caller, customerId: string, accountId: string): Promise<number> {
  const res = await p.call("GET", `/customers/internal-accounts?customerId=${customerId}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const account = res.body.data.find((a: { id: string }) => a.id === accountId);
  expect(account, `account ${accountId}`).toBeDefined();
  return account.balance.amount;
}

/**
 * A sandbox platform supporting USD, EUR and MXN with a verified customer holding USD and EUR
 * accounts (the FX suites' starting point); the platform's MXN account is open too.
 */
export async function fxPlatform(system: TestSystem): Promise<{ p: Caller; customerId: string; usd: { id: string }; eur: { id: string } }> {
  const p = await system.createPlatform();
  const base = (await p.call("GET", "/config")).body.supportedCurrencies[0];
  const supportedCurrencies = ["USD", "EUR", "MXN"].map((currencyCode) => ({ ...base, currencyCode }));
  const patched = await p.call("PATCH", "/config", { supportedCurrencies });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);

  const customerId: string = (await verifiedCustomer(p, { currencies: ["USD", "EUR"] })).id;
  const accounts = await eventually(async () => {
    const res = await p.call("GET", `/customers/internal-accounts?customerId=${customerId}`);
    const fiat = (res.body.data ?? []).filter((a: { type: string }) => a.type === "INTERNAL_FIAT");
    return fiat.length === 2 ? fiat : undefined;
  });
  const byCode = (code: string) => accounts.find((a: { balance: { currency: { code: string } } }) => a.balance.currency.code === code);
  // The platform's own MXN account is opened by the config event; wait so every account is in the books.
  await eventually(async () => ((await p.call("GET", "/platform/internal-accounts?currency=MXN")).body.data?.length ? true : undefined));
  return { p, customerId, usd: byCode("USD"), eur: byCode("EUR") };
}
