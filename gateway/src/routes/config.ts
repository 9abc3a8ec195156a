import { checkUrlTarget, errors, targetPolicy, type FieldError, type TargetPolicy } from "@corridor/kit";
import { principalOf } from "../auth.js";
import { configPatchOf, platformConfigToJson, updateConfigToProto, type UpdateConfigJson } from "../mappers/config.js";
import { webhookSecretToJson } from "../mappers/webhooks.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { UpdateConfigBody } from "../schemas/config.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Platform"];
/**
 * The webhookEndpoint rules of the platform's policy (kit net/address-safety.ts; docs/events.md
 * "Webhook endpoint rules (SSRF)"): production, https to a public address or name; sandbox,
 * loopback too (plain http there only) while the operator allows it. The reason names the rule.
 */
export function webhookEndpointProblem(value: string, policy: TargetPolicy): string | undefined {
  if (value === "") return undefined; // clears the endpoint
  const checked = checkUrlTarget(value, policy);
  return "problem" in checked ? checked.problem.reason : undefined;
}

/** Checks JSON Schema cannot express: URL rules, min <= max, unique currency codes. */
export function configBodyProblems(body: UpdateConfigJson, webhookPolicy: TargetPolicy): FieldError[] {
  const problems: FieldError[] = [];
  if (body.webhookEndpoint !== undefined) {
    const reason = webhookEndpointProblem(body.webhookEndpoint, webhookPolicy);
    if (reason) problems.push({ field: "body.webhookEndpoint", reason });
  }
  const seen = new Set<string>();
  body.supportedCurrencies?.forEach((c, i) => {
    if (c.minAmount > c.maxAmount) {
      problems.push({ field: `body.supportedCurrencies[${i}].minAmount`, reason: "must not be greater than maxAmount" });
    }
    if (seen.has(c.currencyCode)) {
      problems.push({ field: `body.supportedCurrencies[${i}].currencyCode`, reason: "appears more than once" });
    }
    seen.add(c.currencyCode);
  });
  return problems;
}

export function configRoutes(app: Api, { clients, platformConfig, webhookTargets }: RouteDeps): void {
  app.get(
    "/config",
    {
      schema: {
        summary: "Get the platform configuration",
        description: "Needs VIEW.",
        tags,
        response: { 200: Ref("PlatformConfig", "The configuration."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      return platformConfigToJson(await platformConfig(platformId));
    },
  );

  app.patch(
    "/config",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Update the platform configuration",
        description:
          "Changes the fields present (JSON merge-patch: null clears umaDomain, webhookEndpoint, passkeyRelyingPartyId, passkeyOrigins, and GET then shows them cleared); supportedCurrencies replaces the whole list. webhookEndpoint must be https to a public address or DNS name (private, loopback, link-local, CGNAT, multicast, reserved and IPv4-embedding IPv6 addresses in any spelling, and internal names such as localhost or *.internal, are refused with 400 INVALID_INPUT naming the rule); sandbox platforms may use loopback, over http too, where the operator allows it. Needs MANAGE.",
        tags,
        body: UpdateConfigBody,
        response: { 200: Ref("PlatformConfig", "The configuration after the change."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId, environment } = principalOf(request);
      const body = configPatchOf(request.body ?? {});
      const problems = configBodyProblems(body, targetPolicy(environment, webhookTargets));
      if (problems.length) throw errors.invalidInput(problems);
      const res = await clients.authSessions.updatePlatformConfig(updateConfigToProto(platformId, body));
      return platformConfigToJson(res.config);
    },
  );

  app.get(
    "/config/webhook-secret",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Get the webhook signing secret",
        description: "The secret that signs webhooks (Standard Webhooks). Needs MANAGE.",
        tags,
        response: { 200: Ref("WebhookSecret", "The signing secret."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.notifications.getWebhookSettings({ platformId });
      return webhookSecretToJson(res.settings);
    },
  );

  app.post(
    "/config/webhook-secret/rotate",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Rotate the webhook signing secret",
        description: "Issues a new secret; the previous one keeps signing beside it until previousSecretExpiresAt. Needs MANAGE.",
        tags,
        response: { 200: Ref("WebhookSecret", "The new signing secret."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.notifications.rotateWebhookSecret({ platformId });
      return webhookSecretToJson(res.settings);
    },
  );
}
