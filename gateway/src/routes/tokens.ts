import { errors } from "@corridor/kit";
import { principalOf } from "../auth.js";
import { permissionToProto, timeRange, tokenToJson } from "../mappers/tokens.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { CreateTokenBody, ListTokensQuery, TokenIdParams, TokenListSchema } from "../schemas/tokens.js";
import { listEnvelope, pageOf } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Tokens"];

export function tokenRoutes(app: Api, { clients, auth }: RouteDeps): void {
  app.post(
    "/tokens",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Create an API token",
        description:
          "Creates a token with the given permissions. The clientSecret is answered only here. The new token's permissions must be ones the calling token holds: 403 FORBIDDEN with details.missingPermissions otherwise. Needs MANAGE.",
        tags,
        body: CreateTokenBody,
        response: { 201: Ref("CreatedToken", "The new token, with its secret."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId, permissions: held } = principalOf(request);
      // A token may hand out only what it holds itself, or MANAGE alone would reach TRANSACT.
      const missing = request.body.permissions.filter((p) => !held.includes(p));
      if (missing.length > 0) {
        throw errors.forbidden(`This token cannot grant permissions it does not hold: ${missing.join(", ")}`, { missingPermissions: missing });
      }
      const res = await clients.authSessions.createToken({
        platformId,
        name: request.body.name,
        permissions: request.body.permissions.map(permissionToProto),
      });
      return reply.code(201).send({ ...tokenToJson(res.token), clientSecret: res.clientSecret });
    },
  );

  app.get(
    "/tokens",
    {
      schema: {
        summary: "List API tokens",
        description: "Pages through the platform's tokens, newest first. Needs VIEW.",
        tags,
        querystring: ListTokensQuery,
        response: { 200: TokenListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.authSessions.listTokens({
        platformId,
        page: pageOf(q),
        name: q.name ?? "",
        created: timeRange(q.createdAfter, q.createdBefore),
        updated: timeRange(q.updatedAfter, q.updatedBefore),
      });
      return listEnvelope(res.tokens.map(tokenToJson), res.pageInfo);
    },
  );

  app.get(
    "/tokens/:tokenId",
    {
      schema: {
        summary: "Get an API token",
        description: "Reads one token (never its secret). Needs VIEW.",
        tags,
        params: TokenIdParams,
        response: { 200: Ref("Token", "The token."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.authSessions.getToken({ platformId, tokenId: request.params.tokenId });
      return tokenToJson(res.token);
    },
  );

  app.delete(
    "/tokens/:tokenId",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Delete an API token",
        description:
          "Revokes the token at once and answers 204 with no body (as Grid does). Requests made with it fail with 401 from then on. Needs MANAGE.",
        tags,
        params: TokenIdParams,
        response: { 204: { type: "null", description: "Deleted." }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await clients.authSessions.deleteToken({ platformId, tokenId: request.params.tokenId });
      // Only after the service confirmed: the cached principal must not outlive the token.
      await auth.evict(tokenToJson(res.token).clientId);
      return reply.code(204).send(null);
    },
  );
}
