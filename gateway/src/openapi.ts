import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import { API_VERSION } from "./errors.js";

const PREFIX = `/${API_VERSION}`;

/**
 * The OpenAPI 3.1 document is generated from the same TypeBox schemas that validate requests, so
 * the contract served is the contract enforced. Paths are listed relative to the server URL
 * `/2025-10-13`; routes outside the version (probes) are left out.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Corridor Platform API",
        version: API_VERSION,
        description:
          "Embedded-wallet and cross-border payments platform API. Errors always have the shape {status, code, message, details}; " +
          "400 INVALID_INPUT lists every bad field in details.errors as {field, reason}, where field is the location (body, query, params) " +
          "then the path, for example body.supportedCurrencies[0].minAmount.",
      },
      servers: [{ url: PREFIX, description: "This server, API version 2025-10-13." }],
      components: {
        securitySchemes: {
          basicAuth: {
            type: "http",
            scheme: "basic",
            description: "Username: the API token's clientId. Password: its clientSecret.",
          },
          bearerAuth: {
            type: "http",
            scheme: "bearer",
            description: "An agent's access token (agt_…), from POST /agents/device-codes/{code}/redeem. Only the /agents/me routes take it.",
          },
        },
      },
      tags: [
        { name: "Tokens", description: "API tokens for HTTP Basic authentication." },
        { name: "Platform", description: "The platform's configuration and webhook secret." },
        { name: "Sandbox", description: "Sandbox-only helpers (production platforms get 403)." },
        { name: "Meta", description: "The contract itself." },
        { name: "Agents", description: "The platform's agents: policies, device codes and approvals of agent actions (HTTP Basic)." },
        { name: "Agent operations", description: "What an agent does for its customer, under its policy (HTTP Bearer: the agent's access token)." },
      ],
    },
    // Shared schemas keep their own names under components.schemas.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === "string" ? json.$id : `def-${i}`) },
    transform: ({ schema, url, route }) => {
      if (!url.startsWith(`${PREFIX}/`)) return { schema: { ...schema, hide: true }, url };
      const authScheme = route.config?.auth ?? "basic";
      const security = authScheme === "basic" ? [{ basicAuth: [] }] : authScheme === "bearer" ? [{ bearerAuth: [] }] : [];
      const withSecurity = { ...schema, security };
      return { schema: withSecurity, url: url.slice(PREFIX.length) };
    },
  });

  app.get(
    `${PREFIX}/openapi.json`,
    {
      config: { auth: "none" },
      schema: {
        summary: "The OpenAPI 3.1 document of this API",
        description: "The contract as served by this gateway, generated from the schemas that validate requests.",
        tags: ["Meta"],
        response: {
          200: Type.Object(
            { openapi: Type.String({ description: "OpenAPI version, 3.1.0." }) },
            { additionalProperties: true, description: "An OpenAPI 3.1 document." },
          ),
        },
      },
    },
    async () => app.swagger(),
  );

  // The reference page serves Swagger UI's bundled assets from the package: it works offline.
  await app.register(async (docs) => {
    docs.addHook("onRoute", (route) => {
      route.config = { ...(route.config ?? {}), auth: "none" };
    });
    await docs.register(swaggerUi, {
      routePrefix: `${PREFIX}/docs`,
      staticCSP: true,
      uiConfig: { docExpansion: "list", deepLinking: true },
    });
  });
}
