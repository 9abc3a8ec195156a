import { p256 } from "@noble/curves/nist.js";
import { AppError, errors, newId } from "@corridor/kit";
import { canonicalJson } from "./canonical.js";
import { unauthorized, type WalletAuthDeps, type WalletContext } from "./context.js";
import { newSessionKeyPair, normalizeCompressedPublicKey, parseUncompressedPublicKey } from "./keys.js";
import { checkSignedRequest, consumeSignedRetry, issueSignedChallenge } from "./signed-retry.js";
import { REASONS, type DelegatedKey, type IssuedSession, type SignedChallenge, type SignedRetry, type StoredDelegatedKey } from "./types.js";
import type { WalletStore } from "./ports.js";

/**
 * Session refresh and delegated keys (Grid's POST /auth/sessions/{id}/refresh and
 * /auth/delegated-keys), on the signed-retry framework of signed-retry.ts.
 *
 * Refresh: a first call answers a challenge bound to the session and the new clientPublicKey; the
 * retry, signed by that very session's key while it is still active, opens a new session of the
 * same credential. A compressed clientPublicKey is Grid's client-held-key model (the client's key
 * becomes the new session's signing key, nothing sealed is returned); an uncompressed one gets a
 * fresh signing key sealed to it, as verify does.
 *
 * Delegated keys: a P-256 key made and custodied here for a card funding source (Grid's
 * fundingSourceId: a CardFundingSource of an embedded wallet, the ledger's), signing for that
 * wallet; keys made before cards are wallet-scoped (no card) and stay as they were. Created in three
 * legs signed by a session of the wallet (first call: challenge; second: the key is made, PENDING,
 * with a second challenge; third: ACTIVE). While ACTIVE it signs EXECUTE_QUOTE challenges of that
 * wallet in place of a session key (a quote execute may then omit the signature headers), and
 * nothing else: credentials, sessions, exports and delegated keys still need a session's
 * signature. The private key is only ever stored sealed and never answered. Revoking it needs no
 * user signature: the key authorizes its own end (it signs its revocation), then is REVOKED.
 */

const CREATE = "CREATE_DELEGATED_KEY";
const ACTIVATE = "ACTIVATE_DELEGATED_KEY";
const REFRESH = "REFRESH_SESSION";
/** The only operation a delegated key signs. */
export const DELEGATED_OPERATIONS = ["EXECUTE_QUOTE"] as const;

export const toDelegatedKey = (k: DelegatedKey): DelegatedKey => ({
  id: k.id,
  platformId: k.platformId,
  accountId: k.accountId,
  publicKey: k.publicKey,
  nickname: k.nickname,
  status: k.status,
  createdAt: k.createdAt,
  updatedAt: k.updatedAt,
  ...(k.cardId ? { cardId: k.cardId } : {}),
  ...(k.fundingSourceId ? { fundingSourceId: k.fundingSourceId } : {}),
});

/** Grid's codes for the missing halves of a signed retry. */
function requireBothHeaders(retry: SignedRetry) {
  if (!retry.requestId) throw new AppError("UNAUTHENTICATED", "REQUEST_ID_MISSING", "Send Request-Id and Service-Wallet-Signature", { reason: "Missing signed-retry headers" });
  if (!retry.signature) throw new AppError("UNAUTHENTICATED", "WALLET_SIGNATURE_MISSING", "Send Request-Id and Service-Wallet-Signature", { reason: "Missing signed-retry headers" });
}

const keyExists = (accountId: string) =>
  errors.conflict("DELEGATED_KEY_EXISTS", "The account already has an ACTIVE delegated key; revoke it before creating another", { accountId });

const isUniqueViolation = (err: unknown) => (err as { code?: string })?.code === "23505";

/** The client key of a refresh: compressed (client-held model) or uncompressed (sealed model), normalized hex. */
function refreshKey(value: string): { hex: string; uncompressed?: Uint8Array } {
  if (!value) throw errors.invalidInput([{ field: "clientPublicKey", reason: "is required" }]);
  const compressed = normalizeCompressedPublicKey(value);
  if (compressed) return { hex: compressed };
  const uncompressed = parseUncompressedPublicKey(value);
  if (uncompressed) return { hex: Buffer.from(uncompressed).toString("hex"), uncompressed };
  throw errors.invalidInput([
    { field: "clientPublicKey", reason: "must be a P-256 public key on the curve: compressed (66 hex characters, 02 or 03) or uncompressed (130 hex characters, 04)" },
  ]);
}

export function createWalletKeys(deps: WalletAuthDeps, ctx: WalletContext) {
  const { transact, accounts } = deps;
  const { environment, accountType, platformNow, requireCredential, sealedSessionKey, insertSession } = ctx;

  function openKey(k: StoredDelegatedKey): Uint8Array {
    return deps.walletKeys.open(k.sealedKey, k.id, k.keyId);
  }

  /** The custodied key's DER ECDSA-SHA256 signature over `payload`, checked against its public key. */
  function signWith(k: StoredDelegatedKey, payload: string): void {
    const secret = openKey(k);
    try {
      const message = new TextEncoder().encode(payload);
      const signature = p256.sign(message, secret, { format: "der" });
      if (!p256.verify(signature, message, Buffer.from(k.publicKey, "hex"), { format: "der" })) throw new Error("the delegated key's signature does not verify under its public key");
    } finally {
      secret.fill(0);
    }
  }

  async function delegatedKeyOf(store: WalletStore, platformId: string, id: string, forUpdate = false) {
    const k = await store.delegatedKeys.get(platformId, id, { forUpdate });
    if (!k) throw errors.notFound("DelegatedKey", id);
    return k;
  }

  return {
    async refreshSession(platformId: string, sessionId: string, clientPublicKey: string, retry?: SignedRetry): Promise<{ challenge?: SignedChallenge; session?: IssuedSession }> {
      const key = refreshKey(clientPublicKey);
      if (retry) requireBothHeaders(retry);
      // The sealed model's key pair is made before any transaction opens.
      const sealed = retry && key.uncompressed ? await sealedSessionKey(key.uncompressed) : undefined;
      const now = await platformNow(platformId);
      return transact(async (store) => {
        const sandbox = (await environment(store, platformId)) === "SANDBOX";
        const body = canonicalJson({ sessionId, clientPublicKey: key.hex });
        // A replayed, stale or foreign Request-Id (or another clientPublicKey) is a 401 whatever became of the session.
        if (retry) await checkSignedRequest(store, { platformId, operation: REFRESH, body, retry, now });
        const session = await store.sessions.get(platformId, sessionId);
        if (!session) throw errors.notFound("Session", sessionId);
        if (session.revokedAt || now.getTime() >= session.expiresAt.getTime()) {
          throw new AppError("UNAUTHENTICATED", "SESSION_NOT_ACTIVE", "The session has expired or was revoked: verify the credential again to open a new one", { sessionId });
        }
        const base = { platformId, accountId: session.accountId, operation: REFRESH, body, now };
        if (!retry) return { challenge: await issueSignedChallenge(store, { ...base, type: session.type }) };
        const { sessionId: signer } = await consumeSignedRetry(store, { ...base, retry, sandbox });
        // The session refreshes itself: another session's signature does not do (rolled back, the Request-Id stays usable).
        if (signer && signer !== session.id) throw unauthorized(REASONS.signature, "sign with the key of the session being refreshed");
        const credential = await requireCredential(store, platformId, session.credentialId);
        return { session: await insertSession(store, credential, sealed ?? { publicKey: key.hex, sealed: "" }, now) };
      });
    },

    async createDelegatedKey(platformId: string, input: { fundingSourceId: string; nickname: string }, retry?: SignedRetry): Promise<{ challenge?: SignedChallenge; key?: DelegatedKey }> {
      const fields = [];
      if (!input.fundingSourceId) fields.push({ field: "fundingSourceId", reason: "is required: the card funding source (of an EMBEDDED_WALLET account) the key signs for" });
      else if (!/^CardFundingSource:[0-9a-fA-F-]{1,64}$/.test(input.fundingSourceId)) fields.push({ field: "fundingSourceId", reason: "must be a CardFundingSource id" });
      const nickname = input.nickname.trim();
      if (!nickname || nickname.length > 256) fields.push({ field: "nickname", reason: "must be 1 to 256 characters" });
      if (fields.length) throw errors.invalidInput(fields);
      if (retry) requireBothHeaders(retry);
      const fundingSourceId = input.fundingSourceId;
      // The ledger's funding source names the card and the wallet (404 CARD_FUNDING_SOURCE_NOT_FOUND).
      const source = await accounts.cardFundingSource(platformId, fundingSourceId);
      const refuse = (why: string) =>
        errors.badRequest("FUNDING_SOURCE_INELIGIBLE", `The card funding source cannot take a delegated key: ${why}`, { fundingSourceId, reason: why });
      if (source.accountType !== "EMBEDDED_WALLET") throw refuse(`its account is ${source.accountType || "not an internal account"}, not an EMBEDDED_WALLET`);
      if (source.status === "INACTIVE") throw refuse("it is no longer bound to its card");
      if (source.cardState === "CLOSED") throw refuse("its card is CLOSED");
      const accountId = source.accountId;
      const cardId = source.cardId;
      const now = await platformNow(platformId);
      const body = canonicalJson({ fundingSourceId, nickname });
      try {
        const out = await transact(async (store) => {
          const sandbox = (await environment(store, platformId)) === "SANDBOX";
          const type = await accountType(store, platformId, accountId, now);
          const base = { platformId, accountId, body, now };
          if (!retry) {
            if (await store.delegatedKeys.active(platformId, accountId)) throw keyExists(accountId);
            return { challenge: await issueSignedChallenge(store, { ...base, operation: CREATE, type }) };
          }
          const issued = await store.signedRequests.get(platformId, retry.requestId);
          if (issued?.operation === ACTIVATE) {
            // Third leg: the PENDING key of the second becomes ACTIVE.
            await consumeSignedRetry(store, { ...base, operation: ACTIVATE, retry, sandbox });
            const k = await store.delegatedKeys.byActivationRequest(platformId, retry.requestId);
            if (!k || k.status !== "PENDING") throw unauthorized("Request-Id does not match this request", "no pending delegated key waits for this Request-Id");
            if (await store.delegatedKeys.active(platformId, accountId)) throw keyExists(accountId);
            await store.delegatedKeys.setStatus(platformId, k.id, "PENDING", "ACTIVE", now);
            const activated = toDelegatedKey({ ...k, status: "ACTIVE", updatedAt: now });
            // The ledger's funding source is ACTIVE from this commit on (PENDING_AUTH before): its
            // event commits with the key, or neither does.
            await store.events.delegatedKeyChanged(activated);
            return { key: activated };
          }
          // Second leg: the key pair is made and stored sealed, PENDING, with the third leg's challenge.
          await consumeSignedRetry(store, { ...base, operation: CREATE, retry, sandbox });
          if (await store.delegatedKeys.active(platformId, accountId)) throw keyExists(accountId);
          const next = await issueSignedChallenge(store, { ...base, operation: ACTIVATE, type });
          const id = newId("DelegatedKey");
          const pair = newSessionKeyPair();
          const { sealed, keyId } = deps.walletKeys.seal(pair.secretKey, id);
          pair.secretKey.fill(0);
          await store.delegatedKeys.insert({
            id,
            platformId,
            accountId,
            cardId,
            fundingSourceId,
            publicKey: pair.publicKeyCompressedHex,
            nickname,
            status: "PENDING",
            createdAt: now,
            updatedAt: now,
            sealedKey: sealed,
            keyId,
            activationRequestId: next.requestId,
          });
          return { challenge: next };
        });
        return out;
      } catch (err) {
        // Two third legs racing for one account: the partial unique index lets one be ACTIVE.
        if (isUniqueViolation(err)) throw keyExists(accountId);
        throw err;
      }
    },

    async listDelegatedKeys(platformId: string, filter: { accountId?: string; fundingSourceId?: string }): Promise<DelegatedKey[]> {
      if (!filter.accountId && !filter.fundingSourceId) throw errors.invalidInput([{ field: "accountId", reason: "accountId or fundingSourceId is required" }]);
      return transact(async (store) => (await store.delegatedKeys.list(platformId, filter)).map(toDelegatedKey));
    },

    async getDelegatedKey(platformId: string, id: string): Promise<DelegatedKey> {
      return transact(async (store) => toDelegatedKey(await delegatedKeyOf(store, platformId, id)));
    },

    async revokeDelegatedKey(platformId: string, id: string): Promise<void> {
      const now = await platformNow(platformId);
      await transact(async (store) => {
        const k = await delegatedKeyOf(store, platformId, id, true);
        if (k.status !== "ACTIVE") {
          throw errors.badRequest("DELEGATED_KEY_NOT_ACTIVE", `The delegated key is ${k.status}; only an ACTIVE key can be revoked`, { id, status: k.status });
        }
        // The key authorizes its own end, as Grid's does: it signs the revocation.
        signWith(k, canonicalJson({ operation: "REVOKE_DELEGATED_KEY", id, at: now.toISOString() }));
        await store.delegatedKeys.setStatus(platformId, id, "ACTIVE", "REVOKED", now);
        // The funding source is PENDING_AUTH again at the ledger: the event commits with the revocation.
        await store.events.delegatedKeyChanged(toDelegatedKey({ ...k, status: "REVOKED", updatedAt: now }));
      });
    },

    /**
     * A signed retry of EXECUTE_QUOTE that came without a signature, on an account with an ACTIVE
     * delegated key: the custodied key signs the challenge in place of a session (undefined when
     * the account has none, so the caller answers WALLET_SIGNATURE_MISSING as before).
     */
    async signWithDelegatedKey(platformId: string, accountId: string, operation: string, requestId: string, body: string): Promise<{ sessionId: string } | undefined> {
      if (!(DELEGATED_OPERATIONS as readonly string[]).includes(operation) || !requestId) return undefined;
      const now = await platformNow(platformId);
      return transact(async (store) => {
        const k = await store.delegatedKeys.active(platformId, accountId);
        if (!k) return undefined;
        const request = await checkSignedRequest(store, { platformId, operation, body, retry: { requestId, signature: "" }, now, accountId });
        signWith(k, request.payloadToSign);
        if (!(await store.signedRequests.markUsed(platformId, requestId, now))) {
          throw errors.unauthorized("Request-Id has already been used; start again without it", { reason: "Request-Id already used" });
        }
        return { sessionId: "" };
      });
    },
  };
}
