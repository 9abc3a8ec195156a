import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { WalletAuthService } from "@corridor/proto/corridor/auth_sessions/v1/wallet_auth_service_pb.js";
import { EXECUTE_QUOTE } from "../domain/quote-lifecycle.js";
import type { WalletSignaturePort } from "../domain/ports.js";

const utf8 = (s: string) => new TextEncoder().encode(s);

/** auth-sessions' signed-retry challenges for EXECUTE_QUOTE; its 401s propagate as they are. */
export function walletSignaturePort(transport: () => Transport): WalletSignaturePort {
  let client: Client<typeof WalletAuthService> | undefined;
  const wallet = () => (client ??= createClient(WalletAuthService, transport()));
  return {
    async createChallenge(platformId, accountId, body) {
      const res = await wallet().createSignedChallenge({ platformId, accountId, operation: EXECUTE_QUOTE, body: utf8(body) });
      const c = res.challenge;
      return { payloadToSign: c?.payloadToSign ?? "", requestId: c?.requestId ?? "", expiresAt: c?.expiresAt ? timestampDate(c.expiresAt) : new Date(0) };
    },
    async verify(platformId, accountId, retry, body) {
      await wallet().verifySignedRetry({ platformId, accountId, operation: EXECUTE_QUOTE, signedRetry: retry, body: utf8(body) });
    },
  };
}
