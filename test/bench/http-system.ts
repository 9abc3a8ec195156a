import { createClient } from "@connectrpc/connect";
import { createProcessLogger } from "@corridor/kit";
import { startEmbedded } from "@corridor/embedded";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { createFreshDatabase } from "../infra/databases.js";

/**
 * The system under load for the HTTP benchmark: the embedded system in this process on loopback,
 * with PGlite in memory unless DATABASE_URL is set (then a fresh database on that server, dropped
 * afterwards) and in-process auth cache and rate-limit counters unless REDIS_URL is set. A sandbox
 * platform is then set up through the public API only, the way an integrator would.
 */

export const API_VERSION = "2025-10-13";

/**
 * Far above anything one machine can send: the limiter still runs on every request (its cost is
 * part of what is measured) but never answers 429, which would turn a benchmark into a measure
 * of the limit.
 */
const UNLIMITED = { max: 1_000_000_000, timeWindowMs: 60_000 };

export interface BenchSystem {
  /** http://127.0.0.1:port (no version). */
  url: string;
  database: "PGlite (in memory)" | "Postgres";
  cache: "in-process" | "Redis";
  /** The fresh Postgres database the system runs on (undefined with PGlite), for breakdowns read after a scenario. */
  databaseUrl?: string;
  /** Basic credentials of the benchmark platform. */
  authorization: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

export async function startBenchSystem(): Promise<BenchSystem> {
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const redisUrl = process.env.REDIS_URL || undefined;
  const fresh = databaseUrl ? await createFreshDatabase(databaseUrl, "corridor_bench") : undefined;
  const system = await startEmbedded({
    // Errors only by default: the log goes to stdout, where the table is printed.
    log: createProcessLogger("bench", process.env.LOG_LEVEL ?? "error"),
    databaseUrl: fresh?.url,
    redisUrl,
    httpHost: "127.0.0.1",
    httpPort: 0,
    rateLimit: UNLIMITED,
  });

  const admin = createClient(PlatformAdminService, system.transportFor("auth-sessions"));
  const created = await admin.createPlatform({ name: "benchmark platform", environment: Environment.SANDBOX, isRegulatedFinancialInstitution: false });
  const authorization = `Basic ${Buffer.from(`${created.token!.clientId}:${created.clientSecret}`).toString("base64")}`;

  return {
    url: system.url,
    database: fresh ? "Postgres" : "PGlite (in memory)",
    cache: redisUrl ? "Redis" : "in-process",
    databaseUrl: fresh?.url,
    authorization,
    async call(method, path, body, headers = {}) {
      const res = await fetch(`${system.url}/${API_VERSION}${path}`, {
        method,
        body: body === undefined ? undefined : JSON.stringify(body),
        headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    async stop() {
      await system.stop();
      await fresh?.drop();
    },
  };
}

/** Polls until `check` returns a value; the ledger opens accounts from events, so setup waits for them. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`benchmark setup: ${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expectStatus(res: { status: number; body: unknown }, status: number, what: string): void {
  if (res.status !== status) throw new Error(`benchmark setup: ${what} answered ${res.status}, expected ${status}: ${JSON.stringify(res.body)}`);
}

/** IBAN with valid check digits (ISO 13616 mod 97) for a country and BBAN. */
function iban(country: string, bban: string): string {
  const digits = [...`${bban}${country}00`].map((ch) => (/[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch)).join("");
  const rem = [...digits].reduce((r, d) => (r * 10 + Number(d)) % 97, 0);
  return `${country}${String(98 - rem).padStart(2, "0")}${bban}`;
}

export const individual = (platformCustomerId: string, fullName: string) => ({
  customerType: "INDIVIDUAL",
  platformCustomerId,
  fullName,
  birthDate: "1990-04-01",
  nationality: "US",
  address: { line1: "1 Main St", postalCode: "94105", country: "US", city: "San Francisco" },
  region: "US",
  email: "bench@example.com",
  currencies: ["USD"],
});

export interface Fixtures {
  customerId: string;
  /** The verified customer's funded USD account. */
  fiatAccountId: string;
  /** The customer's USD bank account (sandbox suffix 000: transfers complete). */
  usdPayeeId: string;
  /** The customer's EUR bank account (quotes USD → EUR). */
  eurPayeeId: string;
  customers: number;
  /** Transfers accepted during setup (each becomes one OUTGOING transaction that completes). */
  transfersAccepted: number;
}

/**
 * Through the public API: EUR added to the platform's currencies, one verified customer with a
 * funded USD account and USD and EUR external accounts, and `customers` customers in all (the
 * list scenario pages through them). Waits until the ledger has opened every customer's account,
 * so no setup work is still draining from the outbox while a scenario runs.
 */
export async function setUpFixtures(sys: BenchSystem, customers: number): Promise<Fixtures> {
  const cfg = await sys.call("GET", "/config");
  expectStatus(cfg, 200, "GET /config");
  const usd = cfg.body.supportedCurrencies.find((c: { currencyCode: string }) => c.currencyCode === "USD") ?? cfg.body.supportedCurrencies[0];
  if (!cfg.body.supportedCurrencies.some((c: { currencyCode: string }) => c.currencyCode === "EUR")) {
    expectStatus(await sys.call("PATCH", "/config", { supportedCurrencies: [...cfg.body.supportedCurrencies, { ...usd, currencyCode: "EUR" }] }), 200, "PATCH /config");
  }

  const payer = await sys.call("POST", "/customers", individual("bench-payer", "Ada Lovelace"));
  expectStatus(payer, 201, "POST /customers (payer)");
  const customerId: string = payer.body.id;
  if (payer.body.kycStatus !== "APPROVED") {
    const v = await sys.call("POST", "/verifications", { customerId });
    if (v.status >= 300) throw new Error(`benchmark setup: POST /verifications answered ${v.status}: ${JSON.stringify(v.body)}`);
  }
  const fiatAccountId = await eventually("the payer's USD account", async () => {
    const res = await sys.call("GET", `/customers/internal-accounts?customerId=${customerId}&type=INTERNAL_FIAT`);
    return res.body?.data?.[0]?.id as string | undefined;
  });
  // The sandbox maximum per call; transfers below move 1 cent each, so this never runs out.
  expectStatus(await sys.call("POST", `/sandbox/internal-accounts/${fiatAccountId}/fund`, { amount: 100_000_000_000 }), 200, "sandbox fund");
  const usdPayee = await sys.call("POST", "/customers/external-accounts", {
    customerId,
    currency: "USD",
    accountInfo: {
      accountType: "USD_ACCOUNT",
      accountNumber: "881234500000",
      routingNumber: "021000021",
      bankAccountType: "CHECKING",
      bankName: "Test Bank",
      beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace" },
    },
  });
  expectStatus(usdPayee, 201, "POST /customers/external-accounts (USD)");
  const eurPayee = await sys.call("POST", "/customers/external-accounts", {
    customerId,
    currency: "EUR",
    accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000") },
  });
  expectStatus(eurPayee, 201, "POST /customers/external-accounts (EUR)");
  // Verification completes asynchronously: the first accepted transfer shows the customer may move money.
  await eventually("a first transfer-out of the verified payer", async () => {
    const res = await sys.call("POST", "/transfer-out", { source: { accountId: fiatAccountId }, destination: { accountId: usdPayee.body.id }, amount: 1 });
    return res.status === 201 ? true : undefined;
  });

  // The rest of the customers, a few requests at a time (setup, not measured).
  let next = 1;
  const worker = async () => {
    while (next < customers) {
      const n = next++;
      const res = await sys.call("POST", "/customers", individual(`bench-${String(n).padStart(4, "0")}`, "Grace Hopper"));
      expectStatus(res, 201, `POST /customers #${n}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  await eventually(`the USD accounts of all ${customers} customers`, async () => {
    const res = await sys.call("GET", "/customers/internal-accounts?type=INTERNAL_FIAT&limit=1");
    return res.body?.totalCount >= customers ? true : undefined;
  }, 180_000);

  return { customerId, fiatAccountId, usdPayeeId: usdPayee.body.id, eurPayeeId: eurPayee.body.id, customers, transfersAccepted: 1 };
}

/** A verified customer with a funded USD account and a USD bank account, for load spread over many accounts. */
export interface FundedCustomer {
  customerId: string;
  accountId: string;
  payeeId: string;
}

/**
 * `count` more verified customers, each with a funded USD internal account and a USD external
 * account (sandbox suffix 000: transfers to it complete), through the public API, a few at a time.
 * Returns once each one's first transfer-out is accepted (its verification has reached the ledger).
 */
export async function setUpFundedCustomers(sys: BenchSystem, count: number, prefix: string): Promise<FundedCustomer[]> {
  const out: FundedCustomer[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = next++;
      const c = await sys.call("POST", "/customers", individual(`${prefix}-${String(n).padStart(4, "0")}`, "Katherine Johnson"));
      expectStatus(c, 201, `POST /customers (funded #${n})`);
      const customerId: string = c.body.id;
      if (c.body.kycStatus !== "APPROVED") {
        const v = await sys.call("POST", "/verifications", { customerId });
        if (v.status >= 300) throw new Error(`benchmark setup: POST /verifications answered ${v.status}: ${JSON.stringify(v.body)}`);
      }
      const accountId = await eventually(`customer #${n}'s USD account`, async () => {
        const res = await sys.call("GET", `/customers/internal-accounts?customerId=${customerId}&type=INTERNAL_FIAT`);
        return res.body?.data?.[0]?.id as string | undefined;
      });
      expectStatus(await sys.call("POST", `/sandbox/internal-accounts/${accountId}/fund`, { amount: 100_000_000_000 }), 200, "sandbox fund");
      const payee = await sys.call("POST", "/customers/external-accounts", {
        customerId,
        currency: "USD",
        accountInfo: {
          accountType: "USD_ACCOUNT",
          accountNumber: `77${String(n).padStart(6, "0")}1000`,
          routingNumber: "021000021",
          bankAccountType: "CHECKING",
          bankName: "Test Bank",
          beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Katherine Johnson" },
        },
      });
      expectStatus(payee, 201, `POST /customers/external-accounts (funded #${n})`);
      await eventually(`a first transfer-out of funded customer #${n}`, async () => {
        const res = await sys.call("POST", "/transfer-out", { source: { accountId }, destination: { accountId: payee.body.id }, amount: 1 });
        return res.status === 201 ? true : undefined;
      });
      out.push({ customerId, accountId, payeeId: payee.body.id });
    }
  };
  await Promise.all(Array.from({ length: 5 }, worker));
  return out;
}
