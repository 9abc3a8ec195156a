import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  AuthenticateResponseSchema,
  AuthSessionsService,
  CreateTokenResponseSchema,
  DeleteTokenResponseSchema,
  GetPlatformConfigResponseSchema,
  GetPlatformResponseSchema,
  GetTokenResponseSchema,
  ListTokensResponseSchema,
  UpdatePlatformConfigResponseSchema,
} from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import type { AuthSessions } from "../domain/auth-sessions.js";
import {
  configToPb,
  currencyFromPb,
  environmentOf,
  permissionFromPb,
  permissionsToPb,
  platformToPb,
  tokenToPb,
  windowFromPb,
} from "./mappers.js";

/** AuthSessionsService: maps each RPC onto the use cases and back. */
export function createAuthSessionsHandler({ auth }: { auth: AuthSessions }): ServiceImpl<typeof AuthSessionsService> {
  return {
    async authenticate(req) {
      const who = await auth.authenticate(req.clientId, req.clientSecret);
      return create(AuthenticateResponseSchema, {
        platformId: who.platformId,
        tokenId: who.tokenId,
        permissions: permissionsToPb(who.permissions),
        environment: environmentOf(who.environment),
        secretSha256: who.secretSha256,
      });
    },

    async getPlatform(req) {
      return create(GetPlatformResponseSchema, { platform: platformToPb(await auth.getPlatform(req.platformId)) });
    },

    async createToken(req) {
      const { token, clientSecret } = await auth.createToken(req.platformId, {
        name: req.name,
        permissions: req.permissions.map(permissionFromPb),
      });
      return create(CreateTokenResponseSchema, { token: tokenToPb(token), clientSecret });
    },

    async listTokens(req) {
      const page = await auth.listTokens(
        {
          platformId: req.platformId,
          name: req.name === "" ? undefined : req.name,
          created: windowFromPb(req.created),
          updated: windowFromPb(req.updated),
        },
        { limit: req.page?.limit, cursor: req.page?.cursor || undefined },
      );
      return create(ListTokensResponseSchema, {
        tokens: page.tokens.map(tokenToPb),
        pageInfo: { hasMore: page.hasMore, nextCursor: page.nextCursor ?? "", totalCount: BigInt(page.totalCount) },
      });
    },

    async getToken(req) {
      return create(GetTokenResponseSchema, { token: tokenToPb(await auth.getToken(req.platformId, req.tokenId)) });
    },

    async deleteToken(req) {
      return create(DeleteTokenResponseSchema, { token: tokenToPb(await auth.deleteToken(req.platformId, req.tokenId)) });
    },

    async getPlatformConfig(req) {
      return create(GetPlatformConfigResponseSchema, { config: configToPb(await auth.getConfig(req.platformId)) });
    },

    async updatePlatformConfig(req) {
      const config = await auth.updateConfig(req.platformId, {
        umaDomain: req.umaDomain,
        webhookEndpoint: req.webhookEndpoint,
        supportedCurrencies: req.supportedCurrencies?.currencies.map(currencyFromPb),
        passkeyRelyingPartyId: req.passkeyRelyingPartyId,
        passkeyOrigins: req.passkeyOrigins ? [...req.passkeyOrigins.origins] : undefined,
        webhookEventNaming: req.webhookEventNaming,
      });
      return create(UpdatePlatformConfigResponseSchema, { config: configToPb(config) });
    },
  };
}
