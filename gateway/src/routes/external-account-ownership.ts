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
  return {
    method: "MICRO_DEPOSITS" as const,
    id: c.id,
    externalAccountId: c.externalAccountId,
    status: c.status as "PENDING" | "VERIFIED" | "FAILED" | "EXPIRED",
    currency: c.currency,
    depositCount: c.depositCount,
    attemptsRemaining: c.attemptsRemaining,
    expiresAt: c.expiresAt ? timestampDate(c.expiresAt).toISOString() : "",
    createdAt: c.createdAt ? timestampDate(c.createdAt).toISOString() : "",
  };
}

/**
 * External-account ownership verification by micro-deposits (issue 27; Grid's challenge/verify
 * routes), for customers' accounts and the platform's own: the ledger sends two small credits
 * through the account's rail and checks the amounts the owner confirms.
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
        // The method defaults to MICRO_DEPOSITS: no body means the default.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          summary: `Start ownership verification of ${whose} external account`,
          description:
            "Sends two micro-deposits (1 to 99 minor units each; sandbox platforms: always 32 and 45) to the bank account through its rail and answers 201 with the challenge; the account becomes PENDING_OWNERSHIP_VERIFICATION. Asking again while a challenge is outstanding answers it again and sends nothing. 409 OWNERSHIP_VERIFICATION_NOT_APPLICABLE (not a bank account, or another method), 409 EXTERNAL_ACCOUNT_ALREADY_VERIFIED, 400 PAYMENT_RAIL_NOT_AVAILABLE (a production platform with no connector bound for the account's rails). Needs MANAGE.",
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
          summary: `Confirm the micro-deposits of ${whose} external account`,
          description:
            "Checks the two amounts the owner saw (minor units, either order). Right: 200 with the account, status ACTIVE. Wrong: 400 MICRO_DEPOSIT_AMOUNTS_MISMATCH with details.attemptsRemaining; the third wrong answer fails the challenge (400 MICRO_DEPOSIT_ATTEMPTS_EXCEEDED, the account UNVERIFIED). 409 OWNERSHIP_CHALLENGE_NOT_FOUND when none is outstanding (never started, expired after 14 days, or a credit failed or came back). Needs MANAGE.",
          tags,
          params: ExternalAccountIdParams,
          body: OwnershipVerifyBody,
          response: { 200: Ref("ExternalAccount", "The verified account (status ACTIVE)."), ...errorResponses },
        },
      },
      async (request) => {
        const { platformId } = principalOf(request);
        const res = await clients.ledger.verifyOwnership({ platformId, owner, accountId: request.params.externalAccountId, amounts: request.body.amounts.map(BigInt) });
        return externalAccountToJson(res.account);
      },
    );
  }
}
