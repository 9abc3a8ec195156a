import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import swagger from "@fastify/swagger";
import type { FastifyInstance, FastifyReply } from "fastify";
import { Type } from "typebox";
import { API_VERSION } from "./errors.js";
import { documentedResponses } from "./route-errors.js";
import { REFERENCE_TAGS, escapePlaceholders, referenceTags, withExamples } from "./openapi-reference.js";

const PREFIX = `/${API_VERSION}`;

/**
 * The reference renderer: Redoc's standalone bundle, read from the installed package (the image
 * carries this one file: RUNTIME_FILES in scripts/build.mjs). Nothing is fetched from elsewhere.
 */
const REDOC_BUNDLE = fileURLToPath(new URL("../node_modules/redoc/bundles/redoc.standalone.js", import.meta.url));
const RENDERER_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";

/**
 * The reference page's policy: its own scripts only (the bundle and the start-up script, no
 * inline script), styles inline (the renderer injects them), its search index in a blob worker,
 * data from this origin only.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const INTRO = `Corridor is an open-source, self-hostable payments platform API: onboard customers, hold their money in internal accounts and embedded wallets, move it in and out of banks, convert it through quotes, let agents spend under a policy, and try all of it in a sandbox.

## Authentication
Every route takes HTTP Basic with an API token: the username is its **clientId**, the password its **clientSecret** (\`POST /tokens\` creates one; the secret is shown once). The \`/agents/me\` routes take an agent's Bearer token instead.

## Errors
Every answer that is not 2xx has the shape \`{status, code, message, details}\`. \`code\` is stable UPPER_SNAKE (for example \`INSUFFICIENT_BALANCE\`); \`400 INVALID_INPUT\` lists every bad field in \`details.errors\` as \`{field, reason}\`, where field is the location then the path (\`body.supportedCurrencies[0].minAmount\`). Every answer carries a \`Request-Id\` header: quote it when asking for help. Each operation below lists the codes it can answer.

## Idempotency
Every POST, PUT, PATCH and DELETE called with credentials honours an \`Idempotency-Key\` header: the same key and request within 24 h answers the first response again, status and body byte for byte (\`Idempotent-Replayed: true\`), and has no second effect; while the first runs, \`409 IDEMPOTENCY_KEY_IN_USE\`; the same key with another route or body, \`422 IDEMPOTENCY_KEY_REUSED\`; a refused request (4xx) frees its key. The money-moving routes and external-account registration store the answer with their effect in their service; the others are recorded by the gateway (each route's description says so).

## Lists
Lists answer \`{data, hasMore, nextCursor, totalCount}\`; pass \`nextCursor\` back as \`cursor\` for the next page (\`limit\` 1–100, default 20).

## Amounts
Amounts are integers in the currency's minor units (cents for USD): \`{"amount": 2500, "currency": {"code": "USD", "decimals": 2}}\` is 25.00 USD.

## Webhooks
Events are POSTed to the platform's \`webhookEndpoint\` as \`{id, type, timestamp, data}\`, signed per Standard Webhooks; \`GET /events\` lists them with every delivery attempt.`;

/**
 * The OpenAPI 3.1 document is generated from the same TypeBox schemas that validate requests, so
 * the contract served is the contract enforced. Paths are listed relative to the server URL
 * `/2025-10-13`; routes outside the version (probes, the reference page) are left out. Every
 * operation is filed under one of the reference's groups (openapi-reference.ts, in the order a
 * platform integrates) and gets a request and response example where its schemas have none.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Corridor Platform API",
        version: API_VERSION,
        description: INTRO,
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
      tags: REFERENCE_TAGS,
    },
    // Shared schemas keep their own names under components.schemas.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === "string" ? json.$id : `def-${i}`) },
    transform: ({ schema, url, route }) => {
      if (!url.startsWith(`${PREFIX}/`) || route.config?.reference === false) return { schema: { ...schema, hide: true }, url };
      const authScheme = route.config?.auth ?? "basic";
      const security = authScheme === "basic" ? [{ basicAuth: [] }] : authScheme === "bearer" ? [{ bearerAuth: [] }] : [];
      const path = url.slice(PREFIX.length);
      const tags = referenceTags(path.replace(/:([A-Za-z0-9_]+)/g, "{$1}"), schema?.tags as string[] | undefined);
      const response = documentedResponses(route.method, path, schema, authScheme !== "none");
      return { schema: { ...schema, ...(tags ? { tags } : {}), security, response }, url: path };
    },
    transformObject: (documentObject) => escapePlaceholders(withExamples((documentObject as { openapiObject: Record<string, unknown> }).openapiObject)) as never,
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
            { additionalProperties: true, description: "An OpenAPI 3.1 document.", examples: [{ openapi: "3.1.0" }] },
          ),
        },
      },
    },
    async () => app.swagger(),
  );

  registerReferencePage(app);
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** false: a route under the version that is not part of the contract (the reference page itself). */
    reference?: boolean;
  }
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Corridor API reference · ${API_VERSION}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="reference.css">
</head>
<body>
<noscript>The reference needs JavaScript. The contract itself is <a href="../openapi.json">openapi.json</a>.</noscript>
<div id="reference"></div>
<script src="redoc.standalone.js"></script>
<script src="reference.js"></script>
</body>
</html>
`;

const STYLE = `body { margin: 0; }
/* The renderer's own credit link in the menu: Corridor's reference shows Corridor's name only. */
a[href^="https://redocly.com/redoc"] { display: none !important; }
`;

/** Starts the renderer on the document next door, themed for reading; no fonts from elsewhere. */
const START = `"use strict";
Redoc.init(
  "../openapi.json",
  {
    expandResponses: "200,201,202",
    jsonSampleExpandLevel: 3,
    requiredPropsFirst: true,
    pathInMiddlePanel: true,
    nativeScrollbars: true,
    showObjectSchemaExamples: true,
    hideDownloadButton: false,
    theme: {
      colors: { primary: { main: "#0f5f73" } },
      typography: {
        fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif",
        fontSize: "15px",
        lineHeight: "1.6",
        headings: { fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif", fontWeight: "600" },
        code: { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" },
      },
      sidebar: { backgroundColor: "#f6f8f9", width: "280px" },
      rightPanel: { backgroundColor: "#17252b" },
    },
  },
  document.getElementById("reference"),
);
`;

interface Asset {
  body: string | Buffer;
  type: string;
  etag: string;
}

const etagOf = (body: string | Buffer) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
const asset = (body: string, type: string): Asset => ({ body, type, etag: etagOf(body) });

/**
 * GET /2025-10-13/docs/ and its three assets, without credentials: Corridor's page around Redoc,
 * which reads /2025-10-13/openapi.json. Each answer is revalidated by its ETag.
 */
function registerReferencePage(app: FastifyInstance): void {
  const assets = new Map<string, Asset | (() => Asset)>([
    ["", asset(PAGE, "text/html; charset=utf-8")],
    ["reference.css", asset(STYLE, "text/css; charset=utf-8")],
    ["reference.js", asset(START, "text/javascript; charset=utf-8")],
    // Read on first use (1 MB), then kept.
    [
      "redoc.standalone.js",
      () => {
        // The renderer's credit link (hidden by reference.css) shows a logo from its vendor's CDN:
        // the page loads nothing from elsewhere, so that address is emptied (the image then hides itself).
        const body = readFileSync(REDOC_BUNDLE, "utf8").replaceAll(RENDERER_LOGO, "");
        return { body, type: "text/javascript; charset=utf-8", etag: etagOf(body) };
      },
    ],
  ]);
  const send = (name: string, ifNoneMatch: string | undefined, reply: FastifyReply) => {
    let a = assets.get(name)!;
    if (typeof a === "function") assets.set(name, (a = a()));
    reply
      .header("content-security-policy", DOCS_CSP)
      .header("x-content-type-options", "nosniff")
      .header("cache-control", "no-cache")
      .header("etag", a.etag)
      .type(a.type);
    if (ifNoneMatch === a.etag) return reply.code(304).send();
    return reply.send(a.body);
  };
  const config = { auth: "none" as const, reference: false };
  app.get(`${PREFIX}/docs`, { config }, async (_request, reply) => reply.redirect(`${PREFIX}/docs/`));
  for (const name of assets.keys()) {
    app.get(`${PREFIX}/docs/${name}`, { config }, async (request, reply) => send(name, request.headers["if-none-match"], reply));
  }
}
