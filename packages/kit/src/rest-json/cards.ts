// Public JSON of a card and its funding sources (Grid's Card, CardFundingSource), shared by the
// gateway (its answers) and notifications (CARD_STATE_CHANGE: the webhook's data is the card as
// GET /cards/{id} answers it). Pure.
import type { Card, CardFundingSource } from "@corridor/proto/corridor/ledger/v1/cards_pb.js";
import { emptyToUndefined, isoFromTimestamp, numberFromInt64 } from "./time.js";

export type CardStateJson = "PROCESSING" | "ACTIVE" | "FROZEN" | "CLOSED";
export type CardStateReasonJson = "ISSUER_REJECTED" | "CLOSED_BY_PLATFORM" | "CLOSED_BY_GRID";

/** Ledger proto -> the public Card. The issuer's details (brand, last4, expiry, issuerRef) appear once it issued the card. */
export function cardToJson(c: Card | undefined) {
  if (!c) throw new Error("service answered without a card");
  const issued = c.last4 !== "";
  return {
    id: c.id,
    cardholderId: c.cardholderId,
    platformCardId: c.platformCardId,
    state: c.state as CardStateJson,
    stateReason: (emptyToUndefined(c.stateReason) ?? null) as CardStateReasonJson | null,
    form: c.form as "VIRTUAL",
    ...(issued ? { brand: c.brand as "VISA", last4: c.last4, expMonth: c.expMonth, expYear: c.expYear, issuerRef: c.issuerRef } : {}),
    fundingSources: [...c.fundingSources],
    currency: c.currency,
    maxSpendPerTransaction: c.maxSpendPerTransaction === undefined ? null : numberFromInt64(c.maxSpendPerTransaction),
    createdAt: isoFromTimestamp(c.createdAt),
    updatedAt: isoFromTimestamp(c.updatedAt),
  };
}

/** Ledger proto -> the public CardFundingSource. */
export function cardFundingSourceToJson(s: CardFundingSource | undefined) {
  if (!s) throw new Error("service answered without a card funding source");
  return {
    id: s.id,
    cardId: s.cardId,
    internalAccountId: s.internalAccountId,
    status: s.status as "ACTIVE" | "PENDING_AUTH" | "INACTIVE",
    priority: s.priority,
    createdAt: isoFromTimestamp(s.createdAt),
    updatedAt: isoFromTimestamp(s.updatedAt),
  };
}
