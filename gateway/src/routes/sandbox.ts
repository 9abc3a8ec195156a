import { principalOf } from "../auth.js";
import { HttpError } from "../http-status.js";
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
          "Posts a signed TEST event to the configured webhookEndpoint and answers Grid's TestWebhookResponse `{url, response_status, response_body}` when the endpoint answered (whatever its status; redirects are answered, never followed; at most the first 1024 characters of the body). No answer (connection failed, DNS lookup failed, TLS handshake failed, no answer in time, or target refused: … (rule …)) is 400 WEBHOOK_DELIVERY_FAILED naming that category in details.reason, never a socket error. The endpoint is checked again when sent (every address its name resolves to; the connection goes to a checked one). Sandbox platforms only (production: 403). Needs MANAGE.",
        tags: ["Sandbox"],
        response: { 200: Ref("TestWebhookResult", "The delivery attempt."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.notifications.sendTestWebhook({ platformId });
      const a = res.attempt;
      if (!a) throw new Error("notifications answered without a delivery attempt");
      // responseStatus 0: no HTTP answer came (the attempt's error says why, as a category).
      if (a.responseStatus === 0) {
        const reason = a.error || "no answer";
        throw new HttpError(400, "WEBHOOK_DELIVERY_FAILED", `The TEST webhook got no answer from ${a.url}: ${reason}`, { url: a.url, reason });
      }
      return { url: a.url, response_status: a.responseStatus, response_body: a.responseExcerpt };
    },
  );
}
