import { Type } from "typebox";
import { Iso8601 } from "./common.js";

export const FundBody = Type.Object(
  { amount: Type.Integer({ minimum: 1, maximum: 100_000_000_000, description: "Minor units to add, 1 to 100000000000." }) },
  { additionalProperties: false, description: "Sandbox money to add." },
);

export const FundParams = Type.Object(
  { accountId: Type.String({ pattern: "^InternalAccount:[0-9a-fA-F-]{1,64}$", description: "InternalAccount:<uuidv7>." }) },
  { description: "Path parameters naming an internal account." },
);

export const ClockAdvanceBody = Type.Object(
  { seconds: Type.Integer({ minimum: 1, maximum: 2_592_000, description: "Seconds to move the platform's sandbox clock forward (1 to 30 days)." }) },
  { additionalProperties: false, description: "How far to move the sandbox clock." },
);

export const SandboxClockSchema = Type.Object(
  {
    now: Iso8601("The platform's sandbox time after the move."),
    offsetSeconds: Type.Integer({ description: "How far the platform's sandbox clock is ahead of real time." }),
    fired: Type.Integer({ description: "Scheduled sandbox outcomes that fired because of this move." }),
  },
  { $id: "SandboxClock", description: "The platform's sandbox clock." },
);

export const sandboxMoneySchemas = [SandboxClockSchema];
