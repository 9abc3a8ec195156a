import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { enqueueEvent, ledgerEventTopic, newId, topics } from "@corridor/kit";
import { CardIssuanceRequestedSchema } from "@corridor/proto/corridor/ledger/v1/cards_pb.js";
import { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import type { Transaction } from "kysely";
import type { CardRow, CardView } from "../domain/cards.js";
import { cardToPb } from "../handlers/card-mappers.js";

/** CARD_STATE_CHANGE (Grid's CARD.STATE_CHANGE): the card after the change, for notifications' webhooks. */
export async function emitCardStateChanged(trx: Transaction<any>, view: CardView, previousState: string, at: Date): Promise<void> {
  const eventId = newId("Event");
  const eventType = "CARD_STATE_CHANGE";
  const message = create(LedgerEventSchema, {
    eventId,
    occurredAt: timestampFromDate(at),
    platformId: view.card.platform_id,
    eventType,
    payload: { case: "cardChanged", value: { card: cardToPb(view), previousState } },
  });
  await enqueueEvent(trx, { topic: ledgerEventTopic(message), key: view.card.id, eventId, eventType, schema: LedgerEventSchema, message });
}

/** Asks the platform's card issuer to provision the card (corridor.cards.issuance.v1, key card id). */
export async function emitCardIssuanceRequested(trx: Transaction<any>, card: CardRow, environment: string, at: Date): Promise<void> {
  const eventId = newId("Event");
  await enqueueEvent(trx, {
    topic: topics.cardIssuance,
    key: card.id,
    eventId,
    eventType: "CARD_ISSUANCE_REQUESTED",
    schema: CardIssuanceRequestedSchema,
    message: create(CardIssuanceRequestedSchema, {
      eventId,
      occurredAt: timestampFromDate(at),
      platformId: card.platform_id,
      environment,
      cardId: card.id,
      cardholderId: card.cardholder_id,
      form: card.form,
      currency: card.currency,
    }),
  });
}
