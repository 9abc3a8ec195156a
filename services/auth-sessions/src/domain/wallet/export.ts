import { randomBytes } from "node:crypto";
import { AppError } from "@corridor/kit";
import { canonicalJson } from "./canonical.js";
import type { WalletAuthDeps, WalletContext } from "./context.js";
import { sealToPublicKey } from "./keys.js";
import { consumeSignedRetry, issueSignedChallenge } from "./signed-retry.js";
import type { SignedRetry } from "./types.js";
import * as v from "./validation.js";

/** Wallet export: the wallet key (made on first use, stored encrypted) sealed to the client's key, after a signed retry. */
export function createWalletExport(deps: WalletAuthDeps, ctx: WalletContext) {
  const { transact, accounts } = deps;
  const { environment, accountType, platformNow } = ctx;
  return {
    async exportWallet(platformId: string, accountId: string, clientPublicKeyHex: string, retry?: SignedRetry) {
      const clientKey = v.clientPublicKey(clientPublicKeyHex);
      await accounts.requireEmbeddedWallet(platformId, accountId);
      const now = await platformNow(platformId);
      const outcome = await transact(async (store) => {
        const sandbox = (await environment(store, platformId)) === "SANDBOX";
        if (!sandbox && deps.walletKeysInsecure) {
          // A production wallet key must never be protected by a key that ships in the source.
          throw new AppError("UNAVAILABLE", "WALLET_ENCRYPTION_NOT_CONFIGURED", "Wallet export for production platforms needs CORRIDOR_WALLET_ENCRYPTION_KEY to be configured by the operator");
        }
        const body = canonicalJson({ accountId, clientPublicKey: Buffer.from(clientKey).toString("hex") });
        const base = { platformId, accountId, operation: "EXPORT_WALLET", body, now };
        if (!retry) return { challenge: await issueSignedChallenge(store, { ...base, type: await accountType(store, platformId, accountId, now) }) };
        await consumeSignedRetry(store, { ...base, retry, sandbox });
        let sealedAtRest = await store.walletKeys.get(platformId, accountId);
        if (!sealedAtRest) {
          // The wallet key is made when first needed and only ever stored encrypted.
          const fresh = randomBytes(32);
          await store.walletKeys.insertIfAbsent(platformId, accountId, deps.walletKeys.seal(fresh, accountId), now);
          fresh.fill(0);
          sealedAtRest = (await store.walletKeys.get(platformId, accountId))!;
        }
        return { sealedAtRest };
      });
      if ("challenge" in outcome) return { challenge: outcome.challenge };
      const secret = deps.walletKeys.open(outcome.sealedAtRest.sealed, accountId, outcome.sealedAtRest.keyId);
      const encryptedWalletCredentials = await sealToPublicKey(secret, clientKey);
      secret.fill(0);
      return { export: { id: accountId, encryptedWalletCredentials } };
    },

  };
}
