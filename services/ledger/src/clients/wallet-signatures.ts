import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { WalletAuthService } from "@corridor/proto/corridor/auth_sessions/v1/wallet_auth_service_pb.js";
import type { WalletSignatures } from "../domain/ports.js";

const utf8 = (s: string) => new TextEncoder().encode(s);

/** auth-sessions' signed-retry challenges for the ledger's signed operations; its 401s propagate as they are. */
export function connectWalletSignatures(transport: () => Transport): WalletSignatures {
  let client: Client<typeof WalletAuthService> | undefined;
  const wallet = () => (client ??= createClient(WalletAuthService, transport()));
  return {
    async challenge(platformId, accountId, operation, body) {
      const c = (await wallet().createSignedChallenge({ platformId, accountId, operation, body: utf8(body) })).challenge;
      return { type: c?.type ?? "", payloadToSign: c?.payloadToSign ?? "", requestId: c?.requestId ?? "", expiresAt: c?.expiresAt ? timestampDate(c.expiresAt) : new Date(0) };
    },
    async verify(platformId, accountId, operation, retry, body) {
      await wallet().verifySignedRetry({ platformId, accountId, operation, signedRetry: retry, body: utf8(body) });
    },
  };
}
