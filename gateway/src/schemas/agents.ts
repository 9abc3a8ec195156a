import { Type } from "typebox";
import { AGENT_PERMISSIONS } from "../auth.js";
import { Iso8601, ListEnvelope, Ref, pagingQuery } from "./common.js";
import { QuoteSchema } from "./quotes-fx.js";

/** Schemas of the agent routes: docs/agents.md "Policy" and "JSON shapes". */

const MAX_AMOUNT = 9_000_000_000_000_000;
const Code = (description: string) => Type.String({ pattern: "^[A-Z]{3,5}$", description });
const Limit = (description: string) => Type.Integer({ minimum: 0, maximum: MAX_AMOUNT, description: `${description} Minor units of the policy currency; 0 for none.` });
const Id = (kind: string, description: string) => Type.String({ pattern: `^${kind}:[0-9a-fA-F-]{1,64}$`, description });
const AccountId = (description: string) => Type.String({ minLength: 1, maxLength: 128, description });

export const AgentPermissionSchema = Type.Enum([...AGENT_PERMISSIONS], {
  description:
    "VIEW_TRANSACTIONS (GET /agents/me/transactions), CREATE_QUOTES (POST and GET /agents/me/quotes), EXECUTE_QUOTES (POST /agents/me/quotes/{id}/execute, immediatelyExecute), CREATE_TRANSFERS (POST /agents/me/transfer-in and transfer-out), MANAGE_EXTERNAL_ACCOUNTS (POST and DELETE /agents/me/external-accounts).",
});
const ExecutionModeSchema = Type.Enum(["AUTO", "APPROVAL_REQUIRED"], { description: "AUTO executes at once; APPROVAL_REQUIRED waits for the platform (GET /agents/approvals)." });

const spendingLimitFields = {
  currency: Code("Currency the limits (and usage) are counted in; amounts in other currencies are converted."),
  perTransactionLimit: Limit("Largest amount of one action."),
  dailyLimit: Limit("Largest sum of the actions of one UTC day (platform clock)."),
  dailyTransactionLimit: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT, description: "Largest number of actions of one UTC day; 0 for none." }),
  monthlyLimit: Limit("Largest sum of the actions of one UTC month (platform clock)."),
};

const AccountRuleSchema = Type.Object(
  {
    accountId: AccountId("InternalAccount:… or ExternalAccount:… of the agent's customer."),
    executionMode: Type.Optional(ExecutionModeSchema),
    perTransactionLimit: Type.Optional(Limit("Largest amount of one action touching this account, in every execution mode, with or without spendingLimits (counted in USD when the policy has no spendingLimits).")),
  },
  { additionalProperties: false, description: "Overrides the policy for one account." },
);

const AllowedAccountIds = (description: string) =>
  Type.Union([Type.Array(AccountId("An internal account of the agent's customer."), { maxItems: 100, uniqueItems: true }), Type.Null()], { description });

const ThresholdsFields = {
  currency: Code("Currency of amount."),
  amount: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT, description: "Actions above this amount (minor units) need the platform's approval." }),
};

/** What each field of a partial policy says (create and patch say it differently). */
interface PartialPolicyText {
  permissions: string;
  spendingLimits: string;
  allowedAccountIds: string;
  accountRules: string;
  accountRestrictions: string;
  approvalThresholds: string;
  policy: string;
}

/** A policy whose every field is optional: the body of POST /agents and of PATCH …/policy. */
function partialPolicy(text: PartialPolicyText) {
  return Type.Object(
    {
      permissions: Type.Optional(Type.Array(AgentPermissionSchema, { uniqueItems: true, maxItems: AGENT_PERMISSIONS.length, description: text.permissions })),
      defaultExecutionMode: Type.Optional(ExecutionModeSchema),
      spendingLimits: Type.Optional(
        Type.Object(
          {
            currency: Type.Optional(spendingLimitFields.currency),
            perTransactionLimit: Type.Optional(spendingLimitFields.perTransactionLimit),
            dailyLimit: Type.Optional(spendingLimitFields.dailyLimit),
            dailyTransactionLimit: Type.Optional(spendingLimitFields.dailyTransactionLimit),
            monthlyLimit: Type.Optional(spendingLimitFields.monthlyLimit),
          },
          { additionalProperties: false, description: text.spendingLimits },
        ),
      ),
      accountRestrictions: Type.Optional(
        Type.Object(
          {
            allowedAccountIds: Type.Optional(AllowedAccountIds(text.allowedAccountIds)),
            accountRules: Type.Optional(Type.Array(AccountRuleSchema, { maxItems: 100, description: text.accountRules })),
          },
          { additionalProperties: false, description: text.accountRestrictions },
        ),
      ),
      approvalThresholds: Type.Optional(Type.Union([Type.Object(ThresholdsFields, { additionalProperties: false }), Type.Null()], { description: text.approvalThresholds })),
    },
    { additionalProperties: false, description: text.policy },
  );
}

/** The policy on POST /agents: every field optional (defaults: VIEW_TRANSACTIONS only, APPROVAL_REQUIRED, no limits). */
export const PolicyInput = partialPolicy({
  permissions: "What the agent may do; default [VIEW_TRANSACTIONS].",
  spendingLimits: "Spending limits (an absent or 0 limit means none); absent for none.",
  allowedAccountIds: "The only internal accounts the agent may use; null or absent for every account of the customer.",
  accountRules: "Per-account rules.",
  accountRestrictions: "Which accounts the agent may use.",
  approvalThresholds: "Actions above the amount need approval; null or absent for none.",
  policy: "An agent's policy (docs/agents.md).",
});

/** PATCH /agents/{id}/policy: only the named fields change. */
export const PolicyPatchBody = partialPolicy({
  permissions: "Replaces the permissions.",
  spendingLimits: "Changes the named limits only (0 removes one).",
  allowedAccountIds: "Replaces the allowed accounts; null removes the restriction (every account of the customer is allowed again).",
  accountRules: "Replaces the account rules.",
  accountRestrictions: "Changes the named account restrictions only.",
  approvalThresholds: "Replaces the thresholds; null removes them.",
  policy: "A partial policy: unnamed fields keep their value.",
});

export const AgentPolicySchema = Type.Object(
  {
    permissions: Type.Array(AgentPermissionSchema, { description: "What the agent may do." }),
    defaultExecutionMode: ExecutionModeSchema,
    spendingLimits: Type.Optional(Type.Object(spendingLimitFields, { description: "Spending limits (0 means none); absent when none are set." })),
    accountRestrictions: Type.Object(
      {
        allowedAccountIds: AllowedAccountIds("The only internal accounts the agent may use; null when every account of the customer is allowed."),
        accountRules: Type.Array(
          Type.Object(
            {
              accountId: Type.String({ description: "The account." }),
              executionMode: Type.Optional(ExecutionModeSchema),
              perTransactionLimit: Type.Integer({ description: "Largest amount of one action touching this account, in every execution mode, in the spendingLimits' currency (USD without spendingLimits); 0 for none." }),
            },
            { description: "Overrides the policy for one account." },
          ),
          { description: "Per-account rules." },
        ),
      },
      { description: "Which accounts the agent may use." },
    ),
    approvalThresholds: Type.Optional(Type.Object(ThresholdsFields, { description: "Actions above the amount need approval; absent when none." })),
  },
  { $id: "AgentPolicy", description: "What an agent may do and within which limits." },
);

export const AgentSchema = Type.Object(
  {
    id: Type.String({ description: "Agent:<uuidv7>." }),
    name: Type.String({ description: "Display name." }),
    customerId: Type.String({ description: "The customer the agent acts for." }),
    isPaused: Type.Boolean({ description: "Paused agents cannot act (403 AGENT_PAUSED on /agents/me routes but GET /agents/me)." }),
    isConnected: Type.Boolean({ description: "True once a device code was redeemed." }),
    policy: Ref("AgentPolicy", "The policy."),
    usage: Type.Object(
      {
        dailyTransactionCount: Type.Integer({ description: "Actions counted today (pending and approved ones included)." }),
        dailySpend: Type.Integer({ description: "Amount counted today, minor units of the policy currency." }),
        monthlySpend: Type.Integer({ description: "Amount counted this month." }),
        dailyResetDate: Type.Optional(Type.String({ description: "The UTC date (YYYY-MM-DD) the daily counters next reset." })),
        monthlyResetMonth: Type.Optional(Type.String({ description: "The month (YYYY-MM) the monthly counter next resets." })),
      },
      { description: "What the agent used of its limits in the current windows." },
    ),
    createdAt: Iso8601("Creation time."),
    updatedAt: Iso8601("Last change."),
  },
  { $id: "Agent", description: "A program acting for one customer under a policy." },
);

export const DeviceCodeSchema = Type.Object(
  {
    code: Type.String({ description: "Typeable code, for example ABCD-EFGH (case and dashes ignored on lookup)." }),
    agentId: Type.String({ description: "The agent it connects." }),
    status: Type.Optional(Type.String({ description: "PENDING, REDEEMED, EXPIRED or VOIDED (a newer code replaced it)." })),
    redeemed: Type.Boolean({ description: "Whether it was redeemed." }),
    expiresAt: Iso8601("15 minutes after issue, on the platform's clock."),
  },
  { $id: "DeviceCode", description: "A single-use code that connects an agent's software once." },
);

export const AgentActionSchema = Type.Object(
  {
    id: Type.String({ description: "AgentAction:<uuidv7>." }),
    agentId: Type.String({ description: "Agent:<uuidv7>." }),
    customerId: Type.String({ description: "The agent's customer." }),
    platformCustomerId: Type.String({ description: "The platform's id of that customer." }),
    status: Type.String({ description: "PENDING_APPROVAL, APPROVED, REJECTED or FAILED." }),
    type: Type.String({ description: "EXECUTE_QUOTE, TRANSFER_IN or TRANSFER_OUT." }),
    createdAt: Iso8601("Submission time."),
    updatedAt: Iso8601("Last change."),
    quote: Type.Optional(QuoteSchema),
    transferDetails: Type.Optional(
      Type.Object(
        {
          amount: Type.Integer({ description: "Minor units of currency." }),
          currency: Type.String({ description: "Currency code." }),
          sourceAccountId: Type.String({ description: "Where the money comes from." }),
          destinationAccountId: Type.String({ description: "Where it goes." }),
        },
        { description: "What was asked (EXECUTE_QUOTE: the quote's sending side)." },
      ),
    ),
    transaction: Type.Optional(Ref("Transaction", "The transaction, once execution began.")),
    rejectionReason: Type.Optional(Type.String({ description: "REJECTED: the reason the platform gave." })),
    failureReason: Type.Optional(Type.String({ description: "FAILED: QUOTE_EXPIRED, INSUFFICIENT_BALANCE, EXECUTION_FAILED, AGENT_INACTIVE or POLICY_DENIED." })),
    failureMessage: Type.Optional(Type.String({ description: "FAILED: the cause in words." })),
    expiresAt: Type.Optional(Iso8601("EXECUTE_QUOTE: when the quote (and so the approval) expires.")),
  },
  { $id: "AgentAction", description: "A money-moving submission of an agent." },
);

export const AgentIdParams = Type.Object({ agentId: Id("Agent", "Agent:<uuidv7>.") }, { description: "Path parameters naming an agent." });
export const AgentActionParams = Type.Object(
  { agentId: Id("Agent", "Agent:<uuidv7>."), actionId: Id("AgentAction", "AgentAction:<uuidv7>.") },
  { description: "Path parameters naming an action of an agent." },
);
export const ActionIdParams = Type.Object({ actionId: Id("AgentAction", "AgentAction:<uuidv7>.") }, { description: "Path parameters naming an action." });
export const DeviceCodeParams = Type.Object(
  { code: Type.String({ pattern: "^[A-Za-z0-9-]{1,32}$", description: "The device code, for example ABCD-EFGH (case and dashes ignored)." }) },
  { description: "Path parameters naming a device code." },
);

export const CreateAgentBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: "Display name." }),
    customerId: Type.String({ minLength: 1, maxLength: 128, description: "The customer the agent acts for (Customer:<id> of the platform)." }),
    policy: Type.Optional(PolicyInput),
  },
  { additionalProperties: false, description: "The agent to create." },
);

export const CreatedAgentSchema = Type.Object(
  { agent: Ref("Agent", "The new agent."), deviceCode: Ref("DeviceCode", "Its first device code: give it to the agent's software to redeem.") },
  { description: "The new agent and its device code." },
);

export const UpdateAgentBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "New display name." })),
    isPaused: Type.Optional(Type.Boolean({ description: "Pause (true) or resume (false) the agent." })),
  },
  { additionalProperties: false, minProperties: 1, description: "What to change." },
);

export const ListAgentsQuery = Type.Object(
  {
    ...pagingQuery,
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only this customer's agents." })),
    isPaused: Type.Optional(Type.Boolean({ description: "Only paused (true) or running (false) agents." })),
  },
  { description: "Filters and paging of GET /agents." },
);

export const ListApprovalsQuery = Type.Object(
  {
    ...pagingQuery,
    agentId: Type.Optional(Id("Agent", "Only this agent's actions.")),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only this customer's agents' actions." })),
    startDate: Type.Optional(Iso8601("Only actions submitted at or after this time.")),
    endDate: Type.Optional(Iso8601("Only actions submitted at or before this time.")),
    sortOrder: Type.Optional(Type.Enum(["asc", "desc"], { default: "desc", description: "By submission time; default desc." })),
  },
  { description: "Filters and paging of GET /agents/approvals." },
);

export const ListMyActionsQuery = Type.Object(
  {
    ...pagingQuery,
    status: Type.Optional(Type.Enum(["PENDING_APPROVAL", "APPROVED", "REJECTED", "FAILED"], { description: "Only actions in this status." })),
  },
  { description: "Filters and paging of GET /agents/me/actions." },
);

export const RejectActionBody = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 1000, description: "Why; shown to the agent as rejectionReason." })) },
  { additionalProperties: false, description: "Optional reason." },
);

export const RedeemedDeviceCodeSchema = Type.Object(
  {
    agentId: Type.String({ description: "The agent now connected." }),
    agentName: Type.String({ description: "Its display name." }),
    accessToken: Type.String({ description: "agt_…: the Bearer token of the /agents/me routes. Shown only in this answer; store it now." }),
    policy: Ref("AgentPolicy", "What the agent may do."),
  },
  { description: "The agent's access token, shown once." },
);

export const AgentListSchema = ListEnvelope(Ref("Agent", "An agent."), "One page of agents, newest first.");
export const AgentActionListSchema = ListEnvelope(Ref("AgentAction", "An action."), "One page of agent actions.");

export const agentSchemas = [AgentPolicySchema, AgentSchema, DeviceCodeSchema, AgentActionSchema];
