import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { errors } from "@corridor/kit";
import { CardsService } from "@corridor/proto/corridor/ledger/v1/cards_service_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import type { AccountDirectory } from "../domain/wallet/ports.js";

/**
 * The AccountDirectory port over LedgerService.GetInternalAccount and the ledger's CardsService
 * (card funding sources, read before a delegated key is made; whether a key signs for one reaches
 * the ledger as a DelegatedKeyChanged event, events/platform-events.ts). The transport is asked for at the first call: services start one by one
 * and the ledger may start after auth-sessions.
 */
export function ledgerAccounts(transport: Transport | (() => Transport)): AccountDirectory {
  let client: Client<typeof LedgerService> | undefined;
  let cardsClient: Client<typeof CardsService> | undefined;
  const resolve = () => (typeof transport === "function" ? transport() : transport);
  const ledger = () => (client ??= createClient(LedgerService, resolve()));
  const cards = () => (cardsClient ??= createClient(CardsService, resolve()));
  return {
    async requireEmbeddedWallet(platformId, accountId) {
      let account;
      try {
        ({ account } = await ledger().getInternalAccount({ platformId, accountId }));
      } catch (err) {
        // The ledger's own 404 (a PublicError) passes through unchanged; a bare NotFound is mapped.
        if (err instanceof ConnectError && err.code === Code.NotFound) throw errors.notFound("InternalAccount", accountId);
        throw err;
      }
      if (!account || account.platformId !== platformId) throw errors.notFound("InternalAccount", accountId);
      if (account.type !== "EMBEDDED_WALLET") {
        throw errors.invalidInput([{ field: "accountId", reason: "must be an EMBEDDED_WALLET internal account" }]);
      }
    },

    async cardFundingSource(platformId, fundingSourceId) {
      let res;
      try {
        res = await cards().getCardFundingSource({ platformId, fundingSourceId });
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.NotFound) throw errors.notFound("CardFundingSource", fundingSourceId);
        throw err;
      }
      const s = res.fundingSource;
      if (!s || !res.card || res.card.platformId !== platformId) throw errors.notFound("CardFundingSource", fundingSourceId);
      return { id: s.id, cardId: s.cardId, accountId: s.internalAccountId, accountType: s.accountType, status: s.status, cardState: res.card.state };
    },
  };
}
