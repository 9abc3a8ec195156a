import { Type } from "typebox";
import { Iso8601 } from "./common.js";

export const TestWebhookResultSchema = Type.Object(
  {
    id: Type.String({ description: "Webhook:<uuidv7>, the webhook-id the receiver saw." }),
    type: Type.String({ description: "Event type; TEST." }),
    url: Type.String({ description: "URL posted to." }),
    responseStatus: Type.Integer({ description: "HTTP status the endpoint answered; 0 when no answer came." }),
    delivered: Type.Boolean({ description: "Whether the endpoint answered 2xx." }),
    error: Type.Optional(Type.String({ description: "Transport error when no answer came." })),
    attemptedAt: Iso8601("When the attempt was made."),
  },
  { $id: "TestWebhookResult", description: "The outcome of one test delivery." },
);

export const sandboxSchemas = [TestWebhookResultSchema];
