import { Type } from "typebox";
import { principalOf } from "../auth.js";
import { Ref, errorResponses } from "../schemas/common.js";
import type { Api, RouteDeps } from "./types.js";

/** The key that verifies X-Grid-Signature (docs/events.md, "X-Grid-Signature"). */
export const WebhookPublicKeySchema = Type.Object(
  {
    publicKey: Type.String({ description: "PEM (SPKI) of the deployment's P-256 public key that verifies X-Grid-Signature." }),
    algorithm: Type.Literal("ECDSA_P256_SHA256", {
      description: "X-Grid-Signature is the base64 of the DER ECDSA P-256 signature, SHA-256, of the raw request body.",
    }),
  },
  { $id: "WebhookPublicKey", description: "The public key that verifies every webhook's X-Grid-Signature header." },
);

export function webhookPublicKeyRoutes(app: Api, { clients }: RouteDeps): void {
  app.get(
    "/config/webhook-public-key",
    {
      schema: {
        summary: "Get the webhook signature public key",
        description:
          "The deployment's public key (PEM) that verifies the X-Grid-Signature header every webhook carries: an ECDSA P-256 / SHA-256 signature of the exact request body, base64 of its DER encoding. The same key for every platform of the deployment. Needs VIEW.",
        tags: ["Platform"],
        response: { 200: Ref("WebhookPublicKey", "The public key."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.notifications.getWebhookPublicKey({ platformId });
      return { publicKey: res.publicKey, algorithm: "ECDSA_P256_SHA256" as const };
    },
  );
}
