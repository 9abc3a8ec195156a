import { AppError, errors } from "@corridor/kit";
import type { WalletAuthDeps, WalletContext } from "./context.js";
import { consumeSignedRetry, issueSignedChallenge } from "./signed-retry.js";
import type { SignedChallenge, SignedRetry } from "./types.js";

/** Signed challenges and retries for other services' operations (quotes-fx's embedded-wallet execute). */
export function createSignedOperations(
  deps: WalletAuthDeps,
  ctx: WalletContext,
  /** Delegated keys (wallet-keys.ts): an unsigned EXECUTE_QUOTE retry is signed by the wallet's ACTIVE one. */
  delegated?: { signWithDelegatedKey(platformId: string, accountId: string, operation: string, requestId: string, body: string): Promise<{ sessionId: string } | undefined> },
) {
  const { transact, accounts } = deps;
  const { environment, accountType, platformNow } = ctx;
  return {
    /** For other services (quotes-fx's embedded-wallet execute): a challenge over their canonical body. */
    async createSignedChallenge(platformId: string, accountId: string, operation: string, body: string): Promise<SignedChallenge> {
      if (!/^[A-Z][A-Z0-9_]{0,63}$/.test(operation)) throw errors.invalidInput([{ field: "operation", reason: "must be UPPER_SNAKE" }]);
      await accounts.requireEmbeddedWallet(platformId, accountId);
      const now = await platformNow(platformId);
      return transact(async (store) => {
        await environment(store, platformId);
        return issueSignedChallenge(store, { platformId, accountId, operation, body, type: await accountType(store, platformId, accountId, now), now });
      });
    },

    /** For other services: checks and consumes a retry; answers the signing session ("" for the sandbox magic value). */
    async verifySignedRetry(platformId: string, accountId: string, operation: string, retry: SignedRetry, body: string): Promise<{ sessionId: string }> {
      // Grid's codes for the missing halves of a signed retry.
      if (!retry.requestId) throw new AppError("UNAUTHENTICATED", "REQUEST_ID_MISSING", "Send Request-Id and Service-Wallet-Signature", { reason: "Missing signed-retry headers" });
      if (!retry.signature) {
        const signed = await delegated?.signWithDelegatedKey(platformId, accountId, operation, retry.requestId, body);
        if (signed) return signed;
      }
      if (!retry.signature) throw new AppError("UNAUTHENTICATED", "WALLET_SIGNATURE_MISSING", "Send Request-Id and Service-Wallet-Signature", { reason: "Missing signed-retry headers" });
      const now = await platformNow(platformId);
      return transact(async (store) => {
        const sandbox = (await environment(store, platformId)) === "SANDBOX";
        return consumeSignedRetry(store, { platformId, accountId, operation, body, retry, sandbox, now });
      });
    },
  };
}
