import { errors, type FieldError } from "@corridor/kit";
import { principalOf } from "../auth.js";
import { configPatchOf, platformConfigToJson, updateConfigToProto, type UpdateConfigJson } from "../mappers/config.js";
import { webhookSecretToJson } from "../mappers/webhooks.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { UpdateConfigBody } from "../schemas/config.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Platform"];
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** https anywhere; plain http only to this machine (local development receivers). */
export function webhookEndpointProblem(value: string): string | undefined {
  if (value === "") return undefined; // clears the endpoint
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute URL";
  }
  if (url.username || url.password) return "must not carry credentials";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && LOCAL_HOSTS.has(url.hostname)) return undefined;
  return "must use https (plain http only for localhost, 127.0.0.1 or [::1])";
}

/** Checks JSON Schema cannot express: URL rules, min <= max, unique currency codes. */
export function configBodyProblems(body: UpdateConfigJson): FieldError[] {
  const problems: FieldError[] = [];
  if (body.webhookEndpoint !== undefined) {
    const reason = webhookEndpointProblem(body.webhookEndpoint);
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

export function configRoutes(app: Api, { clients, platformConfig }: RouteDeps): void {
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
          "Changes the fields present (JSON merge-patch: null clears umaDomain, webhookEndpoint, passkeyRelyingPartyId, passkeyOrigins, and GET then shows them cleared); supportedCurrencies replaces the whole list. webhookEndpoint must be https (http only on localhost). Needs MANAGE.",
        tags,
        body: UpdateConfigBody,
        response: { 200: Ref("PlatformConfig", "The configuration after the change."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const body = configPatchOf(request.body ?? {});
      const problems = configBodyProblems(body);
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
