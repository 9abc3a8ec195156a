import { Type } from "typebox";
import { Iso8601 } from "./common.js";

export const TestWebhookResultSchema = Type.Object(
  {
    id: Type.String({ description: "Webhook:<uuidv7>, the webhook-id the receiver saw." }),
    type: Type.String({ description: "Event type; TEST." }),
    url: Type.String({ description: "URL posted to." }),
    responseStatus: Type.Integer({ description: "HTTP status the endpoint answered; 0 when no answer came." }),
    delivered: Type.Boolean({ description: "Whether the endpoint answered 2xx." }),
    error: Type.Optional(
      Type.String({
        description:
          "Why no answer came, as a category: connection failed, DNS lookup failed, TLS handshake failed, no answer within N ms, or target refused: <reason> (rule …) when the endpoint breaks the webhook endpoint rules. Never a socket error's details.",
        examples: ["connection failed"],
      }),
    ),
    attemptedAt: Iso8601("When the attempt was made."),
    response_status: Type.Integer({ description: "Grid's name for responseStatus: the HTTP status the endpoint answered; 0 when no answer came.", examples: [200] }),
    response_body: Type.String({
      description: "Grid's TestWebhookResponse field: the start of the endpoint's answer body (at most its first 1024 characters); empty when there was none or no answer.",
      examples: ['{"received":true}'],
    }),
  },
  { $id: "TestWebhookResult", description: "The outcome of one test delivery." },
);

export const sandboxSchemas = [TestWebhookResultSchema];
