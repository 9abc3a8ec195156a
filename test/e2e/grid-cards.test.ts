import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E_WALLET_ENCRYPTION_KEY } from "../infra/split-setup.js";
import { newClientKeyPair, openSealed, stamp } from "../support/wallet-client.js";
import { individual, uniq } from "./customers-fixtures.js";
import { GRID, gridViolations } from "./grid-schema.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

// Issue 27, Grid parity: Grid's cards core (POST/GET/PATCH /cards, funding sources) and delegated
// keys made for a card funding source, through the public API in both run modes. A sandbox card is
// provisioned by the sandbox service over the topics (PROCESSING, then ACTIVE with a
// CARD_STATE_CHANGE webhook); a production platform has no card issuer. Every answer is checked
// against Grid's published schema (grid-schema.ts).

let sys: TestSystem;

beforeAll(async () => {
  if (skipReason()) return;
  if (mode === "embedded") process.env.CORRIDOR_WALLET_ENCRYPTION_KEY = E2E_WALLET_ENCRYPTION_KEY;
  sys = await startTestSystem();
});
afterAll(async () => {
  await sys?.stop();
});

const conforms = (schema: keyof typeof GRID, body: unknown) => expect(gridViolations(GRID[schema], body), JSON.stringify(body)).toEqual([]);

/**
 * A sandbox customer, verified (APPROVED, unless its name ends in 001: PENDING, or 002: REJECTED),
 * and its USD and wallet internal accounts once the ledger opened them (ACTIVE once APPROVED).
 */
async function customerWithAccounts(p: Caller, fullName = "Alice Smith") {
  const created = await p.call("POST", "/customers", individual({ fullName, platformCustomerId: uniq("card") }));
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const verified = await p.call("POST", "/verifications", { customerId: created.body.id });
  expect(verified.status, JSON.stringify(verified.body)).toBeLessThan(300);
  const approved = !/00[12]$/.test(fullName);
  const accounts = await eventually(async () => {
    const res = await p.call("GET", `/customers/internal-accounts?customerId=${encodeURIComponent(created.body.id)}`);
    const list = res.status === 200 ? (res.body.data as { id: string; type: string; status: string; balance: { currency: { code: string } } }[]) : [];
    const ready = (a: { status: string }) => !approved || a.status === "ACTIVE";
    const wallet = list.find((a) => a.type === "EMBEDDED_WALLET" && ready(a));
    const usd = list.find((a) => a.type !== "EMBEDDED_WALLET" && a.balance.currency.code === "USD" && ready(a));
    return wallet && usd ? { wallet: wallet.id, usd: usd.id } : undefined;
  });
  return { id: created.body.id as string, ...accounts };
}

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.code).toBe(code);
  conforms("Error", res.body);
}

async function activeCard(p: Caller, id: string) {
  return eventually(async () => {
    const res = await p.call("GET", `/cards/${id}`);
    return res.status === 200 && res.body.state === "ACTIVE" ? res.body : undefined;
  });
}

describe.skipIf(Boolean(skipReason()))("cards (Grid's cards core)", () => {
  it("issues a card PROCESSING, which the sandbox issuer makes ACTIVE with a CARD_STATE_CHANGE webhook; freeze, unfreeze, limit and close by PATCH", async () => {
    const p = await sys.createPlatform();
    const holder = await customerWithAccounts(p);
    const body = { cardholderId: holder.id, form: "VIRTUAL", fundingSources: [holder.usd, holder.wallet], maxSpendPerTransaction: 5000 };
    const key = randomUUID();
    const created = await p.call("POST", "/cards", body, { "Idempotency-Key": key });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    conforms("Card", created.body);
    expect(created.body).toMatchObject({ cardholderId: holder.id, state: "PROCESSING", stateReason: null, form: "VIRTUAL", fundingSources: [holder.usd, holder.wallet], currency: "USD", maxSpendPerTransaction: 5000 });
    expect(created.body.id).toMatch(/^Card:/);
    expect(created.body.platformCardId).toMatch(/^card-/);
    // The same Idempotency-Key and body: the first answer again, no second card.
    const replay = await p.call("POST", "/cards", body, { "Idempotency-Key": key });
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(created.body);

    const active = await activeCard(p, created.body.id);
    conforms("Card", active);
    expect(active).toMatchObject({ id: created.body.id, state: "ACTIVE", brand: "VISA", stateReason: null });
    expect(active.last4).toMatch(/^\d{4}$/);
    expect(active.expMonth).toBeGreaterThanOrEqual(1);
    expect(active.expYear).toBeGreaterThan(new Date().getUTCFullYear());
    expect(active.issuerRef).toMatch(/^sandbox_card_/);

    // The webhook: an event CARD_STATE_CHANGE whose data is the ACTIVE card.
    const activated = await eventually(async () => {
      const res = await p.call("GET", `/events?type=CARD_STATE_CHANGE&resourceId=${encodeURIComponent(created.body.id)}`);
      return res.status === 200 && res.body.data.length === 1 ? res.body.data[0] : undefined;
    });
    expect(activated.payload.type).toBe("CARD_STATE_CHANGE");
    expect(activated.payload.data).toMatchObject({ id: created.body.id, state: "ACTIVE", last4: active.last4 });
    conforms("Card", activated.payload.data);

    const frozen = await p.call("PATCH", `/cards/${created.body.id}`, { state: "FROZEN" });
    expect(frozen.status, JSON.stringify(frozen.body)).toBe(200);
    conforms("Card", frozen.body);
    expect(frozen.body.state).toBe("FROZEN");
    const unfrozen = await p.call("PATCH", `/cards/${created.body.id}`, { state: "ACTIVE", maxSpendPerTransaction: null });
    expect(unfrozen.status, JSON.stringify(unfrozen.body)).toBe(200);
    expect(unfrozen.body).toMatchObject({ state: "ACTIVE", maxSpendPerTransaction: null });
    const limited = await p.call("PATCH", `/cards/${created.body.id}`, { maxSpendPerTransaction: 2500 });
    expect(limited.body).toMatchObject({ state: "ACTIVE", maxSpendPerTransaction: 2500 });
    const states = await eventually(async () => {
      const res = await p.call("GET", `/events?type=CARD_STATE_CHANGE&resourceId=${encodeURIComponent(created.body.id)}`);
      return res.status === 200 && res.body.data.length === 3 ? res.body.data.map((e: { payload: { data: { state: string } } }) => e.payload.data.state) : undefined;
    });
    // Newest first: unfrozen, frozen, activated (a limit change is no state change).
    expect(states).toEqual(["ACTIVE", "FROZEN", "ACTIVE"]);

    const closed = await p.call("PATCH", `/cards/${created.body.id}`, { state: "CLOSED" });
    expect(closed.status, JSON.stringify(closed.body)).toBe(200);
    conforms("Card", closed.body);
    expect(closed.body).toMatchObject({ state: "CLOSED", stateReason: "CLOSED_BY_PLATFORM" });
    expectError(await p.call("PATCH", `/cards/${created.body.id}`, { state: "ACTIVE" }), 409, "CARD_NOT_MUTABLE");
    expectError(await p.call("POST", `/cards/${created.body.id}/funding-sources`, { accountId: holder.usd }), 409, "CARD_NOT_MUTABLE");
  });

  it("lists cards with Grid's filters (cardholderId, accountId, platformCardId, state), pages with a cursor and sorts", async () => {
    const p = await sys.createPlatform();
    const alice = await customerWithAccounts(p);
    const bob = await customerWithAccounts(p, "Bob Jones");
    const a1 = await p.call("POST", "/cards", { cardholderId: alice.id, form: "VIRTUAL", fundingSources: [alice.usd], platformCardId: "alice-1" });
    const a2 = await p.call("POST", "/cards", { cardholderId: alice.id, form: "VIRTUAL", fundingSources: [alice.wallet] });
    const b1 = await p.call("POST", "/cards", { cardholderId: bob.id, form: "VIRTUAL", fundingSources: [bob.wallet, bob.usd] });
    for (const c of [a1, a2, b1]) expect(c.status, JSON.stringify(c.body)).toBe(201);
    expectError(await p.call("POST", "/cards", { cardholderId: alice.id, form: "VIRTUAL", fundingSources: [alice.wallet], platformCardId: "alice-1" }), 409, "PLATFORM_CARD_ID_EXISTS");
    for (const c of [a1, a2, b1]) await activeCard(p, c.body.id);
    await p.call("PATCH", `/cards/${a2.body.id}`, { state: "FROZEN" });

    const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((c) => c.id);
    const all = await p.call("GET", "/cards");
    expect(all.status).toBe(200);
    conforms("CardListResponse", all.body);
    expect(ids(all)).toEqual([b1.body.id, a2.body.id, a1.body.id]);
    expect(all.body.totalCount).toBe(3);
    expect(ids(await p.call("GET", "/cards?sortOrder=asc"))).toEqual([a1.body.id, a2.body.id, b1.body.id]);
    expect(ids(await p.call("GET", `/cards?cardholderId=${encodeURIComponent(alice.id)}`))).toEqual([a2.body.id, a1.body.id]);
    expect(ids(await p.call("GET", `/cards?accountId=${encodeURIComponent(bob.usd)}`))).toEqual([b1.body.id]);
    expect(ids(await p.call("GET", "/cards?platformCardId=alice-1"))).toEqual([a1.body.id]);
    expect(ids(await p.call("GET", "/cards?state=FROZEN"))).toEqual([a2.body.id]);
    expect(ids(await p.call("GET", `/cards?state=ACTIVE&cardholderId=${encodeURIComponent(alice.id)}`))).toEqual([a1.body.id]);
    const page1 = await p.call("GET", "/cards?limit=2");
    conforms("CardListResponse", page1.body);
    expect(page1.body).toMatchObject({ hasMore: true, totalCount: 3 });
    const page2 = await p.call("GET", `/cards?limit=2&cursor=${encodeURIComponent(page1.body.nextCursor)}`);
    expect(page2.body.hasMore).toBe(false);
    expect([...ids(page1), ...ids(page2)]).toEqual(ids(all));
    expectError(await p.call("GET", "/cards?state=PENDING"), 400, "INVALID_INPUT");
    expectError(await p.call("GET", "/cards?cursor=not-a-cursor"), 400, "INVALID_INPUT");
    // Another platform sees none of them.
    const other = await sys.createPlatform();
    expect((await other.call("GET", "/cards")).body.data).toEqual([]);
  });

  it("binds and unbinds funding sources: Grid's CardFundingSource, PENDING_AUTH for a wallet, the last one stays", async () => {
    const p = await sys.createPlatform();
    const holder = await customerWithAccounts(p);
    const card = await p.call("POST", "/cards", { cardholderId: holder.id, form: "VIRTUAL", fundingSources: [holder.usd] });
    expect(card.status, JSON.stringify(card.body)).toBe(201);
    const listed = await p.call("GET", `/cards/${card.body.id}/funding-sources`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    conforms("CardFundingSource", listed.body.data[0]);
    expect(listed.body.data[0]).toMatchObject({ internalAccountId: holder.usd, status: "ACTIVE", priority: 1, cardId: card.body.id });

    const added = await p.call("POST", `/cards/${card.body.id}/funding-sources`, { accountId: holder.wallet });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    conforms("CardFundingSource", added.body);
    expect(added.body).toMatchObject({ internalAccountId: holder.wallet, status: "PENDING_AUTH", priority: 2 });
    expect(added.body.id).toMatch(/^CardFundingSource:/);
    expect((await p.call("GET", `/cards/${card.body.id}`)).body.fundingSources).toEqual([holder.usd, holder.wallet]);
    expectError(await p.call("POST", `/cards/${card.body.id}/funding-sources`, { accountId: holder.wallet }), 400, "FUNDING_SOURCE_INELIGIBLE");

    expect((await p.call("DELETE", `/cards/${card.body.id}/funding-sources/${holder.usd}`)).status).toBe(204);
    expect((await p.call("GET", `/cards/${card.body.id}`)).body.fundingSources).toEqual([holder.wallet]);
    expectError(await p.call("DELETE", `/cards/${card.body.id}/funding-sources/${holder.wallet}`), 409, "LAST_FUNDING_SOURCE");
    expectError(await p.call("DELETE", `/cards/${card.body.id}/funding-sources/${holder.usd}`), 404, "CARD_FUNDING_SOURCE_NOT_FOUND");
  });

  it("refuses a cardholder whose KYC is not APPROVED, an ineligible source, bad input, other platforms' ids, and a production platform", async () => {
    const p = await sys.createPlatform();
    const holder = await customerWithAccounts(p);
    const pending = await customerWithAccounts(p, "Pat Pending 001");
    expectError(await p.call("POST", "/cards", { cardholderId: pending.id, form: "VIRTUAL", fundingSources: [pending.usd] }), 400, "CARDHOLDER_KYC_NOT_APPROVED");
    // Another customer's account, an account of no one, and the platform's own account: ineligible alike.
    const ineligible = await p.call("POST", "/cards", { cardholderId: holder.id, form: "VIRTUAL", fundingSources: [holder.usd, pending.wallet] });
    expectError(ineligible, 400, "FUNDING_SOURCE_INELIGIBLE");
    expect(ineligible.body.details.accountId).toBe(pending.wallet);
    expectError(await p.call("POST", "/cards", { cardholderId: holder.id, form: "VIRTUAL", fundingSources: ["InternalAccount:00000000-0000-7000-8000-000000000000"] }), 400, "FUNDING_SOURCE_INELIGIBLE");
    expectError(await p.call("POST", "/cards", { cardholderId: "Customer:00000000-0000-7000-8000-000000000000", form: "VIRTUAL", fundingSources: [holder.usd] }), 404, "USER_NOT_FOUND");
    // Bad input: the error shape, with the fields named.
    const bad = await p.call("POST", "/cards", { cardholderId: holder.id, form: "PHYSICAL", fundingSources: [] });
    expectError(bad, 400, "INVALID_INPUT");
    expect(bad.body.details.errors.length).toBeGreaterThan(0);
    expectError(await p.call("POST", "/cards", { cardholderId: holder.id, form: "VIRTUAL", fundingSources: [holder.usd, holder.usd] }), 400, "INVALID_INPUT");
    expectError(await p.call("POST", "/cards", { cardholderId: holder.id, form: "VIRTUAL", fundingSources: [holder.usd], maxSpendPerTransaction: 0 }), 400, "INVALID_INPUT");
    expectError(await p.call("GET", "/cards/not-a-card"), 404, "NOT_FOUND");

    const card = await p.call("POST", "/cards", { cardholderId: holder.id, form: "VIRTUAL", fundingSources: [holder.usd] });
    expect(card.status).toBe(201);
    expectError(await p.call("PATCH", `/cards/${card.body.id}`, {}), 400, "INVALID_INPUT");
    expectError(await p.call("PATCH", `/cards/${card.body.id}`, { state: "PROCESSING" }), 400, "INVALID_INPUT");
    const other = await sys.createPlatform();
    expectError(await other.call("GET", `/cards/${card.body.id}`), 404, "CARD_NOT_FOUND");
    expectError(await other.call("PATCH", `/cards/${card.body.id}`, { state: "FROZEN" }), 404, "CARD_NOT_FOUND");
    expectError(await other.call("GET", `/cards/${card.body.id}/funding-sources`), 404, "CARD_NOT_FOUND");
    expectError(await other.call("POST", `/cards/${card.body.id}/funding-sources`, { accountId: holder.wallet }), 404, "CARD_NOT_FOUND");
    expectError(await other.call("DELETE", `/cards/${card.body.id}/funding-sources/${holder.usd}`), 404, "CARD_NOT_FOUND");
    expectError(await p.call("GET", "/cards/Card:00000000-0000-7000-8000-000000000000"), 404, "CARD_NOT_FOUND");

    // Production: no card issuer, named in a 4xx (not a 501).
    const production = await sys.createPlatform({ environment: "PRODUCTION" });
    const prodHolder = await production.call("POST", "/customers", individual({ platformCustomerId: uniq("prod") }));
    const refused = await production.call("POST", "/cards", { cardholderId: prodHolder.body.id, form: "VIRTUAL", fundingSources: ["InternalAccount:00000000-0000-7000-8000-000000000000"] });
    expectError(refused, 400, "CARD_ISSUER_NOT_CONFIGURED");
    expect(refused.body.message).toMatch(/card issuer/);
    expect((await production.call("GET", "/cards")).body).toMatchObject({ data: [], hasMore: false });
  });
});

describe.skipIf(Boolean(skipReason()))("delegated keys for a card funding source (Grid's DelegatedKey)", () => {
  const signedBy = (key: Uint8Array, c: { payloadToSign: string; requestId: string }) => ({ "Request-Id": c.requestId, "Service-Wallet-Signature": stamp(c.payloadToSign, key) });

  it("creates the key in three signed legs for the wallet's funding source: cardId and accountId derived, the source ACTIVE while the key is", async () => {
    const p = await sys.createPlatform();
    const holder = await customerWithAccounts(p);
    const credential = await p.call("POST", "/auth/credentials", { type: "EMAIL_OTP", accountId: holder.wallet, email: `${uniq("dk")}@example.com` });
    expect(credential.status, JSON.stringify(credential.body)).toBe(201);
    const client = newClientKeyPair();
    const session = await p.call("POST", `/auth/credentials/${credential.body.id}/verify`, { type: "EMAIL_OTP", otp: "000000", clientPublicKey: client.clientPublicKey });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    const key = await openSealed(session.body.encryptedSessionSigningKey, client);

    const card = await p.call("POST", "/cards", { cardholderId: holder.id, form: "VIRTUAL", fundingSources: [holder.wallet, holder.usd] });
    expect(card.status, JSON.stringify(card.body)).toBe(201);
    const sources = (await p.call("GET", `/cards/${card.body.id}/funding-sources`)).body.data as { id: string; internalAccountId: string; status: string }[];
    const walletSource = sources.find((s) => s.internalAccountId === holder.wallet)!;
    const usdSource = sources.find((s) => s.internalAccountId === holder.usd)!;
    expect(walletSource.status).toBe("PENDING_AUTH");

    const body = { fundingSourceId: walletSource.id, nickname: "Card payments key" };
    const leg1 = await p.call("POST", "/auth/delegated-keys", body);
    expect(leg1.status, JSON.stringify(leg1.body)).toBe(202);
    const unsigned = await p.call("POST", "/auth/delegated-keys", body, { "Request-Id": leg1.body.requestId });
    expectError(unsigned, 401, "WALLET_SIGNATURE_MISSING");
    const leg2 = await p.call("POST", "/auth/delegated-keys", body, signedBy(key, leg1.body));
    expect(leg2.status, JSON.stringify(leg2.body)).toBe(202);
    for (const leg of [leg1, leg2]) conforms("SignedRequestChallenge", leg.body);
    expect(leg2.body.requestId).not.toBe(leg1.body.requestId);
    // PENDING after the second leg: already Grid's DelegatedKey, with its card.
    const pending = await p.call("GET", `/auth/delegated-keys?fundingSourceId=${encodeURIComponent(walletSource.id)}`);
    expect(pending.body.data).toHaveLength(1);
    conforms("DelegatedKey", pending.body.data[0]);
    expect(pending.body.data[0]).toMatchObject({ status: "PENDING", cardId: card.body.id, accountId: holder.wallet });
    expect(pending.body.data[0].publicKey).toMatch(/^0[23][0-9a-f]{64}$/);
    const leg3 = await p.call("POST", "/auth/delegated-keys", body, signedBy(key, leg2.body));
    expect(leg3.status, JSON.stringify(leg3.body)).toBe(201);
    conforms("DelegatedKey", leg3.body);
    expect(leg3.body).toMatchObject({ id: pending.body.data[0].id, cardId: card.body.id, accountId: holder.wallet, fundingSourceId: walletSource.id, nickname: "Card payments key", status: "ACTIVE" });
    expect(Object.keys(leg3.body).sort()).toEqual(["accountId", "cardId", "createdAt", "fundingSourceId", "id", "nickname", "publicKey", "status", "updatedAt"]);
    expectError(await p.call("POST", "/auth/delegated-keys", body), 409, "DELEGATED_KEY_EXISTS");

    const shown = await p.call("GET", `/auth/delegated-keys/${leg3.body.id}`);
    conforms("DelegatedKey", shown.body);
    expect(shown.body).toEqual(leg3.body);
    for (const q of [`fundingSourceId=${encodeURIComponent(walletSource.id)}`, `accountId=${encodeURIComponent(holder.wallet)}`]) {
      const listed = await p.call("GET", `/auth/delegated-keys?${q}`);
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((k: { id: string }) => k.id)).toEqual([leg3.body.id]);
      for (const k of listed.body.data) conforms("DelegatedKey", k);
    }
    expectError(await p.call("GET", "/auth/delegated-keys"), 400, "INVALID_INPUT");
    // The source follows the key through auth-sessions' DelegatedKeyChanged event (outbox, then the
    // ledger's consumer): ACTIVE shortly after the key is.
    const sourceStatus = async () => (await p.call("GET", `/cards/${card.body.id}/funding-sources`)).body.data.find((s: { id: string }) => s.id === walletSource.id).status as string;
    const becomes = (status: string) => eventually(async () => ((await sourceStatus()) === status ? status : undefined));
    expect(await becomes("ACTIVE")).toBe("ACTIVE");

    // A USD source takes no key; an unknown or another platform's source is 404; the old body is refused.
    expectError(await p.call("POST", "/auth/delegated-keys", { fundingSourceId: usdSource.id, nickname: "x" }), 400, "FUNDING_SOURCE_INELIGIBLE");
    expectError(await p.call("POST", "/auth/delegated-keys", { fundingSourceId: "CardFundingSource:00000000-0000-7000-8000-000000000000", nickname: "x" }), 404, "CARD_FUNDING_SOURCE_NOT_FOUND");
    const other = await sys.createPlatform();
    expectError(await other.call("POST", "/auth/delegated-keys", body), 404, "CARD_FUNDING_SOURCE_NOT_FOUND");
    expectError(await other.call("GET", `/auth/delegated-keys/${leg3.body.id}`), 404, "DELEGATED_KEY_NOT_FOUND");
    expectError(await other.call("DELETE", `/auth/delegated-keys/${leg3.body.id}`), 404, "DELEGATED_KEY_NOT_FOUND");
    expectError(await p.call("POST", "/auth/delegated-keys", { internalAccountId: holder.wallet, nickname: "x" }), 400, "INVALID_INPUT");

    expect((await p.call("DELETE", `/auth/delegated-keys/${leg3.body.id}`)).status).toBe(204);
    const revoked = await p.call("GET", `/auth/delegated-keys/${leg3.body.id}`);
    expect(revoked.body.status).toBe("REVOKED");
    conforms("DelegatedKey", revoked.body);
    expectError(await p.call("DELETE", `/auth/delegated-keys/${leg3.body.id}`), 400, "DELEGATED_KEY_NOT_ACTIVE");
    // Revoked, a new key may be made.
    expect((await p.call("POST", "/auth/delegated-keys", body)).status).toBe(202);
    expect(await becomes("PENDING_AUTH")).toBe("PENDING_AUTH");
  });
});
