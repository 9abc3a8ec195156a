import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { PageInfoSchema } from "@corridor/proto/corridor/common/v1/paging_pb.js";
import { CardsService } from "@corridor/proto/corridor/ledger/v1/cards_service_pb.js";
import type { Cards } from "../domain/cards.js";
import { cardToPb, fundingSourceToPb } from "./card-mappers.js";

/** CardsService: maps each RPC onto the card use cases (domain/cards.ts) and back. */

const orUndefined = (s: string) => (s === "" ? undefined : s);

export function createCardsHandler({ cards }: { cards: Cards }): ServiceImpl<typeof CardsService> {
  return {
    async createCard(req) {
      const view = await cards.createCard(req.platformId, {
        cardholderId: req.cardholderId,
        platformCardId: orUndefined(req.platformCardId),
        form: req.form,
        fundingSources: [...req.fundingSources],
        maxSpendPerTransaction: req.maxSpendPerTransaction,
      });
      return { card: cardToPb(view) };
    },
    async listCards(req) {
      const page = await cards.listCards(
        req.platformId,
        { cardholderId: orUndefined(req.cardholderId), accountId: orUndefined(req.accountId), platformCardId: orUndefined(req.platformCardId), state: orUndefined(req.state), ascending: req.ascending },
        { limit: req.page?.limit, cursor: req.page?.cursor },
      );
      return { cards: page.views.map(cardToPb), pageInfo: create(PageInfoSchema, { hasMore: page.hasMore, nextCursor: page.nextCursor ?? "", totalCount: BigInt(page.total) }) };
    },
    async getCard(req) {
      return { card: cardToPb(await cards.getCard(req.platformId, req.cardId)) };
    },
    async updateCard(req) {
      const view = await cards.updateCard(req.platformId, req.cardId, {
        state: orUndefined(req.state),
        maxSpendPerTransaction: req.setMaxSpendPerTransaction ? (req.maxSpendPerTransaction ?? null) : undefined,
      });
      return { card: cardToPb(view) };
    },
    async listCardFundingSources(req) {
      return { fundingSources: (await cards.listFundingSources(req.platformId, req.cardId)).map(fundingSourceToPb) };
    },
    async addCardFundingSource(req) {
      return { fundingSource: fundingSourceToPb(await cards.addFundingSource(req.platformId, req.cardId, { accountId: req.accountId, priority: req.priority || undefined })) };
    },
    async removeCardFundingSource(req) {
      await cards.removeFundingSource(req.platformId, req.cardId, req.accountId);
      return {};
    },
    async getCardFundingSource(req) {
      const { source, card } = await cards.getFundingSource(req.platformId, req.fundingSourceId);
      return { fundingSource: fundingSourceToPb(source), card: cardToPb(card) };
    },
  };
}
