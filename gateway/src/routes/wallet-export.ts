import { Type } from "typebox";
import { principalOf } from "../auth.js";
import { signedChallengeToJson, signedRetryOf } from "../mappers/wallet-auth.js";
import { errorResponses } from "../schemas/common.js";
import { AccountIdParams, ExportBody, SignedChallengeSchema } from "../schemas/wallet-auth.js";
import type { Api, RouteDeps } from "./types.js";

/** POST /internal-accounts/{id}/export: the wallet's secret key sealed to a client key, by signed retry (MANAGE). */
export function walletExportRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/internal-accounts/:accountId/export",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Export an embedded wallet",
        description:
          "First call: 202 challenge. Signed retry (Service-Wallet-Signature and Request-Id, same body): 200 {id, encryptedWalletCredentials}, the wallet's 32-byte secret key sealed by HPKE to clientPublicKey. Needs MANAGE.",
        tags: ["Embedded wallet authentication"],
        params: AccountIdParams,
        body: ExportBody,
        response: {
          200: Type.Object(
            {
              id: Type.String({ description: "The account id." }),
              encryptedWalletCredentials: Type.String({ description: "base58check(compressed enc ‖ ciphertext), HPKE as for session keys." }),
            },
            { additionalProperties: false, description: "The exported wallet." },
          ),
          202: SignedChallengeSchema,
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await clients.walletAuth.exportWallet({
        platformId,
        accountId: request.params.accountId,
        clientPublicKey: request.body.clientPublicKey,
        signedRetry: signedRetryOf(request),
      });
      if (res.result.case === "challenge") return reply.code(202).send(signedChallengeToJson(res.result.value));
      if (res.result.case !== "export") throw new Error("service answered neither a challenge nor an export");
      return reply.code(200).send({ id: res.result.value.id, encryptedWalletCredentials: res.result.value.encryptedWalletCredentials });
    },
  );
}
