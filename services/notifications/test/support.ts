import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import { randomBytes } from "node:crypto";
import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import {
  createLogger,
  migrateSchema,
  openDatabase,
  toConnectError,
  type Bus,
  type ConsumerDefinition,
  type DatabaseHandle,
  subscribeService,
  type BusMessage,
  type ConfigBoard,
  type ManualClock,
  type ServiceName,
  type SubscribeOptions,
} from "@corridor/kit";
import { PlatformEventSchema, type PlatformEvent } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { Environment, PlatformConfigSchema } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { NotificationsService } from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import pg from "pg";
import type { CustomerEventSchema } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import { LedgerEventSchema, type LedgerEvent } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import type { AgentEventSchema } from "@corridor/proto/corridor/agents/v1/events_pb.js";
import type { DeliveryWorker } from "../src/workers/delivery.js";
import { newSigningKeyPem, signingKeyOf, type SigningKey } from "../src/domain/grid-webhooks.js";
import { service } from "../src/server.js";
import type { NotificationsDatabase } from "../src/data/tables.js";
import type { Kysely, KyselyPlugin } from "kysely";

/** A database of its own for one test file: a fresh Postgres database when DATABASE_URL is set, else PGlite in memory. */
export async function openTestDatabase(): Promise<{ handle: DatabaseHandle; close(): Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const handle = await openDatabase({});
    return { handle, close: () => handle.close() };
  }
  const name = `corridor_t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database "${name}"`).finally(() => admin.end());
  const url = new URL(base);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ databaseUrl: url.toString(), poolSize: 4 });
  return {
    handle,
    async close() {
      await handle.close();
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`).finally(() => c.end());
    },
  };
}

/** Consumers here are called directly; nothing in these tests goes through a bus. */
const unusedBus: Bus = {
  kind: "in-process",
  publish: async () => {
    throw new Error("notifications publishes nothing");
  },
  subscribe: async () => ({ close: async () => undefined }),
  close: async () => undefined,
};

/** What the hosts add around every service: thrown AppErrors keep their public meaning. */
const appErrors: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (err) {
    throw toConnectError(err);
  }
};

export interface NotificationsUnderTest {
  client: Client<typeof NotificationsService>;
  consumer: ConsumerDefinition<typeof PlatformEventSchema>;
  db: Kysely<NotificationsDatabase>;
  /** Runs the consumer as the host's inbox does: inside one transaction of the schema. */
  deliver(event: PlatformEvent): Promise<void>;
  /** The customer and ledger consumers that enqueue event webhooks. */
  customerConsumer: ConsumerDefinition<typeof CustomerEventSchema>;
  ledgerConsumer: ConsumerDefinition<typeof LedgerEventSchema>;
  /** The corridor.agents.approvals.v1 consumer (AGENT_ACTION_PENDING_APPROVAL webhooks). */
  agentConsumer: ConsumerDefinition<typeof AgentEventSchema>;
  /** Runs any consumer inside one transaction, as the inbox does (without its once-per-id check). */
  handle<D extends DescMessage>(consumer: ConsumerDefinition<D>, event: MessageShape<D>): Promise<void>;
  /** The event-webhook delivery worker, never started: tests drive its polls. */
  worker: DeliveryWorker;
  /**
   * Hands fetched messages to the service's consumers as the host does (the kit's subscribeService:
   * admit, inbox, batched transactions), through a database that counts what the consumers send.
   */
  consume(messages: BusMessage[]): Promise<void>;
  /** Statements and transactions the consumers sent through `consume` so far. */
  consumed: { statements: number; transactions: number };
}

/** A Kysely plugin counting every statement compiled through it (BEGIN and COMMIT are not statements here). */
function countingPlugin(counts: { statements: number }): KyselyPlugin {
  return {
    transformQuery(args) {
      counts.statements++;
      return args.node;
    },
    async transformResult(args) {
      return args.result;
    },
  };
}

/**
 * auth-sessions as notifications sees it in these tests: GetPlatform answers each platform's
 * environment (`environmentOf`, SANDBOX unless it says otherwise: the webhook-target policy
 * depends on it); GetPlatformConfig is the test's own transport's answer, or Unavailable without one.
 */
function authSessionsFake(given: Transport | undefined, environmentOf: (platformId: string) => "SANDBOX" | "PRODUCTION"): Transport {
  const real = given && createClient(AuthSessionsService, given);
  return createRouterTransport((router) =>
    router.service(AuthSessionsService, {
      getPlatform: (req) => ({
        platform: { id: req.platformId, environment: environmentOf(req.platformId) === "PRODUCTION" ? Environment.PRODUCTION : Environment.SANDBOX },
      }),
      async getPlatformConfig(req) {
        if (!real) throw new ConnectError("no auth-sessions in this test", Code.Unavailable);
        return real.getPlatformConfig(req);
      },
    }),
  );
}

/** The sandbox as notifications sees it in these tests: every sandbox platform's clock is the test's clock. */
function sandboxFake(clock: ManualClock): Transport {
  return createRouterTransport((router) =>
    router.service(SandboxService, {
      getClock: () => ({ now: timestampFromDate(clock.now()), offsetSeconds: 0n }),
    } as never),
  );
}

/**
 * `transports` stands in for the services notifications calls (auth-sessions' GetPlatformConfig);
 * without one, such a call fails and the service falls back to what it holds itself. Platforms are
 * sandbox platforms unless `environmentOf` says otherwise.
 */
export async function startNotifications(
  handle: DatabaseHandle,
  clock: ManualClock,
  env: NodeJS.ProcessEnv = {},
  transports: Partial<Record<ServiceName, Transport>> = {},
  environmentOf: (platformId: string) => "SANDBOX" | "PRODUCTION" = () => "SANDBOX",
  opts: { configBoard?: ConfigBoard } = {},
): Promise<NotificationsUnderTest> {
  transports = { sandbox: sandboxFake(clock), ...transports, "auth-sessions": authSessionsFake(transports["auth-sessions"], environmentOf) };
  await migrateSchema(handle, service.schema, service.migrationsDir);
  const built = await service.build({
    db: handle,
    bus: unusedBus,
    clock,
    log: createLogger("notifications-test", "silent"),
    transportFor: (name) => {
      const t = transports[name];
      if (!t) throw new Error(`no ${name} in this test`);
      return t;
    },
    env,
    configBoard: opts.configBoard,
  });
  const transport = createRouterTransport(built.routes, { router: { interceptors: [appErrors] } });
  const consumer = built.consumers[0] as ConsumerDefinition<typeof PlatformEventSchema>;
  const db = handle.forSchema<NotificationsDatabase>(service.schema);
  const consumed = { statements: 0, transactions: 0 };
  const counted = db.withPlugin(countingPlugin(consumed));
  const countingDb = new Proxy(counted, {
    get: (t, k) => {
      if (k === "transaction") consumed.transactions++;
      // Bound to the Kysely instance: its methods read private fields, which a proxy does not have.
      const v = Reflect.get(t, k);
      return typeof v === "function" ? v.bind(t) : v;
    },
  });
  let subscribed: SubscribeOptions | undefined;
  await subscribeService({
    db: countingDb,
    bus: { ...unusedBus, subscribe: async (o) => ((subscribed = o), { close: async () => undefined }) },
    service: "notifications",
    consumers: built.consumers,
    log: createLogger("notifications-test", "silent"),
  });
  return {
    consume: async (messages) => {
      const batched = messages.every((m) => subscribed!.batchTopics?.includes(m.topic));
      if (batched && subscribed!.handleBatch) await subscribed!.handleBatch(messages);
      else for (const m of messages) await subscribed!.handle(m);
    },
    consumed,
    client: createClient(NotificationsService, transport),
    consumer,
    db,
    deliver: (event) => db.transaction().execute((trx) => consumer.handle(event, trx)),
    customerConsumer: built.consumers.find((c) => c.name === "customer-webhooks") as ConsumerDefinition<typeof CustomerEventSchema>,
    ledgerConsumer: built.consumers.find((c) => c.name === "ledger-webhooks") as ConsumerDefinition<typeof LedgerEventSchema>,
    agentConsumer: built.consumers.find((c) => c.name === "agent-webhooks") as ConsumerDefinition<typeof AgentEventSchema>,
    handle: (c, event) => db.transaction().execute((trx) => c.handle(event, trx)),
    worker: built.workers.find((w) => w.name === "webhook-delivery") as DeliveryWorker,
  };
}

/** A signing key for senders built outside the service (a fresh P-256 key per test process). */
const testKey = signingKeyOf(newSigningKeyPem());
export const testSigningKey = async (): Promise<SigningKey> => testKey;

export function newPlatformId(): string {
  return `Platform:${crypto.randomUUID()}`;
}

function config(platformId: string, webhookEndpoint: string, updatedAt: Timestamp) {
  return create(PlatformConfigSchema, {
    id: `PlatformConfig:${crypto.randomUUID()}`,
    platformId,
    webhookEndpoint,
    updatedAt,
    createdAt: updatedAt,
  });
}

export function platformCreated(platformId: string, webhookEndpoint: string, updatedAt: Date): PlatformEvent {
  return create(PlatformEventSchema, {
    eventId: `Event:${crypto.randomUUID()}`,
    platformId,
    occurredAt: timestampFromDate(updatedAt),
    payload: {
      case: "platformCreated",
      value: { platform: { id: platformId, name: "Test platform" }, config: config(platformId, webhookEndpoint, timestampFromDate(updatedAt)) },
    },
  });
}

export function configUpdated(platformId: string, webhookEndpoint: string, updatedAt: Date | Timestamp): PlatformEvent {
  const ts = updatedAt instanceof Date ? timestampFromDate(updatedAt) : updatedAt;
  return create(PlatformEventSchema, {
    eventId: `Event:${crypto.randomUUID()}`,
    platformId,
    occurredAt: ts,
    payload: { case: "configUpdated", value: { config: config(platformId, webhookEndpoint, ts) } },
  });
}

export function tokenRevoked(platformId: string): PlatformEvent {
  return create(PlatformEventSchema, {
    eventId: `Event:${crypto.randomUUID()}`,
    platformId,
    payload: { case: "tokenRevoked", value: { token: {} } },
  });
}

/** A ledger event: the platform's outgoing transaction `txId` COMPLETED (10.00 USD) at `at`. */
export function outgoingCompleted(platformId: string, txId: string, at: Date): LedgerEvent {
  const ts = timestampFromDate(at);
  const usd = { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 };
  return create(LedgerEventSchema, {
    eventId: `Event:${crypto.randomUUID()}`,
    occurredAt: ts,
    platformId,
    eventType: "OUTGOING_PAYMENT_COMPLETED",
    payload: {
      case: "transactionChanged",
      value: { transaction: { id: txId, status: "COMPLETED", type: "OUTGOING", amount: 1000n, sentAmount: 1000n, currency: usd, sentCurrency: usd, exchangeRate: "1", createdAt: ts, updatedAt: ts } },
    },
  });
}

/** What `check` answers once it answers something, looked at every 20 ms for up to `timeoutMs`. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} did not happen`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
