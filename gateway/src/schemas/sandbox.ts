import { Type } from "typebox";

/** Grid's TestWebhookResponse: what the endpoint answered the TEST webhook, and nothing else. */
export const TestWebhookResultSchema = Type.Object(
  {
    url: Type.String({ description: "The webhookEndpoint the TEST event was posted to." }),
    response_status: Type.Integer({ description: "The HTTP status the endpoint answered (a 3xx is answered, never followed).", examples: [200] }),
    response_body: Type.String({
      description: "The start of the endpoint's answer body (at most its first 1024 characters); empty when it had none.",
      examples: ['{"received":true}'],
    }),
  },
  { $id: "TestWebhookResult", additionalProperties: false, description: "Grid's TestWebhookResponse: the endpoint's answer to one TEST delivery." },
);

export const sandboxSchemas = [TestWebhookResultSchema];
