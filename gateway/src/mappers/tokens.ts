import { create } from "@bufbuild/protobuf";
import { TimeRangeSchema } from "@corridor/proto/corridor/common/v1/paging_pb.js";
import type { Token } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import { Permission } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import { isoFromTimestamp, timestampFromIso } from "@corridor/kit/rest-json";

export type PermissionName = "VIEW" | "TRANSACT" | "MANAGE";

const toProto: Record<PermissionName, Permission> = {
  VIEW: Permission.VIEW,
  TRANSACT: Permission.TRANSACT,
  MANAGE: Permission.MANAGE,
};

export function permissionToProto(p: PermissionName): Permission {
  return toProto[p];
}

/** Unknown or unspecified values are dropped: a permission the gateway cannot name grants nothing. */
export function permissionsFromProto(ps: readonly Permission[]): PermissionName[] {
  const out: PermissionName[] = [];
  for (const p of ps) {
    const name = (Object.keys(toProto) as PermissionName[]).find((k) => toProto[k] === p);
    if (name) out.push(name);
  }
  return out;
}

export interface TokenJson {
  id: string;
  name: string;
  permissions: PermissionName[];
  clientId: string;
  createdAt: string;
  updatedAt: string;
}

export function tokenToJson(t: Token | undefined): TokenJson {
  if (!t) throw new Error("service answered without a token");
  return {
    id: t.id,
    name: t.name,
    permissions: permissionsFromProto(t.permissions),
    clientId: t.clientId,
    createdAt: isoFromTimestamp(t.createdAt),
    updatedAt: isoFromTimestamp(t.updatedAt),
  };
}

export function timeRange(after: string | undefined, before: string | undefined) {
  if (after === undefined && before === undefined) return undefined;
  return create(TimeRangeSchema, { after: timestampFromIso(after), before: timestampFromIso(before) });
}

