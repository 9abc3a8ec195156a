import { AppError } from "@corridor/kit";
import { principalOf } from "../auth.js";
import { quoteJson } from "../mappers/quotes-fx.js";
import { errorResponses } from "../schemas/common.js";
import { QuoteParams, QuoteSchema, ScaAuthorizationBody } from "../schemas/quotes-fx.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Strong Customer Authentication"];

/** The code of an ScaAuthorization: Corridor issues one-time-code (SMS_OTP) challenges only. */
function codeOf(body: { code?: string | null; passkeyAssertion?: object | null }): string {
  if (body.code) return body.code;
  const reason = body.passkeyAssertion ? "is required: the challenge's factor is SMS_OTP (a one-time code), not PASSKEY" : "is required: the one-time code the customer received";
  throw new AppError("INVALID", "INVALID_INPUT", `body.code: ${reason}`, { errors: [{ field: "body.code", reason }] });
}

/** Strong customer authentication of quotes (docs/sca.md): POST /quotes/{id}/authorize and /authorize/resend. */
export function scaRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/quotes/:quoteId/authorize",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Authorize a quote's SCA challenge",
        description:
          "Satisfies the strong-customer-authentication challenge of a quote in PENDING_AUTHORIZATION (customers in SCA-regulated regions paying a destination they have not trusted; docs/sca.md) with the one-time code the customer received (sandbox: always 123456). 200 the quote: PENDING (a REALTIME_FUNDING quote now with its paymentInstructions), or executed when it was created with immediatelyExecute. 400 SCA_CODE_INVALID (details.attemptsLeft), SCA_CHALLENGE_EXPIRED, SCA_ATTEMPTS_EXCEEDED (5 wrong codes); 409 SCA_NOT_PENDING when the quote waits for no challenge, 409 QUOTE_EXPIRED. Needs TRANSACT.",
        tags,
        params: QuoteParams,
        body: ScaAuthorizationBody,
        response: { 200: QuoteSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.quotesFx.authorizeQuote({ platformId, quoteId: request.params.quoteId, code: codeOf(request.body) });
      return quoteJson(res.quote);
    },
  );

  app.post(
    "/quotes/:quoteId/authorize/resend",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Resend a quote's SCA challenge code",
        description:
          "Sends a fresh one-time code for the challenge of a PENDING_AUTHORIZATION quote (the same challenge: its expiresAt is not extended, and wrong codes already tried still count). 204. 429 RATE_LIMITED within 30 seconds of the last code (Retry-After); 409 SCA_NOT_PENDING when the quote waits for no live challenge. Needs TRANSACT.",
        tags,
        params: QuoteParams,
        response: { 204: { type: "null", description: "Code sent." }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      await clients.quotesFx.resendQuoteAuthorization({ platformId, quoteId: request.params.quoteId });
      return reply.code(204).send(null);
    },
  );
}
