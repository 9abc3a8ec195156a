import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  CreatePlatformResponseSchema,
  GetDeploymentResponseSchema,
  ListPlatformsResponseSchema,
  PlatformAdminService,
} from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import type { AuthSessions } from "../domain/auth-sessions.js";
import { environmentFromPb, platformToPb, tokenToPb } from "./mappers.js";

/** PlatformAdminService: the operator's RPCs (served, never routed from the public API). */
export function createPlatformAdminHandler({ auth }: { auth: AuthSessions }): ServiceImpl<typeof PlatformAdminService> {
  return {
    async createPlatform(req) {
      const created = await auth.createPlatform({
        name: req.name,
        environment: environmentFromPb(req.environment),
        isRegulated: req.isRegulatedFinancialInstitution,
        clientId: req.clientId || undefined,
        clientSecret: req.clientSecret || undefined,
      });
      return create(CreatePlatformResponseSchema, {
        platform: platformToPb(created.platform),
        token: tokenToPb(created.token),
        clientSecret: created.clientSecret,
      });
    },

    async listPlatforms() {
      return create(ListPlatformsResponseSchema, { platforms: (await auth.listPlatforms()).map(platformToPb) });
    },

    async getDeployment() {
      const d = await auth.describeDeployment();
      return create(GetDeploymentResponseSchema, {
        deploymentId: d.id,
        name: d.name,
        database: d.database,
        platformCount: d.platformCount,
        createdAt: timestampFromDate(d.createdAt),
      });
    },
  };
}
