import type { FastifyRequest } from "fastify";
import type { AuthMethod, PasskeyAuthChallenge, SignedChallenge, WalletSession } from "@corridor/proto/corridor/auth_sessions/v1/wallet_auth_pb.js";
import { isoFromTimestamp } from "@corridor/kit/rest-json";

/** WalletAuthService messages <-> public JSON. */

type CredentialTypeName = "EMAIL_OTP" | "OAUTH" | "PASSKEY";
const typeName = (t: string) => t as CredentialTypeName;

export function authMethodToJson(m: AuthMethod | undefined) {
  if (!m) throw new Error("service answered without an auth method");
  return { id: m.id, accountId: m.accountId, type: typeName(m.type), nickname: m.nickname, createdAt: isoFromTimestamp(m.createdAt), updatedAt: isoFromTimestamp(m.updatedAt) };
}

export function signedChallengeToJson(c: SignedChallenge) {
  return { type: c.type, payloadToSign: c.payloadToSign, requestId: c.requestId, expiresAt: isoFromTimestamp(c.expiresAt) };
}

export function passkeyChallengeToJson(c: PasskeyAuthChallenge) {
  return { challenge: c.challenge, requestId: c.requestId, expiresAt: isoFromTimestamp(c.expiresAt) };
}

export function sessionToJson(s: WalletSession | undefined, withKey: boolean) {
  if (!s) throw new Error("service answered without a session");
  const base = {
    id: s.id,
    accountId: s.accountId,
    type: typeName(s.type),
    nickname: s.nickname,
    createdAt: isoFromTimestamp(s.createdAt),
    updatedAt: isoFromTimestamp(s.updatedAt),
    expiresAt: isoFromTimestamp(s.expiresAt),
  };
  return withKey ? { ...base, encryptedSessionSigningKey: s.encryptedSessionSigningKey } : base;
}

const header = (request: FastifyRequest, name: string): string => {
  const v = request.headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? "";
};

/** The signed-retry headers; Grid-Wallet-Signature is accepted as an alias. */
export function signedRetryOf(request: FastifyRequest): { requestId: string; signature: string } {
  return {
    requestId: header(request, "request-id"),
    signature: header(request, "service-wallet-signature") || header(request, "grid-wallet-signature"),
  };
}

export function requestIdOf(request: FastifyRequest): string {
  return header(request, "request-id");
}
