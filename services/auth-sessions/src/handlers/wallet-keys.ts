import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { SignedChallengeSchema, WalletSessionSchema, type SignedRetry as SignedRetryPb } from "@corridor/proto/corridor/auth_sessions/v1/wallet_auth_pb.js";
import { DelegatedKeySchema, WalletKeysService } from "@corridor/proto/corridor/auth_sessions/v1/wallet_keys_service_pb.js";
import type { DelegatedKey, IssuedSession, SignedChallenge, SignedRetry } from "../domain/wallet/types.js";
import type { WalletAuth } from "../domain/wallet/wallet-auth.js";

/** WalletKeysService: proto <-> session refresh and delegated keys (domain/wallet/wallet-keys.ts). */

const ts = (d: Date) => timestampFromDate(d);
const challengeToPb = (c: SignedChallenge) => create(SignedChallengeSchema, { type: c.type, payloadToSign: c.payloadToSign, requestId: c.requestId, expiresAt: ts(c.expiresAt) });
const keyToPb = (k: DelegatedKey) =>
  create(DelegatedKeySchema, {
    id: k.id,
    accountId: k.accountId,
    publicKey: k.publicKey,
    nickname: k.nickname,
    status: k.status,
    createdAt: ts(k.createdAt),
    updatedAt: ts(k.updatedAt),
    cardId: k.cardId ?? "",
    fundingSourceId: k.fundingSourceId ?? "",
  });
const sessionToPb = (s: IssuedSession) =>
  create(WalletSessionSchema, {
    id: s.id,
    accountId: s.accountId,
    credentialId: s.credentialId,
    type: s.type,
    nickname: s.nickname,
    createdAt: ts(s.createdAt),
    updatedAt: ts(s.updatedAt),
    expiresAt: ts(s.expiresAt),
    encryptedSessionSigningKey: s.encryptedSessionSigningKey,
  });
/** A retry when either header was sent (a lone header is a failed retry, not a first call). */
const retryOf = (r: SignedRetryPb | undefined): SignedRetry | undefined => (r && (r.requestId || r.signature) ? { requestId: r.requestId, signature: r.signature } : undefined);

export function createWalletKeysHandler({ wallet }: { wallet: WalletAuth }): ServiceImpl<typeof WalletKeysService> {
  return {
    async refreshSession(req) {
      const out = await wallet.refreshSession(req.platformId, req.sessionId, req.clientPublicKey, retryOf(req.signedRetry));
      return out.challenge ? { result: { case: "challenge", value: challengeToPb(out.challenge) } } : { result: { case: "session", value: sessionToPb(out.session!) } };
    },
    async createDelegatedKey(req) {
      const out = await wallet.createDelegatedKey(req.platformId, { fundingSourceId: req.fundingSourceId, nickname: req.nickname }, retryOf(req.signedRetry));
      return out.challenge ? { result: { case: "challenge", value: challengeToPb(out.challenge) } } : { result: { case: "key", value: keyToPb(out.key!) } };
    },
    async listDelegatedKeys(req) {
      return { keys: (await wallet.listDelegatedKeys(req.platformId, { accountId: req.accountId || undefined, fundingSourceId: req.fundingSourceId || undefined })).map(keyToPb) };
    },
    async getDelegatedKey(req) {
      return { key: keyToPb(await wallet.getDelegatedKey(req.platformId, req.id)) };
    },
    async revokeDelegatedKey(req) {
      await wallet.revokeDelegatedKey(req.platformId, req.id);
      return {};
    },
  };
}
