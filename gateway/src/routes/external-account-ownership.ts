import type { OwnershipChallenge } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Type } from "typebox";
import { principalOf } from "../auth.js";
import { externalAccountToJson } from "../mappers/external-accounts.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { ExternalAccountIdParams, OwnershipChallengeBody, OwnershipChallengeSchema, OwnershipVerifyBody } from "../schemas/external-accounts.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["External accounts"];

function challengeToJson(c: OwnershipChallenge) {
  const expiresAt = c.expiresAt ? timestampDate(c.expiresAt).toISOString() : "";
  const common = {
    id: c.id,
    externalAccountId: c.externalAccountId,
    status: c.status as "PENDING" | "VERIFIED" | "FAILED" | "EXPIRED",
    createdAt: c.createdAt ? timestampDate(c.createdAt).toISOString() : "",
  };
  if (c.method === "WALLET_SIGNATURE") {
    return { method: "WALLET_SIGNATURE" as const, messageToSign: c.messageToSign, expiresAt, ...common, attemptsRemaining: c.attemptsRemaining };
  }
  return { method: "MICRO_DEPOSITS" as const, ...common, currency: c.currency, depositCount: c.depositCount, attemptsRemaining: c.attemptsRemaining, expiresAt };
}

/**
 * External-account ownership verification (issue 27; Grid's challenge/verify routes), for
 * customers' accounts and the platform's own. Spark wallets: Grid's WALLET_SIGNATURE, the wallet's
 * identity key signs the challenge's message. Bank accounts (a Corridor extension): the ledger sends
 * two small credits through the account's rail and checks the amounts the owner confirms.
 */
export function externalAccountOwnershipRoutes(app: Api, { clients }: RouteDeps): void {
  for (const [prefix, owner] of [
    ["/customers", "CUSTOMER"],
    ["/platform", "PLATFORM"],
  ] as const) {
    const whose = owner === "CUSTOMER" ? "a customer's" : "the platform's";
    app.post(
      `${prefix}/external-accounts/:externalAccountId/challenge`,
      {
        config: { permission: "MANAGE" },
        // The method defaults to the account's (WALLET_SIGNATURE or MICRO_DEPOSITS): no body means the default.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          summary: `Start ownership verification of ${whose} external account`,
          description:
            "Answers 201 with the challenge; the account becomes PENDING_OWNERSHIP_VERIFICATION. SPARK_WALLET (Grid's WALLET_SIGNATURE, the default for wallets): a WalletSignatureChallenge whose messageToSign the wallet's identity key signs; asking again replaces the outstanding challenge (one live message per account). Bank accounts (Corridor's MICRO_DEPOSITS extension, their default): two micro-deposits (1 to 99 minor units each; sandbox platforms: always 32 and 45) through the account's rail; asking again while one is outstanding answers it again and sends nothing. 409 OWNERSHIP_VERIFICATION_NOT_APPLICABLE (the method cannot verify the account: LIGHTNING, LIVENESS, a wallet method on a bank account or the reverse; the message says why), 409 EXTERNAL_ACCOUNT_ALREADY_VERIFIED, 400 PAYMENT_RAIL_NOT_AVAILABLE (micro-deposits of a production platform with no connector bound for the account's rails). Needs MANAGE.",
          tags,
          params: ExternalAccountIdParams,
          body: Type.Optional(OwnershipChallengeBody),
          response: { 201: OwnershipChallengeSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { platformId } = principalOf(request);
        const res = await clients.ledger.startOwnershipChallenge({ platformId, owner, accountId: request.params.externalAccountId, method: request.body?.method ?? "" });
        return reply.code(201).send(challengeToJson(res.challenge!));
      },
    );

    app.post(
      `${prefix}/external-accounts/:externalAccountId/verify`,
      {
        config: { permission: "MANAGE" },
        schema: {
          summary: `Verify ownership of ${whose} external account`,
          description:
            "SPARK_WALLET: {signature, signatureScheme?} over the challenge's messageToSign. Valid: 200 with the account, status ACTIVE. Invalid: 400 OWNERSHIP_SIGNATURE_INVALID with details.attemptsRemaining; with none left (by default the first invalid one, as Grid does) the challenge failed and the account is UNVERIFIED. Expired challenge: 400 OWNERSHIP_CHALLENGE_EXPIRED, the account UNVERIFIED. An unknown signatureScheme: 400 INVALID_INPUT naming the account's schemes (bip137, electrum, spark). Bank accounts (Corridor's extension): {amounts}, the two micro-deposits the owner saw (minor units, either order); right: 200 ACTIVE; wrong: 400 MICRO_DEPOSIT_AMOUNTS_MISMATCH with details.attemptsRemaining, the third fails the challenge (400 MICRO_DEPOSIT_ATTEMPTS_EXCEEDED, the account UNVERIFIED). 409 OWNERSHIP_CHALLENGE_NOT_FOUND when none is outstanding (never started, replaced, failed, or a micro-deposit challenge expired after 14 days or a credit failed or came back); 409 EXTERNAL_ACCOUNT_ALREADY_VERIFIED once verified (a replayed signature changes nothing). Needs MANAGE.",
          tags,
          params: ExternalAccountIdParams,
          body: OwnershipVerifyBody,
          response: { 200: Ref("ExternalAccount", "The verified account (status ACTIVE)."), ...errorResponses },
        },
      },
      async (request) => {
        const { platformId } = principalOf(request);
        const b = request.body;
        const res = await clients.ledger.verifyOwnership({
          platformId,
          owner,
          accountId: request.params.externalAccountId,
          amounts: (b.amounts ?? []).map(BigInt),
          signature: b.signature ?? "",
          signatureScheme: b.signatureScheme ?? "",
        });
        return externalAccountToJson(res.account);
      },
    );
  }
}
