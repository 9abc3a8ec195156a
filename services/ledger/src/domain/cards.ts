import { errors, newId, pageSize, type Clock, type FieldError } from "@corridor/kit";
import type { Directory } from "./ports.js";

/**
 * Cards (Grid's /cards, issue 27): a VIRTUAL card issued to a KYC-approved customer and bound to
 * internal accounts of that customer (its funding sources, in priority order). The ledger owns it
 * because it owns the accounts a card binds.
 *
 * Lifecycle: PROCESSING at creation, while the platform's card issuer provisions it; ACTIVE once the
 * issuer answers (sandbox: the sandbox service, asked on corridor.cards.issuance.v1, answers on
 * corridor.sandbox.v1); then ACTIVE ⇄ FROZEN and ACTIVE | FROZEN → CLOSED (terminal) by PATCH.
 * Every state change emits CARD_STATE_CHANGE (Grid's CARD.STATE_CHANGE) with the card. A production
 * platform has no card issuer in Corridor: creating a card is a 400 CARD_ISSUER_NOT_CONFIGURED.
 *
 * Card transactions, authorization decisioning, PIN, reveal and tokenization are not served: nothing
 * here moves money.
 */

export type CardState = "PROCESSING" | "ACTIVE" | "FROZEN" | "CLOSED";
export const CARD_STATES: readonly CardState[] = ["PROCESSING", "ACTIVE", "FROZEN", "CLOSED"];
/** The currency every card transacts in (Grid's USD cards). */
export const CARD_CURRENCY = "USD";
/** The account currencies a card can be funded from: USD, and the embedded wallet's USDC at 1:1 (as Grid funds USD cards from USDB). */
export const CARD_CURRENCIES: readonly string[] = ["USD", "USDC"];
/** The card forms served (Grid's v1: VIRTUAL only). */
export const CARD_FORMS: readonly string[] = ["VIRTUAL"];
/** At most this many funding sources on one card. */
export const MAX_FUNDING_SOURCES = 10;

export interface CardRow {
  id: string;
  platform_id: string;
  cardholder_id: string;
  platform_card_id: string;
  state: string;
  state_reason: string;
  form: string;
  currency: string;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  issuer_ref: string;
  max_spend_per_transaction: bigint | null;
  created_at: Date;
  updated_at: Date;
}

export interface FundingSourceRow {
  id: string;
  platform_id: string;
  card_id: string;
  account_id: string;
  priority: number;
  created_at: Date;
  updated_at: Date;
  removed_at: Date | null;
  /** Whether an ACTIVE delegated key signs for it (from auth-sessions' DelegatedKeyChanged events). */
  delegated: boolean;
  /** The bound account's type (joined). */
  account_type: string;
}

/** A card with its bound (not removed) funding sources, by priority. */
export interface CardView {
  card: CardRow;
  sources: FundingSourceRow[];
}

/** What the card rules need of an internal account. */
export interface CardAccount {
  id: string;
  customer_id: string | null;
  owner_kind: string;
  type: string;
  currency: string;
  status: string;
}

export interface CardFilter {
  cardholderId?: string;
  accountId?: string;
  platformCardId?: string;
  state?: string;
  ascending: boolean;
}

/** Statements bound to one transaction (data/cards.ts); the events go out through the outbox in it. */
export interface CardTx {
  account(platformId: string, accountId: string): Promise<CardAccount | undefined>;
  card(platformId: string, cardId: string, opts?: { forUpdate?: boolean }): Promise<CardRow | undefined>;
  cardByPlatformCardId(platformId: string, platformCardId: string): Promise<CardRow | undefined>;
  insertCard(row: CardRow): Promise<void>;
  updateCard(cardId: string, patch: Partial<Omit<CardRow, "id" | "platform_id">>): Promise<CardRow>;
  /** The card's bound sources, by priority then creation. */
  sources(cardId: string): Promise<FundingSourceRow[]>;
  sourcesOf(cardIds: string[]): Promise<Map<string, FundingSourceRow[]>>;
  /** One source by id, bound or removed; with `forUpdate`, locked until the transaction ends. */
  source(platformId: string, id: string, opts?: { forUpdate?: boolean }): Promise<FundingSourceRow | undefined>;
  insertSource(row: Omit<FundingSourceRow, "account_type" | "delegated">): Promise<void>;
  removeSource(id: string, at: Date): Promise<void>;
  setDelegated(platformId: string, id: string, delegated: boolean, at: Date): Promise<boolean>;
  /** The ledger's copy of a delegated key (auth-sessions'), if it heard of it. */
  delegatedKey(keyId: string): Promise<DelegatedKeyCopy | undefined>;
  /** Inserts or overwrites the copy of a delegated key. */
  putDelegatedKey(copy: DelegatedKeyCopy): Promise<void>;
  /** How many copies of keys made for the source are ACTIVE. */
  activeDelegatedKeys(fundingSourceId: string): Promise<number>;
  list(platformId: string, filter: CardFilter, page: { limit: number; cursor?: string }): Promise<{ rows: CardRow[]; hasMore: boolean; nextCursor?: string; total: number }>;
  /** CARD_STATE_CHANGE (a LedgerEvent on corridor.ledger.accounts.v1, key card id). */
  emitStateChanged(view: CardView, previousState: string, at: Date): Promise<void>;
  /** Asks the platform's card issuer to provision the card (corridor.cards.issuance.v1). */
  requestIssuance(card: CardRow, environment: string, at: Date): Promise<void>;
}

/** The ledger's copy of one delegated key of a card funding source (table card_delegated_keys). */
export interface DelegatedKeyCopy {
  key_id: string;
  platform_id: string;
  funding_source_id: string;
  status: DelegatedKeyStatus;
  /** The key's updatedAt as auth-sessions reported it. */
  updated_at: Date;
}

export type DelegatedKeyStatus = "PENDING" | "ACTIVE" | "REVOKED";
/** A delegated key's statuses in the only order it takes them (auth-sessions never moves one back). */
const KEY_STATUS_RANK: Record<DelegatedKeyStatus, number> = { PENDING: 0, ACTIVE: 1, REVOKED: 2 };

/** What auth-sessions reports of a delegated key (PlatformEvent DelegatedKeyChanged). */
export interface DelegatedKeyChange {
  keyId: string;
  fundingSourceId: string;
  status: string;
  at: Date;
}

export interface CardStore {
  transaction<T>(fn: (tx: CardTx) => Promise<T>): Promise<T>;
  /** Binds to a transaction the caller holds (a consumer's inbox transaction). */
  within(trx: unknown): CardTx;
}

export interface CreateCardInput {
  cardholderId: string;
  platformCardId?: string;
  form: string;
  fundingSources: string[];
  maxSpendPerTransaction?: bigint;
}

export interface UpdateCardInput {
  state?: string;
  /** undefined: unchanged; null: removed. */
  maxSpendPerTransaction?: bigint | null;
}

export interface IssuedCard {
  cardId: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  issuerRef: string;
}

/** The public status of a binding (Grid's CardFundingSourceStatus). */
export function fundingSourceStatus(s: FundingSourceRow): "ACTIVE" | "PENDING_AUTH" | "INACTIVE" {
  if (s.removed_at) return "INACTIVE";
  // An embedded wallet needs its owner's delegated key before a card can draw on it (Grid).
  if (s.account_type === "EMBEDDED_WALLET" && !s.delegated) return "PENDING_AUTH";
  return "ACTIVE";
}

const ineligible = (accountId: string, why: string) =>
  errors.badRequest("FUNDING_SOURCE_INELIGIBLE", `Internal account ${accountId} cannot fund this card: ${why}`, { accountId, reason: why });

const MUTABLE_STATES: Record<string, readonly string[]> = {
  ACTIVE: ["FROZEN", "CLOSED"],
  FROZEN: ["ACTIVE", "CLOSED"],
};

const ID_RE = /^[A-Za-z]+:[0-9A-Za-z-]{1,64}$/;

export function createCards(deps: { store: CardStore; clock: Clock; directory: Directory }) {
  const { store, clock, directory } = deps;

  async function cardOf(tx: CardTx, platformId: string, cardId: string, forUpdate = false): Promise<CardRow> {
    const card = cardId ? await tx.card(platformId, cardId, { forUpdate }) : undefined;
    if (!card) throw errors.notFound("Card", cardId);
    return card;
  }

  /** Why the account cannot fund a card of `cardholderId` (undefined: it can). */
  function refusal(account: CardAccount | undefined, cardholderId: string): string | undefined {
    // Unknown and other platforms' ids read the same as another customer's: nothing leaks.
    if (!account || account.owner_kind !== "CUSTOMER" || account.customer_id !== cardholderId) return "it is not an internal account of the cardholder";
    if (!CARD_CURRENCIES.includes(account.currency)) return `its currency ${account.currency} is not card-eligible (${CARD_CURRENCIES.join(", ")})`;
    if (account.status !== "ACTIVE") return `it is ${account.status}, not ACTIVE`;
    return undefined;
  }

  async function view(tx: CardTx, card: CardRow): Promise<CardView> {
    return { card, sources: await tx.sources(card.id) };
  }

  return {
    async createCard(platformId: string, input: CreateCardInput): Promise<CardView> {
      const fields: FieldError[] = [];
      if (!input.cardholderId) fields.push({ field: "cardholderId", reason: "is required" });
      else if (!ID_RE.test(input.cardholderId)) fields.push({ field: "cardholderId", reason: "must be a Customer id" });
      if (!CARD_FORMS.includes(input.form)) fields.push({ field: "form", reason: `must be one of ${CARD_FORMS.join(", ")}` });
      if (input.fundingSources.length < 1) fields.push({ field: "fundingSources", reason: "must name at least one internal account" });
      if (input.fundingSources.length > MAX_FUNDING_SOURCES) fields.push({ field: "fundingSources", reason: `must name at most ${MAX_FUNDING_SOURCES} internal accounts` });
      if (new Set(input.fundingSources).size !== input.fundingSources.length) fields.push({ field: "fundingSources", reason: "must not name an account twice" });
      if (input.platformCardId !== undefined && (input.platformCardId.trim() === "" || input.platformCardId.length > 256)) fields.push({ field: "platformCardId", reason: "must be 1 to 256 characters" });
      if (input.maxSpendPerTransaction !== undefined && input.maxSpendPerTransaction < 1n) fields.push({ field: "maxSpendPerTransaction", reason: "must be a positive integer (minor units)" });
      if (fields.length) throw errors.invalidInput(fields);

      // Production platforms: Corridor has no card issuer to provision with.
      const environment = await directory.environment(platformId);
      if (environment !== "SANDBOX") {
        throw errors.badRequest(
          "CARD_ISSUER_NOT_CONFIGURED",
          "No card issuer serves this production platform: Corridor issues cards only through its sandbox issuer (docs/cards.md)",
          { environment, missing: "card issuer" },
        );
      }
      const holder = await directory.customer(platformId, input.cardholderId);
      if (holder.isDeleted) throw errors.notFound("Customer", input.cardholderId);
      if (holder.verificationStatus !== "APPROVED") {
        throw errors.badRequest("CARDHOLDER_KYC_NOT_APPROVED", `The cardholder's KYC status is ${holder.verificationStatus || "UNVERIFIED"}; a card is issued only to an APPROVED customer`, {
          cardholderId: input.cardholderId,
          kycStatus: holder.verificationStatus || "UNVERIFIED",
        });
      }
      const now = clock.now();
      return store.transaction(async (tx) => {
        for (const accountId of input.fundingSources) {
          const why = refusal(await tx.account(platformId, accountId), input.cardholderId);
          if (why) throw ineligible(accountId, why);
        }
        const platformCardId = input.platformCardId ?? `card-${newId("Card").slice("Card:".length)}`;
        if (await tx.cardByPlatformCardId(platformId, platformCardId)) {
          throw errors.conflict("PLATFORM_CARD_ID_EXISTS", `The platform already has a card with platformCardId ${platformCardId}`, { platformCardId });
        }
        const card: CardRow = {
          id: newId("Card"),
          platform_id: platformId,
          cardholder_id: input.cardholderId,
          platform_card_id: platformCardId,
          state: "PROCESSING",
          state_reason: "",
          form: input.form,
          currency: CARD_CURRENCY,
          brand: "",
          last4: "",
          exp_month: 0,
          exp_year: 0,
          issuer_ref: "",
          max_spend_per_transaction: input.maxSpendPerTransaction ?? null,
          created_at: now,
          updated_at: now,
        };
        await tx.insertCard(card);
        let priority = 0;
        for (const accountId of input.fundingSources) {
          priority += 1;
          await tx.insertSource({ id: newId("CardFundingSource"), platform_id: platformId, card_id: card.id, account_id: accountId, priority, created_at: now, updated_at: now, removed_at: null });
        }
        await tx.requestIssuance(card, environment, now);
        return view(tx, card);
      });
    },

    async listCards(platformId: string, filter: CardFilter, page: { limit?: number; cursor?: string }) {
      if (filter.state && !CARD_STATES.includes(filter.state as CardState)) {
        throw errors.invalidInput([{ field: "state", reason: `must be one of ${CARD_STATES.join(", ")}` }]);
      }
      const limit = pageSize(page.limit);
      return store.transaction(async (tx) => {
        const res = await tx.list(platformId, filter, { limit, cursor: page.cursor || undefined });
        const sources = await tx.sourcesOf(res.rows.map((r) => r.id));
        return { views: res.rows.map((card) => ({ card, sources: sources.get(card.id) ?? [] })), hasMore: res.hasMore, nextCursor: res.nextCursor, total: res.total };
      });
    },

    async getCard(platformId: string, cardId: string): Promise<CardView> {
      return store.transaction(async (tx) => view(tx, await cardOf(tx, platformId, cardId)));
    },

    async updateCard(platformId: string, cardId: string, input: UpdateCardInput): Promise<CardView> {
      const fields: FieldError[] = [];
      if (input.state === undefined && input.maxSpendPerTransaction === undefined) fields.push({ field: "body", reason: "must change state or maxSpendPerTransaction" });
      if (input.state !== undefined && !["ACTIVE", "FROZEN", "CLOSED"].includes(input.state)) fields.push({ field: "state", reason: "must be ACTIVE, FROZEN or CLOSED" });
      if (input.maxSpendPerTransaction !== undefined && input.maxSpendPerTransaction !== null && input.maxSpendPerTransaction < 1n) {
        fields.push({ field: "maxSpendPerTransaction", reason: "must be a positive integer (minor units), or null to remove the limit" });
      }
      if (input.state === "CLOSED" && input.maxSpendPerTransaction !== undefined) fields.push({ field: "maxSpendPerTransaction", reason: "cannot be changed together with state CLOSED" });
      if (fields.length) throw errors.invalidInput(fields);
      const now = clock.now();
      return store.transaction(async (tx) => {
        const card = await cardOf(tx, platformId, cardId, true);
        const patch: Partial<CardRow> = {};
        const target = input.state !== undefined && input.state !== card.state ? input.state : undefined;
        if (card.state === "CLOSED") throw errors.conflict("CARD_NOT_MUTABLE", "The card is CLOSED: a closed card never changes again", { id: card.id, state: card.state });
        if (target !== undefined) {
          if (!(MUTABLE_STATES[card.state] ?? []).includes(target)) {
            throw errors.conflict("INVALID_STATE_TRANSITION", `A ${card.state} card cannot become ${target} (ACTIVE ⇄ FROZEN, ACTIVE | FROZEN → CLOSED)`, { id: card.id, state: card.state, requested: target });
          }
          patch.state = target;
          patch.state_reason = target === "CLOSED" ? "CLOSED_BY_PLATFORM" : "";
        }
        if (input.maxSpendPerTransaction !== undefined) patch.max_spend_per_transaction = input.maxSpendPerTransaction;
        if (Object.keys(patch).length === 0) return view(tx, card);
        const updated = await tx.updateCard(card.id, { ...patch, updated_at: now });
        const v = await view(tx, updated);
        if (target !== undefined) await tx.emitStateChanged(v, card.state, now);
        return v;
      });
    },

    async listFundingSources(platformId: string, cardId: string): Promise<FundingSourceRow[]> {
      return store.transaction(async (tx) => tx.sources((await cardOf(tx, platformId, cardId)).id));
    },

    async addFundingSource(platformId: string, cardId: string, input: { accountId: string; priority?: number }): Promise<FundingSourceRow> {
      const fields: FieldError[] = [];
      if (!input.accountId) fields.push({ field: "accountId", reason: "is required" });
      if (input.priority !== undefined && (!Number.isInteger(input.priority) || input.priority < 1 || input.priority > 1000)) fields.push({ field: "priority", reason: "must be an integer from 1 to 1000" });
      if (fields.length) throw errors.invalidInput(fields);
      const now = clock.now();
      return store.transaction(async (tx) => {
        const card = await cardOf(tx, platformId, cardId, true);
        if (card.state === "CLOSED") throw errors.conflict("CARD_NOT_MUTABLE", "The card is CLOSED: its funding sources no longer change", { id: card.id, state: card.state });
        const bound = await tx.sources(card.id);
        if (bound.some((s) => s.account_id === input.accountId)) throw ineligible(input.accountId, "it is already bound to the card");
        if (bound.length >= MAX_FUNDING_SOURCES) throw ineligible(input.accountId, `the card already has ${MAX_FUNDING_SOURCES} funding sources`);
        const why = refusal(await tx.account(platformId, input.accountId), card.cardholder_id);
        if (why) throw ineligible(input.accountId, why);
        const priority = input.priority ?? Math.max(0, ...bound.map((s) => s.priority)) + 1;
        const id = newId("CardFundingSource");
        await tx.insertSource({ id, platform_id: platformId, card_id: card.id, account_id: input.accountId, priority, created_at: now, updated_at: now, removed_at: null });
        await tx.updateCard(card.id, { updated_at: now });
        return (await tx.source(platformId, id))!;
      });
    },

    async removeFundingSource(platformId: string, cardId: string, accountId: string): Promise<void> {
      const now = clock.now();
      await store.transaction(async (tx) => {
        const card = await cardOf(tx, platformId, cardId, true);
        const bound = await tx.sources(card.id);
        const source = bound.find((s) => s.account_id === accountId);
        if (!source) throw errors.notFound("CardFundingSource", accountId);
        if (card.state === "CLOSED") throw errors.conflict("CARD_NOT_MUTABLE", "The card is CLOSED: its funding sources no longer change", { id: card.id, state: card.state });
        if (bound.length === 1) throw errors.conflict("LAST_FUNDING_SOURCE", "A card keeps at least one funding source: freeze or close the card instead", { id: card.id, accountId });
        await tx.removeSource(source.id, now);
        await tx.updateCard(card.id, { updated_at: now });
      });
    },

    /** A funding source by its id, with its card (auth-sessions' delegated keys). */
    async getFundingSource(platformId: string, id: string): Promise<{ source: FundingSourceRow; card: CardView }> {
      return store.transaction(async (tx) => {
        const source = id ? await tx.source(platformId, id) : undefined;
        if (!source) throw errors.notFound("CardFundingSource", id);
        const card = await cardOf(tx, platformId, source.card_id);
        return { source, card: await view(tx, card) };
      });
    },

    /**
     * auth-sessions' DelegatedKeyChanged (consumer of corridor.platforms.delegated-keys.v1, in its
     * inbox transaction): a key made for the source became ACTIVE or was REVOKED. The ledger keeps
     * each key's latest status and applies a change only when it is later than the one held (a
     * key goes PENDING → ACTIVE → REVOKED, never back), so a stale, repeated or reordered event
     * changes nothing; the source is delegated while any of its keys is ACTIVE. An unknown source
     * (another platform's, or none) or status is ignored: refusing would hold the partition for good.
     */
    async onDelegatedKeyChanged(inbox: unknown, platformId: string, change: DelegatedKeyChange): Promise<"applied" | "ignored"> {
      if (!(change.status in KEY_STATUS_RANK)) return "ignored";
      const status = change.status as DelegatedKeyStatus;
      const tx = store.within(inbox);
      // Locked: the changes of one source's keys apply one after the other, whatever delivers them.
      const source = await tx.source(platformId, change.fundingSourceId, { forUpdate: true });
      if (!source) return "ignored";
      const held = await tx.delegatedKey(change.keyId);
      if (held && (held.platform_id !== platformId || held.funding_source_id !== source.id || KEY_STATUS_RANK[held.status] >= KEY_STATUS_RANK[status])) return "ignored";
      await tx.putDelegatedKey({ key_id: change.keyId, platform_id: platformId, funding_source_id: source.id, status, updated_at: change.at });
      const delegated = (await tx.activeDelegatedKeys(source.id)) > 0;
      if (delegated !== source.delegated) await tx.setDelegated(platformId, source.id, delegated, change.at);
      return "applied";
    },

    /** The card issuer provisioned the card (consumer of corridor.sandbox.v1): PROCESSING → ACTIVE, once. */
    async onCardIssued(inbox: unknown, platformId: string, issued: IssuedCard, at: Date): Promise<"applied" | "ignored"> {
      const tx = store.within(inbox);
      const card = await tx.card(platformId, issued.cardId, { forUpdate: true });
      // A card closed meanwhile (or a replay) stays as it is.
      if (!card || card.state !== "PROCESSING") return "ignored";
      const updated = await tx.updateCard(card.id, {
        state: "ACTIVE",
        state_reason: "",
        brand: issued.brand,
        last4: issued.last4,
        exp_month: issued.expMonth,
        exp_year: issued.expYear,
        issuer_ref: issued.issuerRef,
        updated_at: at,
      });
      await tx.emitStateChanged(await view(tx, updated), card.state, at);
      return "applied";
    },
  };
}

export type Cards = ReturnType<typeof createCards>;
