import { AppError, ManualClock } from "@corridor/kit";
import { describe, expect, it } from "vitest";
import { createCards, fundingSourceStatus, type CardAccount, type CardRow, type CardStore, type CardTx, type DelegatedKeyCopy, type FundingSourceRow } from "../src/domain/cards.js";
import type { Directory } from "../src/domain/ports.js";

// The card rules (domain/cards.ts) over an in-memory store: what the end-to-end suite cannot reach
// in time (a PROCESSING card, replays of the issuer's answer) and what it checks only in part.

function memoryStore(accounts: Record<string, CardAccount>) {
  const cards = new Map<string, CardRow>();
  const sources: FundingSourceRow[] = [];
  const stateEvents: { id: string; from: string; to: string }[] = [];
  const issuance: string[] = [];
  const keys = new Map<string, DelegatedKeyCopy>();
  const bound = (cardId: string) => sources.filter((s) => s.card_id === cardId && !s.removed_at).sort((a, b) => a.priority - b.priority);
  const tx: CardTx = {
    account: async (_p, id) => accounts[id],
    card: async (p, id) => (cards.get(id)?.platform_id === p ? { ...cards.get(id)! } : undefined),
    cardByPlatformCardId: async (p, pc) => [...cards.values()].find((c) => c.platform_id === p && c.platform_card_id === pc),
    insertCard: async (row) => void cards.set(row.id, { ...row }),
    updateCard: async (id, patch) => {
      const next = { ...cards.get(id)!, ...patch } as CardRow;
      cards.set(id, next);
      return { ...next };
    },
    sources: async (cardId) => bound(cardId),
    sourcesOf: async (ids) => new Map(ids.map((id) => [id, bound(id)])),
    source: async (p, id) => sources.find((s) => s.platform_id === p && s.id === id),
    insertSource: async (row) => void sources.push({ ...row, delegated: false, account_type: accounts[row.account_id]?.type ?? "" }),
    removeSource: async (id, at) => void Object.assign(sources.find((s) => s.id === id)!, { removed_at: at }),
    setDelegated: async (p, id, delegated) => {
      const s = sources.find((x) => x.platform_id === p && x.id === id);
      if (s) s.delegated = delegated;
      return !!s;
    },
    delegatedKey: async (id) => (keys.has(id) ? { ...keys.get(id)! } : undefined),
    putDelegatedKey: async (copy) => void keys.set(copy.key_id, { ...copy }),
    activeDelegatedKeys: async (sourceId) => [...keys.values()].filter((k) => k.funding_source_id === sourceId && k.status === "ACTIVE").length,
    list: async () => ({ rows: [...cards.values()], hasMore: false, total: cards.size }),
    emitStateChanged: async (v, from) => void stateEvents.push({ id: v.card.id, from, to: v.card.state }),
    requestIssuance: async (card) => void issuance.push(card.id),
  };
  const store: CardStore = { transaction: (fn) => fn(tx), within: () => tx };
  return { store, stateEvents, issuance };
}

const account = (customerId: string, type = "EMBEDDED_WALLET", currency = "USDC", status = "ACTIVE"): CardAccount => ({ id: "", customer_id: customerId, owner_kind: "CUSTOMER", type, currency, status });

function setup(env: "SANDBOX" | "PRODUCTION" = "SANDBOX", kyc = "APPROVED") {
  const accounts = {
    "InternalAccount:w": account("Customer:c"),
    "InternalAccount:u": account("Customer:c", "INTERNAL_FIAT", "USD"),
    "InternalAccount:e": account("Customer:c", "INTERNAL_FIAT", "EUR"),
    "InternalAccount:x": account("Customer:other"),
  };
  const mem = memoryStore(accounts);
  const directory: Directory = {
    environment: async () => env,
    customer: async () => ({ platformCustomerId: "c", verificationStatus: kyc, isDeleted: false }),
    transactionTypes: async () => undefined,
  };
  const cards = createCards({ store: mem.store, clock: new ManualClock(new Date("2026-11-28T10:00:00Z")), directory });
  return { cards, ...mem };
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
  throw new Error("expected a refusal");
}

const create = (cards: ReturnType<typeof setup>["cards"], fundingSources = ["InternalAccount:w"]) =>
  cards.createCard("Platform:p", { cardholderId: "Customer:c", form: "VIRTUAL", fundingSources });

describe("cards (domain)", () => {
  it("creates a PROCESSING card and asks the issuer; the issuer's answer makes it ACTIVE once, with a state-change event", async () => {
    const { cards, issuance, stateEvents } = setup();
    const v = await create(cards, ["InternalAccount:u", "InternalAccount:w"]);
    expect(v.card).toMatchObject({ state: "PROCESSING", currency: "USD", last4: "" });
    expect(v.sources.map((s) => s.account_id)).toEqual(["InternalAccount:u", "InternalAccount:w"]);
    expect(issuance).toEqual([v.card.id]);
    // A PROCESSING card is not frozen, nor closed, by PATCH.
    expect(await refusal(cards.updateCard("Platform:p", v.card.id, { state: "FROZEN" }))).toBe("INVALID_STATE_TRANSITION");
    expect(await refusal(cards.updateCard("Platform:p", v.card.id, { state: "CLOSED" }))).toBe("INVALID_STATE_TRANSITION");
    const issued = { cardId: v.card.id, brand: "VISA", last4: "4242", expMonth: 11, expYear: 2029, issuerRef: "r" };
    expect(await cards.onCardIssued(null, "Platform:p", issued, new Date())).toBe("applied");
    expect(await cards.onCardIssued(null, "Platform:p", issued, new Date())).toBe("ignored");
    expect(await cards.onCardIssued(null, "Platform:other", issued, new Date())).toBe("ignored");
    expect(stateEvents).toEqual([{ id: v.card.id, from: "PROCESSING", to: "ACTIVE" }]);
    expect((await cards.getCard("Platform:p", v.card.id)).card).toMatchObject({ state: "ACTIVE", last4: "4242" });
    // Closed, the card never changes again, and the issuer's late answer for a closed card changes nothing.
    await cards.updateCard("Platform:p", v.card.id, { state: "CLOSED" });
    expect(await refusal(cards.updateCard("Platform:p", v.card.id, { maxSpendPerTransaction: 5n }))).toBe("CARD_NOT_MUTABLE");
    expect(stateEvents.map((e) => e.to)).toEqual(["ACTIVE", "CLOSED"]);
  });

  it("refuses production, an unapproved cardholder and ineligible sources before storing anything", async () => {
    const prod = setup("PRODUCTION");
    expect(await refusal(create(prod.cards))).toBe("CARD_ISSUER_NOT_CONFIGURED");
    expect(prod.issuance).toEqual([]);
    expect(await refusal(create(setup("SANDBOX", "PENDING").cards))).toBe("CARDHOLDER_KYC_NOT_APPROVED");
    const { cards, issuance } = setup();
    for (const bad of ["InternalAccount:x", "InternalAccount:e", "InternalAccount:none"]) expect(await refusal(create(cards, [bad]))).toBe("FUNDING_SOURCE_INELIGIBLE");
    expect(await refusal(create(cards, []))).toBe("INVALID_INPUT");
    expect(issuance).toEqual([]);
  });

  it("answers a funding source's status: a wallet is PENDING_AUTH until a delegated key signs for it, INACTIVE once unbound", async () => {
    const { cards } = setup();
    const v = await create(cards, ["InternalAccount:u", "InternalAccount:w"]);
    const wallet = v.sources.find((s) => s.account_id === "InternalAccount:w")!;
    const usd = v.sources.find((s) => s.account_id === "InternalAccount:u")!;
    expect([fundingSourceStatus(usd), fundingSourceStatus(wallet)]).toEqual(["ACTIVE", "PENDING_AUTH"]);
    await cards.onDelegatedKeyChanged(null, "Platform:p", { keyId: "DelegatedKey:1", fundingSourceId: wallet.id, status: "ACTIVE", at: new Date() });
    expect(fundingSourceStatus((await cards.getFundingSource("Platform:p", wallet.id)).source)).toBe("ACTIVE");
    await cards.removeFundingSource("Platform:p", v.card.id, "InternalAccount:w");
    expect(fundingSourceStatus((await cards.getFundingSource("Platform:p", wallet.id)).source)).toBe("INACTIVE");
    expect(await refusal(cards.removeFundingSource("Platform:p", v.card.id, "InternalAccount:u"))).toBe("LAST_FUNDING_SOURCE");
  });

  it("follows auth-sessions' delegated keys: a source is ACTIVE while one of its keys is; a stale, repeated or foreign change is ignored", async () => {
    const { cards } = setup();
    const v = await create(cards, ["InternalAccount:u", "InternalAccount:w"]);
    const wallet = v.sources.find((s) => s.account_id === "InternalAccount:w")!;
    const status = async () => fundingSourceStatus((await cards.getFundingSource("Platform:p", wallet.id)).source);
    const change = (keyId: string, s: string, platformId = "Platform:p", fundingSourceId = wallet.id) =>
      cards.onDelegatedKeyChanged(null, platformId, { keyId, fundingSourceId, status: s, at: new Date("2026-11-28T10:01:00Z") });

    expect(await change("DelegatedKey:1", "ACTIVE")).toBe("applied");
    expect(await status()).toBe("ACTIVE");
    expect(await change("DelegatedKey:1", "ACTIVE")).toBe("ignored");
    expect(await change("DelegatedKey:1", "REVOKED")).toBe("applied");
    expect(await status()).toBe("PENDING_AUTH");
    // The key's activation delivered again after its revocation (older): the source stays PENDING_AUTH.
    expect(await change("DelegatedKey:1", "ACTIVE")).toBe("ignored");
    expect(await status()).toBe("PENDING_AUTH");
    // A revocation that overtook its activation: the late activation changes nothing.
    expect(await change("DelegatedKey:2", "REVOKED")).toBe("applied");
    expect(await change("DelegatedKey:2", "ACTIVE")).toBe("ignored");
    expect(await status()).toBe("PENDING_AUTH");
    // A new key: ACTIVE again; the earlier key's late revocation does not undo it.
    expect(await change("DelegatedKey:3", "ACTIVE")).toBe("applied");
    expect(await change("DelegatedKey:1", "REVOKED")).toBe("ignored");
    expect(await status()).toBe("ACTIVE");
    // Another platform's or an unknown source, or a status the ledger does not know: nothing.
    expect(await change("DelegatedKey:4", "REVOKED", "Platform:other")).toBe("ignored");
    expect(await change("DelegatedKey:4", "ACTIVE", "Platform:p", "CardFundingSource:none")).toBe("ignored");
    expect(await change("DelegatedKey:3", "DELETED")).toBe("ignored");
    expect(await status()).toBe("ACTIVE");
  });
});
