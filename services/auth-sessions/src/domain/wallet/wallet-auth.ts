import { walletContext, type WalletAuthDeps } from "./context.js";
import { createCredentials } from "./credentials.js";
import { createWalletExport } from "./export.js";
import { createSessions } from "./sessions.js";
import { createSignedOperations } from "./signed-operations.js";
import { createWalletKeys } from "./wallet-keys.js";

export { toAuthMethod, type WalletAuthDeps } from "./context.js";
export type { CreateCredentialInput, PasskeyAssertionInput, PasskeyAttestationInput } from "./credentials.js";
export type { VerifyInput } from "./sessions.js";

/**
 * Embedded-wallet authentication use cases: credentials (credentials.ts), verification into
 * sessions (sessions.ts), wallet export (export.ts) and signed retries for other services
 * (signed-operations.ts). Other services (ledger) are asked before any transaction opens; crypto
 * happens outside transactions where it can.
 */
export function createWalletAuth(deps: WalletAuthDeps) {
  const ctx = walletContext(deps);
  const keys = createWalletKeys(deps, ctx);
  return {
    ...createCredentials(deps, ctx),
    ...createSessions(deps, ctx),
    ...createWalletExport(deps, ctx),
    ...createSignedOperations(deps, ctx, keys),
    ...keys,
  };
}

export type WalletAuth = ReturnType<typeof createWalletAuth>;
