import { principalOf } from "../auth.js";
import { deliveryAttemptToJson } from "../mappers/webhooks.js";
import { Ref, errorResponses } from "../schemas/common.js";
import type { Api, RouteDeps } from "./types.js";

export function sandboxRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/sandbox/webhooks/test",
    {
      config: { permission: "MANAGE", sandboxOnly: true },
      schema: {
        summary: "Send a test webhook",
        description:
          "Posts a signed TEST event to the configured webhookEndpoint and answers the attempt. The endpoint is checked again when sent (every address its name resolves to; the connection goes to a checked one); redirects are answered, never followed; at most the first 1024 characters of the answer are shown; a failure is a category (connection failed, target refused: … (rule …), …), never a socket error. Sandbox platforms only (production: 403). Needs MANAGE.",
        tags: ["Sandbox"],
        response: { 200: Ref("TestWebhookResult", "The delivery attempt."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.notifications.sendTestWebhook({ platformId });
      return deliveryAttemptToJson(res.attempt);
    },
  );
}
