import { AppError, errors, newId } from "@corridor/kit";
import { canonicalJson, sha256Hex } from "./canonical.js";
import { parseStamp, stampVerifies } from "./stamp.js";
import type { WalletStore } from "./ports.js";
import { LIMITS, REASONS, SANDBOX_MAGIC, type SignedChallenge, type SignedRequest, type SignedRetry } from "./types.js";

/**
 * The signed-retry framework (decisions §6): a first call gets a challenge whose payloadToSign is
 * canonical JSON of {requestId, accountId, operation, bodySha256, expiresAt}; the retry carries a
 * stamp over those exact bytes by the key of an active session on the account, the same body and
 * the single-use requestId, before expiresAt.
 */

export const OPERATIONS = ["ADD_CREDENTIAL", "REVOKE_CREDENTIAL", "REVOKE_SESSION", "EXPORT_WALLET", "EXECUTE_QUOTE"] as const;

const rejected = (message: string, reason: string, extra: Record<string, string> = {}) =>
  errors.unauthorized(message, { reason, ...extra });

export async function issueSignedChallenge(
  store: WalletStore,
  input: { platformId: string; accountId: string; operation: string; body: string; type: string; now: Date },
): Promise<SignedChallenge> {
  const requestId = newId("Request");
  const expiresAt = new Date(input.now.getTime() + LIMITS.signedChallengeMs);
  const bodySha256 = sha256Hex(input.body);
  const payloadToSign = canonicalJson({
    requestId,
    accountId: input.accountId,
    operation: input.operation,
    bodySha256,
    expiresAt: expiresAt.toISOString(),
  });
  await store.signedRequests.insert({
    id: requestId,
    platformId: input.platformId,
    accountId: input.accountId,
    operation: input.operation,
    bodySha256,
    payloadToSign,
    createdAt: input.now,
    expiresAt,
    usedAt: null,
  });
  return { type: input.type, payloadToSign, requestId, expiresAt };
}

/**
 * The checks of a presented Request-Id that need neither the account nor the signature: it was
 * issued for this operation, is unused, unexpired, and its body hashes the same. Operations on a
 * target (revoke credential/session) run it before looking the target up, so a replayed or stale
 * Request-Id answers 401 whatever became of the target. Consumes nothing. Every failure is a 401.
 */
export async function checkSignedRequest(
  store: WalletStore,
  input: { platformId: string; operation: string; body: string; retry: SignedRetry; now: Date; accountId?: string },
): Promise<SignedRequest> {
  const { retry, now } = input;
  const request = await store.signedRequests.get(input.platformId, retry.requestId);
  if (!request) throw rejected("Request-Id is not a challenge this API issued", "Unknown Request-Id");
  if (request.operation !== input.operation || (input.accountId !== undefined && request.accountId !== input.accountId)) {
    throw rejected("Request-Id was issued for another operation or account", "Request-Id does not match this request");
  }
  if (request.usedAt) throw rejected("Request-Id has already been used; start again without it", "Request-Id already used");
  if (now.getTime() >= request.expiresAt.getTime()) {
    throw rejected("The signed-retry challenge has expired; start again without Request-Id", "Signed-retry challenge expired");
  }
  if (sha256Hex(input.body) !== request.bodySha256) {
    throw new AppError("UNAUTHENTICATED", "WALLET_SIGNATURE_BODY_MISMATCH", "The retry's body differs from the body of the first call", {
      reason: "Body does not match the signed request",
    });
  }
  return request;
}

/**
 * Checks a retry and consumes its requestId, inside the transaction of the operation it authorizes
 * (so a failed operation leaves the requestId usable). Answers the signing session's id ("" for
 * the sandbox magic signature). Every failure is a 401.
 */
export async function consumeSignedRetry(
  store: WalletStore,
  input: {
    platformId: string;
    accountId: string;
    operation: string;
    body: string;
    retry: SignedRetry;
    sandbox: boolean;
    now: Date;
    /** Credential revocation: the signing session must belong to another credential. */
    excludeCredentialId?: string;
  },
): Promise<{ sessionId: string }> {
  const { retry, now } = input;
  const request = await checkSignedRequest(store, input);

  let sessionId = "";
  if (!(input.sandbox && retry.signature === SANDBOX_MAGIC.signature)) {
    const stamp = parseStamp(retry.signature);
    if (!stamp) throw rejected(`${REASONS.signature}: not a ${"SIGNATURE_SCHEME_TK_API_P256"} stamp`, REASONS.signature);
    const session = await store.sessions.findActiveByKey(input.platformId, input.accountId, stamp.publicKey, now);
    if (!session) throw rejected(`${REASONS.signature}: the key is not the signing key of an active session on this account`, REASONS.signature);
    if (input.excludeCredentialId && session.credentialId === input.excludeCredentialId) {
      throw rejected(`${REASONS.signature}: sign with a session of another credential than the one being revoked`, REASONS.signature);
    }
    if (!stampVerifies(stamp, request.payloadToSign)) throw rejected(`${REASONS.signature}: the signature does not verify over payloadToSign`, REASONS.signature);
    sessionId = session.id;
  }

  // Conditional update: of two concurrent retries with one requestId exactly one wins.
  if (!(await store.signedRequests.markUsed(input.platformId, retry.requestId, now))) {
    throw rejected("Request-Id has already been used; start again without it", "Request-Id already used");
  }
  return { sessionId };
}
