import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { errors, type Logger } from "@corridor/kit";
import { CardsService } from "@corridor/proto/corridor/ledger/v1/cards_service_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import type { AccountDirectory } from "../domain/wallet/ports.js";

/**
 * The AccountDirectory port over LedgerService.GetInternalAccount and the ledger's CardsService
 * (card funding sources). The transport is asked for at the first call: services start one by one
 * and the ledger may start after auth-sessions.
 */
export function ledgerAccounts(transport: Transport | (() => Transport), log?: Pick<Logger, "warn">): AccountDirectory {
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

    async setDelegation(platformId, fundingSourceId, delegated) {
      // Called after the key's commit: a failure leaves the source's status behind (PENDING_AUTH or
      // ACTIVE), never the key, so it is logged rather than answered (docs/cards.md).
      try {
        await cards().setFundingSourceDelegation({ platformId, fundingSourceId, delegated });
      } catch (err) {
        log?.warn({ platform_id: platformId, funding_source_id: fundingSourceId, delegated, err: (err as Error).message }, "the ledger was not told of a delegated key's change; the funding source's status lags until the next one");
      }
    },
  };
}
