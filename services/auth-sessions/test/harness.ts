export { expectRefusal as expectPublicError, fieldsOf } from "@corridor/kit/testing";
import { create, fromBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { ManualClock, appErrorInterceptor, errors, sql, type ConfigBoard, type DatabaseHandle, type Logger } from "@corridor/kit";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { PlatformEventSchema, type PlatformEvent } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { expect } from "vitest";
import { WalletAuthService } from "@corridor/proto/corridor/auth_sessions/v1/wallet_auth_service_pb.js";
import type { ScaCustomer } from "../src/domain/sca/ports.js";
import type { AccountDirectory, Mailer } from "../src/domain/wallet/ports.js";
import { buildAuthSessions, service } from "../src/server.js";
import { CodeDeliveryService } from "@corridor/proto/corridor/auth_sessions/v1/code_delivery_service_pb.js";
import { WalletKeysService } from "@corridor/proto/corridor/auth_sessions/v1/wallet_keys_service_pb.js";
import { openServiceTestDatabase } from "@corridor/kit/testing";

export interface Harness {
  db: DatabaseHandle;
  clock: ManualClock;
  auth: Client<typeof AuthSessionsService>;
  admin: Client<typeof PlatformAdminService>;
  wallet: Client<typeof WalletAuthService>;
  walletKeys: Client<typeof WalletKeysService>;
  codeDelivery: Client<typeof CodeDeliveryService>;
  /** A new sandbox platform and its bootstrap credentials. */
  newPlatform(opts?: { environment?: Environment; regulated?: boolean; name?: string }): Promise<{ platformId: string; clientId: string; clientSecret: string; tokenId: string }>;
  /** Events this service put in its outbox, oldest first. */
  outboxEvents(): Promise<{ topic: string; key: string; headers: Record<string, string>; event: PlatformEvent }[]>;
  close(): Promise<void>;
}


export async function startHarness(
  opts: { env?: NodeJS.ProcessEnv; accounts?: AccountDirectory; mailer?: Mailer; log?: Logger; configBoard?: ConfigBoard; sandboxNow?: (platformId: string) => Promise<Date> } = {},
): Promise<Harness> {
  const { db, drop } = await openServiceTestDatabase(service);
  const clock = new ManualClock("2025-10-13T12:00:00.000Z");
  const built = buildAuthSessions({ db, clock, env: opts.env, accounts: opts.accounts, mailer: opts.mailer, log: opts.log, configBoard: opts.configBoard, sandboxNow: opts.sandboxNow });
  const transport = createRouterTransport(built.routes, { router: { interceptors: [appErrorInterceptor] } });
  const auth = createClient(AuthSessionsService, transport);
  const admin = createClient(PlatformAdminService, transport);
  return {
    db,
    clock,
    auth,
    admin,
    wallet: createClient(WalletAuthService, transport),
    walletKeys: createClient(WalletKeysService, transport),
    codeDelivery: createClient(CodeDeliveryService, transport),
    async newPlatform(opts = {}) {
      const res = await admin.createPlatform({
        name: opts.name ?? "Test platform",
        environment: opts.environment ?? Environment.SANDBOX,
        isRegulatedFinancialInstitution: opts.regulated ?? false,
      });
      return { platformId: res.platform!.id, clientId: res.token!.clientId, clientSecret: res.clientSecret, tokenId: res.token!.id };
    },
    async outboxEvents() {
      const rows = await readOutbox(db);
      return rows.map((r) => ({ ...r, event: fromBinary(PlatformEventSchema, r.payload) }));
    },
    close: drop,
  };
}

/** Reads the kit's outbox table in the auth_sessions schema (nothing relays it in these tests). */
async function readOutbox(db: DatabaseHandle) {
  const { rows } = await sql<{ topic: string; key: string; headers: Record<string, string>; payload: Uint8Array }>`
    select topic, key, headers, payload from auth_sessions.outbox order by id`.execute(db.root);
  return rows;
}



export const ts = (iso: string) => timestampFromDate(new Date(iso));
export { create };

/** customers-kyc as the SCA routes see it, over a map a test fills: a customer of another platform is not found. */
export function scaCustomerDirectory(customers: Map<string, ScaCustomer & { platformId: string }>) {
  return {
    async get(platformId: string, customerId: string) {
      const c = customers.get(customerId);
      if (!c || c.platformId !== platformId) throw errors.notFound("Customer", customerId);
      return c;
    },
  };
}
