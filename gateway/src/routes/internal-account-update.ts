import { Type } from "typebox";
import { isoFromTimestamp } from "@corridor/kit/rest-json";
import { principalOf } from "../auth.js";
import { internalAccountToJson } from "../mappers/internal-accounts.js";
import { signedRetryOf } from "../mappers/wallet-auth.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { AccountIdParams, SignedChallengeSchema } from "../schemas/wallet-auth.js";
import type { Api, RouteDeps } from "./types.js";

const UpdateInternalAccountBody = Type.Object(
  { privateEnabled: Type.Optional(Type.Boolean({ description: "Whether wallet privacy is on for the embedded wallet." })) },
  { additionalProperties: false, description: "Grid's InternalAccountUpdateRequest: the fields to change (today only privateEnabled, of EMBEDDED_WALLET accounts); the same body on the first call and the signed retry." },
);

/** PATCH /internal-accounts/{id}: an embedded wallet's privacy, by signed retry (Grid's updateInternalAccount; MANAGE). */
export function internalAccountUpdateRoutes(app: Api, { clients }: RouteDeps): void {
  app.patch(
    "/internal-accounts/:accountId",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Update an internal account (wallet privacy)",
        description:
          "Sets privateEnabled on an EMBEDDED_WALLET account. First call (no signature headers): 202 challenge binding the body. Signed retry (Service-Wallet-Signature or Grid-Wallet-Signature, signed with a session key of the wallet's account, and Request-Id; the same body): 200 with the updated account. 400 INVALID_INPUT without privateEnabled or for an account that is no EMBEDDED_WALLET; 401 on a bad, reused or expired signature, or a retry body that differs (WALLET_SIGNATURE_BODY_MISMATCH). Needs MANAGE.",
        tags: ["Internal accounts"],
        params: AccountIdParams,
        body: UpdateInternalAccountBody,
        response: { 200: Ref("InternalAccount", "The updated account."), 202: SignedChallengeSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const retry = signedRetryOf(request);
      const res = await clients.ledger.updateInternalAccount({
        platformId,
        accountId: request.params.accountId,
        privateEnabled: request.body.privateEnabled,
        requestId: retry.requestId,
        signature: retry.signature,
      });
      if (res.result.case === "challenge") {
        const c = res.result.value;
        return reply.code(202).send({ type: c.type, payloadToSign: c.payloadToSign, requestId: c.requestId, expiresAt: isoFromTimestamp(c.expiresAt) });
      }
      if (res.result.case !== "account") throw new Error("service answered neither a challenge nor an account");
      return reply.code(200).send(internalAccountToJson(res.result.value));
    },
  );
}
