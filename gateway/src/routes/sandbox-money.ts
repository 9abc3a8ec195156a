import { timestampDate } from "@bufbuild/protobuf/wkt";
import { principalOf } from "../auth.js";
import { markIdempotentEffectDone } from "../idempotency.js";
import { internalAccountToJson } from "../mappers/internal-accounts.js";
import { numberFromInt64 } from "@corridor/kit/rest-json";
import { Ref, errorResponses } from "../schemas/common.js";
import { ClockAdvanceBody, FundBody, FundParams } from "../schemas/sandbox-money.js";
import { IdempotencyHeaders } from "../schemas/transfers.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Sandbox"];

/** Sandbox money endpoints: funding internal accounts and moving the sandbox clock. */
export function sandboxMoneyRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/sandbox/internal-accounts/:accountId/fund",
    {
      config: { permission: "TRANSACT", sandboxOnly: true },
      schema: {
        summary: "Fund an internal account (sandbox)",
        description: "Adds sandbox money at once (1 to 100000000000 minor units per call) and answers the account. Honours Idempotency-Key. Sandbox platforms only. Needs TRANSACT.",
        tags,
        headers: IdempotencyHeaders,
        params: FundParams,
        body: FundBody,
        response: { 200: Ref("InternalAccount", "The account after funding."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await clients.ledger.fundInternalAccount({
        platformId,
        accountId: request.params.accountId,
        amount: BigInt(request.body.amount),
        idempotencyKey: request.headers["idempotency-key"] ?? "",
      });
      markIdempotentEffectDone(request);
      if (res.replayed) reply.header("Idempotent-Replayed", "true");
      return internalAccountToJson(res.account);
    },
  );

  app.post(
    "/sandbox/clock/advance",
    {
      config: { permission: "TRANSACT", sandboxOnly: true },
      schema: {
        summary: "Move the sandbox clock forward",
        description: "Moves this platform's sandbox clock forward and fires the sandbox outcomes that became due (for example transfer suffix 005 failing after 30 s), so tests never sleep. Sandbox platforms only. Needs TRANSACT.",
        tags,
        body: ClockAdvanceBody,
        response: { 200: Ref("SandboxClock", "The clock after the move."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.sandbox.advanceClock({ platformId, seconds: BigInt(request.body.seconds) });
      return {
        now: res.now ? timestampDate(res.now).toISOString() : new Date().toISOString(),
        offsetSeconds: numberFromInt64(res.offsetSeconds),
        fired: res.fired,
      };
    },
  );
}
