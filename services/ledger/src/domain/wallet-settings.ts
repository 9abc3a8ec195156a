import { errors, type Clock } from "@corridor/kit";
import { internalAccount } from "./gates.js";
import type { AccountRow } from "./model.js";
import type { LedgerStore, WalletChallenge, WalletSignatures } from "./ports.js";

/** The signed operation's name in auth-sessions' challenges. */
export const UPDATE_INTERNAL_ACCOUNT = "UPDATE_INTERNAL_ACCOUNT";

/**
 * Grid's PATCH /internal-accounts/{id}: an embedded wallet's privacy, by signed retry (decisions
 * §6). The first call answers auth-sessions' challenge over the canonical body
 * (`{"privateEnabled":…}`); the retry, signed with a session key of the wallet's account and
 * carrying the same body, is checked (and its requestId consumed) there before the change is made.
 */
export function createWalletSettings(deps: { store: LedgerStore; clock: Clock; signatures: WalletSignatures }) {
  const { store, clock } = deps;
  return {
    async updateInternalAccount(
      platformId: string,
      accountId: string,
      patch: { privateEnabled?: boolean },
      retry: { requestId: string; signature: string },
    ): Promise<{ challenge: WalletChallenge; account?: undefined } | { account: AccountRow; challenge?: undefined }> {
      const account = await internalAccount(store, platformId, accountId);
      if (patch.privateEnabled === undefined) throw errors.invalidInput([{ field: "privateEnabled", reason: "is required: it is the one field an internal account update changes" }]);
      if (account.type !== "EMBEDDED_WALLET") throw errors.invalidInput([{ field: "privateEnabled", reason: `applies to EMBEDDED_WALLET accounts only; this one is ${account.type}` }]);
      const body = JSON.stringify({ privateEnabled: patch.privateEnabled });
      if (!retry.requestId && !retry.signature) return { challenge: await deps.signatures.challenge(platformId, account.id, UPDATE_INTERNAL_ACCOUNT, body) };
      await deps.signatures.verify(platformId, account.id, UPDATE_INTERNAL_ACCOUNT, retry, body);
      const updated = await store.transaction(async (trx) => trx.setPrivateEnabled(platformId, account.id, patch.privateEnabled!, clock.now()));
      return { account: updated };
    },
  };
}
