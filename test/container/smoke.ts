// The smoke both container suites run against a Corridor they did not start in-process: only its
// public REST API and a webhook receiver on this machine's loopback, as a platform would.
//
//   webhook endpoint → customer → verify → fund → transfer-out → COMPLETED
//   → quote to a slow payee → sandbox clock advance → COMPLETED → signed webhooks for both
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { expect } from "vitest";

type Json = any;

export interface Api {
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }>;
}

/** A client of the versioned API with a platform's Basic credentials. */
export function apiClient(apiUrl: string, clientId: string, clientSecret: string): Api {
  const authorization = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`;
  return {
    async call(method, path, body) {
      const res = await fetch(`${apiUrl}${path}`, {
        method,
        headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}

/** Polls `check` until it returns a value (event flows are asynchronous). */
export async function eventually<T>(check: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw last ?? new Error(`condition not met in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

export interface Receiver {
  /** http://127.0.0.1:port/hooks */
  url: string;
  received: { headers: IncomingMessage["headers"]; body: string }[];
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 (containers share the host's network namespace, so they reach it). */
export async function startReceiver(): Promise<Receiver> {
  const received: Receiver["received"] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** An 18-digit CLABE whose last three digits are `suffix` (the sandbox's outcome selector). */
function clabe(suffix: string): string {
  for (let n = 0; n < 100_000; n++) {
    const body = `0021800${String(n).padStart(8, "0")}${suffix.slice(0, 2)}`;
    const w = [3, 7, 1];
    let sum = 0;
    for (let i = 0; i < 17; i++) sum += (Number(body[i]) * w[i % 3]!) % 10;
    if (String((10 - (sum % 10)) % 10) === suffix[2]) return `${body}${(10 - (sum % 10)) % 10}`;
  }
  throw new Error("no CLABE");
}

const usdAccount = (suffix: string) => ({
  accountType: "USD_ACCOUNT",
  accountNumber: `8812345${suffix.padStart(5, "0")}`.slice(-12),
  routingNumber: "021000021",
  bankAccountType: "CHECKING",
  bankName: "Test Bank",
  beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace" },
});

export async function runSmoke(p: Api, receiver: Receiver): Promise<void> {
  const ok = (res: { status: number; body: Json }, status: number) => expect(res.status, JSON.stringify(res.body)).toBe(status);

  // The platform's endpoint and currencies; a delivered TEST proves notifications has the endpoint.
  const base = (await p.call("GET", "/config")).body.supportedCurrencies[0];
  ok(await p.call("PATCH", "/config", { webhookEndpoint: receiver.url, supportedCurrencies: ["USD", "MXN"].map((currencyCode) => ({ ...base, currencyCode })) }), 200);
  await eventually(async () => {
    const res = await p.call("POST", "/sandbox/webhooks/test");
    return res.status === 200 && res.body.response_status === 200 ? true : undefined;
  });
  const secret: string = (await p.call("GET", "/config/webhook-secret")).body.secret;
  const envelopes = () =>
    receiver.received.map(
      (r) =>
        new Webhook(secret).verify(r.body, {
          "webhook-id": String(r.headers["webhook-id"]),
          "webhook-timestamp": String(r.headers["webhook-timestamp"]),
          "webhook-signature": String(r.headers["webhook-signature"]),
        }) as { type: string; data: Json },
    );
  const webhook = (type: string, id: string) => eventually(async () => envelopes().find((e) => e.type === type && e.data.id === id));

  // A customer, verified (the sandbox approves at once).
  const created = await p.call("POST", "/customers", {
    customerType: "INDIVIDUAL",
    platformCustomerId: `smoke-${Date.now().toString(36)}`,
    fullName: "Alice Smith",
    birthDate: "1990-04-01",
    nationality: "US",
    address: { line1: "1 Main St", postalCode: "94105", country: "US", city: "San Francisco" },
    region: "US",
    email: "alice@example.com",
    currencies: ["USD"],
  });
  ok(created, 201);
  const customerId: string = created.body.id;
  if (created.body.kycStatus !== "APPROVED") {
    const v = await p.call("POST", "/verifications", { customerId });
    expect(v.status, JSON.stringify(v.body)).toBeLessThan(300);
  }
  await webhook("CUSTOMER_KYC_APPROVED", customerId);

  // Fund the platform's USD account and send a transfer out: PROCESSING, then COMPLETED.
  const platformUsd = await eventually(async () => (await p.call("GET", "/platform/internal-accounts?currency=USD")).body.data?.[0]);
  ok(await p.call("POST", `/sandbox/internal-accounts/${platformUsd.id}/fund`, { amount: 100_000 }), 200);
  const ext = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccount("000") });
  ok(ext, 201);
  const out = await p.call("POST", "/transfer-out", { source: { accountId: platformUsd.id }, destination: { accountId: ext.body.id }, amount: 2500 });
  ok(out, 201);
  await eventually(async () => ((await p.call("GET", `/transactions/${out.body.id}`)).body.status === "COMPLETED" ? true : undefined));
  expect((await webhook("OUTGOING_PAYMENT_COMPLETED", out.body.id)).data).toMatchObject({ id: out.body.id, status: "COMPLETED", receivedAmount: { amount: 2500 } });

  // The customer's own USD, paid out to a Mexican payee whose bank takes 6 sandbox minutes: it
  // completes only once the platform's sandbox clock is advanced.
  const customerUsd = await eventually(async () => {
    const res = await p.call("GET", `/customers/internal-accounts?customerId=${customerId}`);
    return (res.body.data ?? []).find((a: Json) => a.balance.currency.code === "USD");
  });
  ok(await p.call("POST", `/sandbox/internal-accounts/${customerUsd.id}/fund`, { amount: 50_000 }), 200);
  const payee = await p.call("POST", "/customers/external-accounts", { customerId, currency: "MXN", accountInfo: { accountType: "MXN_ACCOUNT", clabe: clabe("003") } });
  ok(payee, 201);
  const quote = await p.call("POST", "/quotes", {
    source: { sourceType: "ACCOUNT", accountId: customerUsd.id },
    destination: { destinationType: "ACCOUNT", accountId: payee.body.id },
    lockedCurrencySide: "SENDING",
    lockedCurrencyAmount: 10_000,
  });
  ok(quote, 201);
  ok(await p.call("POST", `/quotes/${quote.body.id}/execute`), 200);
  const txId: string = quote.body.transactionId;
  await eventually(async () => ((await p.call("GET", `/transactions/${txId}`)).body.status === "PROCESSING" ? true : undefined));
  // The sandbox schedules the payout when it handles the instruction (asynchronously), so advance
  // a minute at a time until the 6 minutes have passed on its clock after that.
  const completed = await eventually(async () => {
    ok(await p.call("POST", "/sandbox/clock/advance", { seconds: 60 }), 200);
    const t = (await p.call("GET", `/transactions/${txId}`)).body;
    return t.status === "COMPLETED" ? t : undefined;
  }, 60_000);
  expect(completed).toMatchObject({ type: "OUTGOING", quoteId: quote.body.id, receivedAmount: { currency: { code: "MXN" } } });
  expect((await webhook("OUTGOING_PAYMENT_COMPLETED", txId)).data).toMatchObject({ id: txId, status: "COMPLETED" });
}
