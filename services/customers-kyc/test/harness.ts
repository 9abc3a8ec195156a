export { expectRefusal as expectPublicError, fieldsOf } from "@corridor/kit/testing";
import { randomBytes } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { ConnectError, createClient, createRouterTransport, type Client, type ConnectRouter } from "@connectrpc/connect";
import { ManualClock, appErrorInterceptor, sql, type DatabaseHandle } from "@corridor/kit";
import { CustomersKycService } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import { KycAdminService } from "@corridor/proto/corridor/customers_kyc/v1/kyc_admin_service_pb.js";
import { CustomerEventSchema, type CustomerEvent } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import { expect } from "vitest";
import type { CustomerHoldings, CustomerLedger, PlatformDirectory } from "../src/domain/ports.js";
import type { PlatformSettings } from "../src/domain/types.js";
import type { ContactCodeSender } from "../src/domain/contact-verification.js";
import type { KycProviderFactory } from "../src/domain/kyc-provider.js";
import { buildCustomersKyc, service } from "../src/server.js";
import { openServiceTestDatabase } from "@corridor/kit/testing";

export type TestPlatform = PlatformSettings & { environment: "SANDBOX" | "PRODUCTION" };

export interface Harness {
  db: DatabaseHandle;
  clock: ManualClock;
  /** Each sandbox platform's sandbox clock offset (ms), as SandboxService.GetClock would add it to `clock`. */
  sandboxOffsets: Map<string, number>;
  /** What the fake ledger answers per customer id (default: holds nothing); `closed` records the customers it closed. */
  ledger: { holdings: Map<string, Omit<CustomerHoldings, "closed">>; closed: Set<string>; unavailable: boolean };
  client: Client<typeof CustomersKycService>;
  /** The operator's review queue (KycAdminService). */
  admin: Client<typeof KycAdminService>;
  /** The service's Connect routes (to serve them on a port). */
  routes: (router: ConnectRouter) => void;
  /** Registers a platform the fake auth-sessions knows; answers its id. */
  platform(settings?: Partial<TestPlatform>): string;
  /** Events in the outbox, oldest first. */
  events(): Promise<{ topic: string; key: string; type: string; event: CustomerEvent }[]>;
  close(): Promise<void>;
}

let platformSeq = 0;

/** The service over a real database, with auth-sessions replaced by a map of platform settings. */
export async function startHarness(
  opts: { env?: NodeJS.ProcessEnv; codes?: string[]; kycProvider?: KycProviderFactory; codeSender?: ContactCodeSender; newContactCode?: () => string } = {},
): Promise<Harness> {
  const { db, drop } = await openServiceTestDatabase(service);
  const clock = new ManualClock("2025-10-13T12:00:00.000Z");
  const platforms = new Map<string, TestPlatform>();
  const directory: PlatformDirectory = {
    async settings(platformId) {
      const p = platforms.get(platformId);
      if (!p) throw new Error(`unknown platform ${platformId}`);
      return p;
    },
  };
  const codes = [...(opts.codes ?? [])];
  const sandboxOffsets = new Map<string, number>();
  const ledgerState = { holdings: new Map<string, Omit<CustomerHoldings, "closed">>(), closed: new Set<string>(), unavailable: false };
  const ledger: CustomerLedger = {
    async closeIfEmpty(_platformId, customerId) {
      if (ledgerState.unavailable) throw new Error("ledger unavailable");
      const h = ledgerState.holdings.get(customerId) ?? { accounts: [], inFlightTransactions: [] };
      const empty = h.accounts.length === 0 && h.inFlightTransactions.length === 0;
      if (empty) ledgerState.closed.add(customerId);
      return { ...h, closed: empty || ledgerState.closed.has(customerId) };
    },
  };
  const built = buildCustomersKyc({
    db,
    clock,
    env: opts.env ?? {},
    platforms: directory,
    ledger,
    newInvitationCode: codes.length ? () => codes.shift() ?? randomBytes(12).toString("base64url") : undefined,
    sandboxNow: async (platformId) => new Date(clock.now().getTime() + (sandboxOffsets.get(platformId) ?? 0)),
    kycProvider: opts.kycProvider,
    codeSender: opts.codeSender,
    newContactCode: opts.newContactCode,
  });
  const transport = createRouterTransport(built.routes, { router: { interceptors: [appErrorInterceptor] } });
  return {
    db,
    clock,
    sandboxOffsets,
    ledger: ledgerState,
    client: createClient(CustomersKycService, transport),
    admin: createClient(KycAdminService, transport),
    routes: built.routes,
    platform(settings = {}) {
      const id = `Platform:test-${++platformSeq}`;
      platforms.set(id, { umaDomain: "acme.sandbox.uma.money", supportedCurrencies: ["USD", "EUR"], isRegulated: false, environment: "SANDBOX", ...settings });
      return id;
    },
    async events() {
      const { rows } = await sql<{ topic: string; key: string; headers: Record<string, string>; payload: Uint8Array }>`
        select topic, key, headers, payload from customers_kyc.outbox order by id`.execute(db.root);
      return rows.map((r) => ({ topic: r.topic, key: r.key, type: r.headers["event-type"]!, event: fromBinary(CustomerEventSchema, r.payload) }));
    },
    close: drop,
  };
}


