import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CardFundingSourceSchema, CardSchema, type Card, type CardFundingSource } from "@corridor/proto/corridor/ledger/v1/cards_pb.js";
import { fundingSourceStatus, type CardView, type FundingSourceRow } from "../domain/cards.js";

/** Card rows -> proto. Nothing here decides anything. */

export function cardToPb(v: CardView): Card {
  const c = v.card;
  return create(CardSchema, {
    id: c.id,
    platformId: c.platform_id,
    cardholderId: c.cardholder_id,
    platformCardId: c.platform_card_id,
    state: c.state,
    stateReason: c.state_reason,
    brand: c.brand,
    form: c.form,
    last4: c.last4,
    expMonth: c.exp_month,
    expYear: c.exp_year,
    fundingSources: v.sources.map((s) => s.account_id),
    currency: c.currency,
    issuerRef: c.issuer_ref,
    maxSpendPerTransaction: c.max_spend_per_transaction ?? undefined,
    createdAt: timestampFromDate(c.created_at),
    updatedAt: timestampFromDate(c.updated_at),
  });
}

export function fundingSourceToPb(s: FundingSourceRow): CardFundingSource {
  return create(CardFundingSourceSchema, {
    id: s.id,
    cardId: s.card_id,
    internalAccountId: s.account_id,
    status: fundingSourceStatus(s),
    priority: s.priority,
    accountType: s.account_type,
    createdAt: timestampFromDate(s.created_at),
    updatedAt: timestampFromDate(s.updated_at),
  });
}
