import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  AuthMethodSchema,
  PasskeyAuthChallengeSchema,
  SignedChallengeSchema,
  WalletSessionSchema,
  type AuthMethod as AuthMethodPb,
  type SignedChallenge as SignedChallengePb,
  type SignedRetry as SignedRetryPb,
  type WalletSession as WalletSessionPb,
} from "@corridor/proto/corridor/auth_sessions/v1/wallet_auth_pb.js";
import { WalletAuthService } from "@corridor/proto/corridor/auth_sessions/v1/wallet_auth_service_pb.js";
import type { AuthMethod, IssuedSession, SignedChallenge, SignedRetry, WalletSession } from "../domain/wallet/types.js";
import type { WalletAuth } from "../domain/wallet/wallet-auth.js";

/** WalletAuthService: proto <-> the wallet-auth use cases. */

const ts = (d: Date) => timestampFromDate(d);

const authMethodToPb = (m: AuthMethod): AuthMethodPb =>
  create(AuthMethodSchema, { id: m.id, accountId: m.accountId, type: m.type, nickname: m.nickname, createdAt: ts(m.createdAt), updatedAt: ts(m.updatedAt) });

const challengeToPb = (c: SignedChallenge): SignedChallengePb =>
  create(SignedChallengeSchema, { type: c.type, payloadToSign: c.payloadToSign, requestId: c.requestId, expiresAt: ts(c.expiresAt) });

const sessionToPb = (s: WalletSession | IssuedSession): WalletSessionPb =>
  create(WalletSessionSchema, {
    id: s.id,
    accountId: s.accountId,
    credentialId: s.credentialId,
    type: s.type,
    nickname: s.nickname,
    createdAt: ts(s.createdAt),
    updatedAt: ts(s.updatedAt),
    expiresAt: ts(s.expiresAt),
    encryptedSessionSigningKey: "encryptedSessionSigningKey" in s ? s.encryptedSessionSigningKey : "",
  });

/** A retry when either header was sent (a lone header is a failed retry, not a first call). */
const retryOf = (r: SignedRetryPb | undefined): SignedRetry | undefined =>
  r && (r.requestId || r.signature) ? { requestId: r.requestId, signature: r.signature } : undefined;

const utf8 = (b: Uint8Array) => new TextDecoder().decode(b);

export function createWalletAuthHandler({ wallet }: { wallet: WalletAuth }): ServiceImpl<typeof WalletAuthService> {
  return {
    async createCredential(req) {
      const a = req.attestation;
      const out = await wallet.createCredential({
        platformId: req.platformId,
        accountId: req.accountId,
        type: req.type,
        email: req.email,
        oidcToken: req.oidcToken,
        nickname: req.nickname,
        challenge: req.challenge,
        attestation: a && { credentialId: a.credentialId, clientDataJson: a.clientDataJson, attestationObject: a.attestationObject, transports: [...a.transports] },
        retry: retryOf(req.signedRetry),
      });
      return out.challenge
        ? { result: { case: "challenge", value: challengeToPb(out.challenge) } }
        : { result: { case: "authMethod", value: authMethodToPb(out.authMethod!) } };
    },

    async listCredentials(req) {
      return { authMethods: (await wallet.listCredentials(req.platformId, req.accountId)).map(authMethodToPb) };
    },

    async revokeCredential(req) {
      const out = await wallet.revokeCredential(req.platformId, req.credentialId, retryOf(req.signedRetry));
      return { challenge: out.challenge && challengeToPb(out.challenge) };
    },

    async challengeCredential(req) {
      const out = await wallet.challengeCredential(req.platformId, req.credentialId, req.clientPublicKey);
      if (out.passkeyChallenge) {
        const c = out.passkeyChallenge;
        return {
          result: {
            case: "passkeyChallenge",
            value: create(PasskeyAuthChallengeSchema, { challenge: c.challenge, requestId: c.requestId, expiresAt: ts(c.expiresAt) }),
          },
        };
      }
      return { result: { case: "authMethod", value: authMethodToPb(out.authMethod!) } };
    },

    async verifyCredential(req) {
      const a = req.assertion;
      const session = await wallet.verifyCredential({
        platformId: req.platformId,
        credentialId: req.credentialId,
        type: req.type,
        otp: req.otp,
        oidcToken: req.oidcToken,
        clientPublicKey: req.clientPublicKey,
        assertion: a && {
          credentialId: a.credentialId,
          clientDataJson: a.clientDataJson,
          authenticatorData: a.authenticatorData,
          signature: a.signature,
          userHandle: a.userHandle || undefined,
        },
        requestId: req.requestId,
      });
      return { session: sessionToPb(session) };
    },

    async listSessions(req) {
      return { sessions: (await wallet.listSessions(req.platformId, req.accountId)).map(sessionToPb) };
    },

    async revokeSession(req) {
      const out = await wallet.revokeSession(req.platformId, req.sessionId, retryOf(req.signedRetry));
      return { challenge: out.challenge && challengeToPb(out.challenge) };
    },

    async exportWallet(req) {
      const out = await wallet.exportWallet(req.platformId, req.accountId, req.clientPublicKey, retryOf(req.signedRetry));
      return out.challenge
        ? { result: { case: "challenge", value: challengeToPb(out.challenge) } }
        : { result: { case: "export", value: { id: out.export!.id, encryptedWalletCredentials: out.export!.encryptedWalletCredentials } } };
    },

    async createSignedChallenge(req) {
      return { challenge: challengeToPb(await wallet.createSignedChallenge(req.platformId, req.accountId, req.operation, utf8(req.body))) };
    },

    async verifySignedRetry(req) {
      const retry = { requestId: req.signedRetry?.requestId ?? "", signature: req.signedRetry?.signature ?? "" };
      return wallet.verifySignedRetry(req.platformId, req.accountId, req.operation, retry, utf8(req.body));
    },
  };
}
