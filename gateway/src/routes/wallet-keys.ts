import { Type } from "typebox";
import { isoFromTimestamp } from "@corridor/kit/rest-json";
import type { DelegatedKey } from "@corridor/proto/corridor/auth_sessions/v1/wallet_keys_service_pb.js";
import { principalOf } from "../auth.js";
import { sessionToJson, signedChallengeToJson, signedRetryOf } from "../mappers/wallet-auth.js";
import { errorResponses, Iso8601 } from "../schemas/common.js";
import { SessionIdParams, SignedChallengeSchema } from "../schemas/wallet-auth.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Embedded wallet authentication"];

const RefreshBody = Type.Object(
  {
    clientPublicKey: Type.String({
      pattern: "^(0[23][0-9a-fA-F]{64}|04[0-9a-fA-F]{128})$",
      examples: ["02f45f2a22c908b9ce09a7150e514afd24627c401c38a4afc164e1ea783adaaa31"],
      description:
        "A fresh P-256 public key of the client, hex. Compressed (66 characters, 02/03): the client-held-key model, this key becomes the new session's signing key and nothing is sealed back. Uncompressed (130 characters, 04): a new signing key is made and sealed to it (encryptedSessionSigningKey).",
    }),
  },
  { additionalProperties: false, description: "The new session's client key; the same on both calls." },
);

const RefreshedSessionSchema = Type.Object(
  {
    id: Type.String({ description: "Session:<uuidv7> of the new session." }),
    accountId: Type.String({ description: "The account the session signs for." }),
    type: Type.Enum(["EMAIL_OTP", "OAUTH", "PASSKEY"], { description: "The credential type of the refreshed session." }),
    nickname: Type.String({ description: "The credential's nickname." }),
    createdAt: Iso8601("Creation time."),
    updatedAt: Iso8601("Last change."),
    expiresAt: Iso8601("The new session stops signing at this time (15 minutes after issue)."),
    encryptedSessionSigningKey: Type.Optional(
      Type.String({ description: "Uncompressed clientPublicKey only: the new 32-byte session private key sealed by HPKE to it (base58check(compressed enc ‖ ciphertext))." }),
    ),
  },
  { additionalProperties: false, description: "The new session (Grid's AuthSession)." },
);

const DelegatedKeySchema = Type.Object(
  {
    id: Type.String({ description: "DelegatedKey:<uuidv7>." }),
    cardId: Type.Optional(
      Type.String({ description: "The card the key is delegated for (Grid's required cardId). Absent only on wallet-scoped keys made before cards (docs/grid-parity.md)." }),
    ),
    fundingSourceId: Type.Optional(Type.String({ description: "The card funding source the key was created for (CardFundingSource:<uuidv7>); absent on wallet-scoped keys made before cards." })),
    accountId: Type.String({ description: "The EMBEDDED_WALLET internal account the key signs for, derived from the funding source." }),
    publicKey: Type.String({ description: "Compressed P-256 public key (hex) of the custodied key pair; informational." }),
    nickname: Type.String({ description: "Your label for the key." }),
    status: Type.Enum(["PENDING", "ACTIVE", "REVOKED"], { description: "PENDING: creation stopped after the second leg (it cannot sign); ACTIVE: signs quote executions of the wallet; REVOKED: signs nothing." }),
    createdAt: Iso8601("Creation time."),
    updatedAt: Iso8601("Last change."),
  },
  { additionalProperties: false, description: "A signing key custodied by this service for a card funding source's embedded wallet (Grid's DelegatedKey); its private key is never answered." },
);

const CreateDelegatedKeyBody = Type.Object(
  {
    fundingSourceId: Type.String({
      minLength: 1,
      maxLength: 128,
      description: "The card funding source (CardFundingSource:<uuidv7>, GET /cards/{id}/funding-sources) of an EMBEDDED_WALLET internal account: the key signs for that wallet.",
    }),
    nickname: Type.String({ minLength: 1, maxLength: 256, description: "Your label for the key." }),
  },
  { additionalProperties: false, description: "Grid's DelegatedKeyCreateRequest; the same body on all three legs." },
);

const DelegatedKeyParams = Type.Object(
  { id: Type.String({ pattern: "^DelegatedKey:[0-9a-fA-F-]{1,64}$", description: "DelegatedKey:<uuidv7>." }) },
  { description: "Path parameters naming a delegated key." },
);

const keyToJson = (k: DelegatedKey | undefined) => {
  if (!k) throw new Error("service answered without a delegated key");
  return {
    id: k.id,
    ...(k.cardId ? { cardId: k.cardId } : {}),
    ...(k.fundingSourceId ? { fundingSourceId: k.fundingSourceId } : {}),
    accountId: k.accountId,
    publicKey: k.publicKey,
    nickname: k.nickname,
    status: k.status as "PENDING" | "ACTIVE" | "REVOKED",
    createdAt: isoFromTimestamp(k.createdAt),
    updatedAt: isoFromTimestamp(k.updatedAt),
  };
};

const signedHeaders = "Signed retry: repeat the same request with headers Service-Wallet-Signature (or Grid-Wallet-Signature) and Request-Id.";

/** Grid's session refresh and delegated keys (WalletKeysService). Reads need VIEW; the rest MANAGE, like the other credential routes. */
export function walletKeyRoutes(app: Api, { clients }: RouteDeps): void {
  const keys = clients.walletKeys;

  app.post(
    "/auth/sessions/:sessionId/refresh",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Refresh a session",
        description: `First call (the session must be active): 202 challenge bound to the session and clientPublicKey. ${signedHeaders} The retry must be signed by the key of the session being refreshed, with the same clientPublicKey, while it is still active: 201 a new session of the same credential (the old one stays until it expires or is revoked). An expired or revoked session → 401 SESSION_NOT_ACTIVE (verify the credential again); another session's signature or another clientPublicKey → 401. Needs MANAGE.`,
        tags,
        params: SessionIdParams,
        body: RefreshBody,
        response: { 201: RefreshedSessionSchema, 202: SignedChallengeSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await keys.refreshSession({ platformId, sessionId: request.params.sessionId, clientPublicKey: request.body.clientPublicKey, signedRetry: signedRetryOf(request) });
      if (res.result.case === "challenge") return reply.code(202).send(signedChallengeToJson(res.result.value));
      if (res.result.case !== "session") throw new Error("service answered neither a challenge nor a session");
      const s = res.result.value;
      const session = sessionToJson(s, false);
      return reply.code(201).send(s.encryptedSessionSigningKey ? { ...session, encryptedSessionSigningKey: s.encryptedSessionSigningKey } : session);
    },
  );

  app.post(
    "/auth/delegated-keys",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Create a delegated signing key",
        description: `Three legs, the same body each time. First call: 202 challenge. ${signedHeaders} The second leg (signed by a session of the wallet) makes the key pair here, stores it sealed as PENDING and answers 202 with the third leg's challenge; the third (signed likewise) answers 201 the key, ACTIVE. While ACTIVE, the key signs the wallet's quote executions in place of a session: POST /quotes/{quoteId}/execute may then omit Service-Wallet-Signature. It signs nothing else (credentials, sessions, export and delegated keys still need a session), and it cannot be limited to amounts or recipients. One ACTIVE key per wallet (409 DELEGATED_KEY_EXISTS); an abandoned PENDING key blocks nothing. The funding source names the card (cardId) and the wallet (accountId): an unknown or another platform's funding source is a 404 CARD_FUNDING_SOURCE_NOT_FOUND; one whose account is not an EMBEDDED_WALLET, that is unbound, or whose card is CLOSED is a 400 FUNDING_SOURCE_INELIGIBLE. While the key is ACTIVE the funding source is ACTIVE (PENDING_AUTH before, and again once the key is revoked). Needs MANAGE.`,
        tags,
        body: CreateDelegatedKeyBody,
        response: { 201: DelegatedKeySchema, 202: SignedChallengeSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await keys.createDelegatedKey({ platformId, fundingSourceId: request.body.fundingSourceId, nickname: request.body.nickname, signedRetry: signedRetryOf(request) });
      if (res.result.case === "challenge") return reply.code(202).send(signedChallengeToJson(res.result.value));
      if (res.result.case !== "key") throw new Error("service answered neither a challenge nor a key");
      return reply.code(201).send(keyToJson(res.result.value));
    },
  );

  app.get(
    "/auth/delegated-keys",
    {
      schema: {
        summary: "List delegated signing keys",
        description:
          "The delegated keys of an internal account, of a card funding source, or of both (the filters combine; at least one is required: else 400 INVALID_INPUT): PENDING, ACTIVE and REVOKED, newest first; not paginated; an empty list when none match. Needs VIEW.",
        tags,
        querystring: Type.Object(
          {
            accountId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "The internal account whose keys to list." })),
            fundingSourceId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "The card funding source whose keys to list." })),
          },
          { description: "The account, the funding source, or both." },
        ),
        response: { 200: Type.Object({ data: Type.Array(DelegatedKeySchema, { description: "The keys." }) }, { description: "The keys." }), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await keys.listDelegatedKeys({ platformId, accountId: request.query.accountId ?? "", fundingSourceId: request.query.fundingSourceId ?? "" });
      return { data: res.keys.map(keyToJson) };
    },
  );

  app.get(
    "/auth/delegated-keys/:id",
    {
      schema: {
        summary: "Get a delegated signing key",
        description: "One delegated key. Needs VIEW.",
        tags,
        params: DelegatedKeyParams,
        response: { 200: DelegatedKeySchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      return keyToJson((await keys.getDelegatedKey({ platformId, id: request.params.id })).key);
    },
  );

  app.delete(
    "/auth/delegated-keys/:id",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Revoke a delegated signing key",
        description: "Revokes an ACTIVE key: it authorizes its own end (it signs the revocation) and signs nothing after; 204. A key that is not ACTIVE (REVOKED, or PENDING) → 400 DELEGATED_KEY_NOT_ACTIVE. Needs MANAGE.",
        tags,
        params: DelegatedKeyParams,
        response: { 204: Type.Null({ description: "Revoked." }), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      await keys.revokeDelegatedKey({ platformId, id: request.params.id });
      return reply.code(204).send(null);
    },
  );
}
