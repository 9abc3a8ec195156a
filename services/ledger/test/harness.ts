export { refusalOf as publicError } from "@corridor/kit/testing";
import { create, fromBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import {
  AppError,
  ManualClock,
  appErrorInterceptor,
  errors,
  inTransaction,
  newId,
  sql,
  toConnectError,
  topics,
  type ConsumerDefinition,
  type DatabaseHandle,
  type Kysely,
} from "@corridor/kit";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { WalletAuthService } from "@corridor/proto/corridor/auth_sessions/v1/wallet_auth_service_pb.js";
import { PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { CustomersKycService } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import { CustomerEventSchema } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import { LedgerEventSchema, type LedgerEvent } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { CardsService } from "@corridor/proto/corridor/ledger/v1/cards_service_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { RailInstructionSchema, RailOutcomeSchema, type RailInstruction } from "@corridor/proto/corridor/ledger/v1/rails_pb.js";
import { expect } from "vitest";
import { buildLedger, connectDirectory, connectWalletSignatures, service } from "../src/server.js";
import { openServiceTestDatabase, openTestDatabase } from "@corridor/kit/testing";
import type { WalletSignatures } from "../src/domain/ports.js";
export { openTestDatabase };

/** Every topic the ledger's LedgerEvents go to (the kit's ledgerEventTopic). */
const LEDGER_EVENT_TOPICS = [
  topics.ledgerTransactions,
  topics.ledgerQuoteTransactions,
  topics.ledgerAgentTransactions,
  topics.ledgerAgentQuoteTransactions,
  topics.ledgerIncomingApprovals,
  topics.ledgerAccounts,
  topics.ledgerUnconsumed,
];

export interface FakeCustomer {
  platformId: string;
  platformCustomerId: string;
  verificationStatus: string;
  currencies: string[];
}

export interface LedgerHarness {
  db: DatabaseHandle;
  clock: ManualClock;
  ledger: Client<typeof LedgerService>;
  /** The ledger's cards (CardsService). */
  cards: Client<typeof CardsService>;
  /** The operators' read-only service (trial balance). */
  admin: Client<typeof LedgerAdminService>;
  environments: Map<string, Environment>;
  customers: Map<string, FakeCustomer>;
  /** The platform config's enabledTransactionTypes per currency, as the fake auth-sessions answers them. */
  transactionTypes: Map<string, Record<string, string[]>>;
  newPlatform(opts?: { environment?: Environment; currencies?: string[] }): Promise<string>;
  newCustomer(platformId: string, opts?: { status?: string; currencies?: string[] }): Promise<string>;
  /** Runs a consumer as the host does: in a transaction, once per event id. */
  deliver(consumer: string, message: unknown): Promise<void>;
  /**
   * Runs a batch of a `batch` consumer as the host's inbox does (kit runWorks): one transaction,
   * one multi-row inbox INSERT (sorted), then `handleMany` of the fresh events (a duplicate within
   * the batch once). Throws what the batch throws (no one-by-one fallback, so a test sees it).
   */
  deliverMany(consumer: string, messages: unknown[]): Promise<void>;
  /** Rail instructions in the outbox (every connector's topic), oldest first, with their topic. */
  railInstructions(): Promise<(RailInstruction & { topic: string })[]>;
  ledgerEvents(): Promise<LedgerEvent[]>;
  /** The same, each with the topic its outbox row names (the kit's ledgerEventTopic chose it). */
  ledgerEventsWithTopics(): Promise<{ topic: string; event: LedgerEvent }[]>;
  /** The topic of every outbox row, in order (whatever the topic). */
  outboxTopics(): Promise<string[]>;
  /** Delivers a rail outcome for a transaction (from the simulator unless `from` names another connector). */
  outcome(platformId: string, transactionId: string, status: string, reason?: string, eventId?: string, from?: { connector: string; environment?: string }): Promise<void>;
  close(): Promise<void>;
}

/** Statements (BEGIN and COMMIT not included) and transactions a database handle ran, as counted by countingDatabase. */
export interface StatementCounts {
  statements: number;
  transactions: number;
}

/**
 * `db` whose schema handles count what they send: every statement that came back (a Kysely plugin
 * seeing each result, raw SQL included; a failed statement is not counted) and every transaction
 * opened through `transaction()` (inTransaction's). The ledger and the harness's inbox deliveries
 * both go through `forSchema`, so everything the ledger asks of its schema is counted.
 */
export function countingDatabase(db: DatabaseHandle): { db: DatabaseHandle; counts: StatementCounts; reset(): void } {
  const counts: StatementCounts = { statements: 0, transactions: 0 };
  const plugin = {
    transformQuery: (a: { node: any }) => a.node,
    transformResult: async (a: { result: any }) => {
      counts.statements++;
      return a.result;
    },
  };
  const counting = (k: Kysely<any>): Kysely<any> => {
    const inner = k.withPlugin(plugin);
    return new Proxy(inner, {
      get(target, prop) {
        if (prop === "transaction") {
          return () => {
            const builder = target.transaction();
            return new Proxy(builder, {
              get(b, p) {
                if (p === "execute") {
                  return (fn: (trx: unknown) => Promise<unknown>) => {
                    counts.transactions++;
                    return b.execute(fn as never);
                  };
                }
                const v = Reflect.get(b, p, b) as unknown;
                return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(b) : v;
              },
            });
          };
        }
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  };
  const wrapped: DatabaseHandle = {
    kind: db.kind,
    root: db.root,
    forSchema: <DB>(schema: string) => counting(db.forSchema<any>(schema)) as unknown as Kysely<DB>,
    listen: (channel, onNotify) => db.listen(channel, onNotify),
    close: () => db.close(),
  };
  return {
    db: wrapped,
    counts,
    reset() {
      counts.statements = 0;
      counts.transactions = 0;
    },
  };
}

export async function startLedgerHarness(opts: { env?: NodeJS.ProcessEnv; wrapDb?: (db: DatabaseHandle) => DatabaseHandle } = {}): Promise<LedgerHarness> {
  const opened = await openServiceTestDatabase(service);
  const { drop } = opened;
  const db = opts.wrapDb ? opts.wrapDb(opened.db) : opened.db;
  const clock = new ManualClock("2026-01-01T00:00:00.000Z");
  const environments = new Map<string, Environment>();
  const customers = new Map<string, FakeCustomer>();
  const transactionTypes = new Map<string, Record<string, string[]>>();
  const signedChallenges = new Map<string, { accountId: string; operation: string; body: string }>();

  // Fakes of the services the ledger asks, as real Connect services over in-memory transports.
  const authSessions = createRouterTransport((router) => {
    // auth-sessions' signed retries, faked: a challenge remembers its operation and body; a retry
    // passes with the sandbox magic signature and the same body, once (401s as auth-sessions answers).
    router.service(WalletAuthService, {
      async createSignedChallenge(req: { platformId: string; accountId: string; operation: string; body: Uint8Array }) {
        const requestId = newId("Request");
        signedChallenges.set(requestId, { ...req, body: new TextDecoder().decode(req.body) });
        return { challenge: { type: "EMAIL_OTP", payloadToSign: JSON.stringify({ requestId, accountId: req.accountId, operation: req.operation }), requestId, expiresAt: timestampFromDate(new Date(clock.now().getTime() + 300_000)) } };
      },
      async verifySignedRetry(req: { platformId: string; accountId: string; operation: string; body: Uint8Array; signedRetry?: { requestId: string; signature: string } }) {
        const r = req.signedRetry;
        const c = r ? signedChallenges.get(r.requestId) : undefined;
        if (!c || c.accountId !== req.accountId || c.operation !== req.operation || r?.signature !== "sandbox-valid-signature") throw toConnectError(errors.unauthorized("Invalid Service-Wallet-Signature"));
        if (c.body !== new TextDecoder().decode(req.body)) throw toConnectError(new AppError("UNAUTHENTICATED", "WALLET_SIGNATURE_BODY_MISMATCH", "The retry's body differs from the first call's"));
        signedChallenges.delete(r!.requestId);
        return { sessionId: "" };
      },
    } as never);
    router.service(AuthSessionsService, {
      async getPlatform(req: { platformId: string }) {
        const env = environments.get(req.platformId);
        if (env === undefined) throw toConnectError(errors.notFound("Platform", req.platformId));
        return { platform: { id: req.platformId, name: "p", environment: env } };
      },
      // Currencies a test configures (code → enabled transaction types); none by default, so
      // nothing is restricted.
      async getPlatformConfig(req: { platformId: string }) {
        const types = transactionTypes.get(req.platformId) ?? {};
        return {
          config: {
            platformId: req.platformId,
            supportedCurrencies: Object.entries(types).map(([currencyCode, enabledTransactionTypes]) => ({ currencyCode, enabledTransactionTypes })),
          },
        };
      },
    } as never);
  });
  const customersKyc = createRouterTransport((router) =>
    router.service(CustomersKycService, {
      async getCustomerSummary(req: { platformId: string; customerId: string }) {
        const c = customers.get(req.customerId);
        if (!c || c.platformId !== req.platformId) throw toConnectError(errors.notFound("Customer", req.customerId));
        return {
          customer: {
            customerId: req.customerId,
            platformId: c.platformId,
            platformCustomerId: c.platformCustomerId,
            currencies: c.currencies,
            verificationStatus: c.verificationStatus,
            customerType: "INDIVIDUAL",
          },
        };
      },
    } as never),
  );
  const built = buildLedger({ db, clock, env: opts.env, directory: connectDirectory({ authSessions, customersKyc }), walletSignatures: connectWalletSignatures(() => authSessions) });
  const transport = createRouterTransport((router) => built.routes(router), { router: { interceptors: [appErrorInterceptor] } });
  const ledger = createClient(LedgerService, transport);
  const admin = createClient(LedgerAdminService, transport);
  const cards = createClient(CardsService, transport);
  const schemaDb = db.forSchema<any>(service.schema);

  const deliver = async (name: string, message: unknown) => {
    const def = built.consumers.find((c) => c.name === name) as ConsumerDefinition<any>;
    const eventId = def.eventId(message as never);
    // inTransaction, as the host's inbox: afterCommit callbacks run (the ledger counts money moved in one).
    await inTransaction(schemaDb, async (trx) => {
      const fresh = await trx
        .insertInto("inbox")
        .values({ consumer: name, event_id: eventId })
        .onConflict((oc: any) => oc.columns(["consumer", "event_id"]).doNothing())
        .returning("event_id")
        .executeTakeFirst();
      if (fresh) await def.handle(message as never, trx);
    });
  };

  const deliverMany = async (name: string, messages: unknown[]) => {
    const def = built.consumers.find((c) => c.name === name) as ConsumerDefinition<any>;
    if (!def.batch || !def.handleMany) throw new Error(`${name} is not a batch consumer with handleMany`);
    const ids = [...new Set(messages.map((m) => def.eventId(m as never)))].sort();
    await inTransaction(schemaDb, async (trx) => {
      const fresh = new Set(
        (
          await trx
            .insertInto("inbox")
            .values(ids.map((event_id) => ({ consumer: name, event_id })))
            .onConflict((oc: any) => oc.columns(["consumer", "event_id"]).doNothing())
            .returning("event_id")
            .execute()
        ).map((r: { event_id: string }) => r.event_id),
      );
      const run = messages.filter((m) => fresh.delete(def.eventId(m as never)));
      if (run.length > 0) await def.handleMany!(run as never, trx);
    });
  };

  const outbox = async (...topicNames: string[]) =>
    (await schemaDb.selectFrom("outbox").select(["payload"]).where("topic", "in", topicNames).orderBy("id").execute()) as { payload: Uint8Array }[];

  return {
    db,
    clock,
    ledger,
    cards,
    admin,
    environments,
    customers,
    transactionTypes,
    async newPlatform(opts = {}) {
      const platformId = newId("Platform");
      environments.set(platformId, opts.environment ?? Environment.SANDBOX);
      await deliver(
        "platform-accounts",
        create(PlatformEventSchema, {
          eventId: newId("Event"),
          occurredAt: timestampFromDate(clock.now()),
          platformId,
          payload: {
            case: "platformCreated",
            value: {
              platform: { id: platformId, environment: opts.environment ?? Environment.SANDBOX },
              config: { platformId, supportedCurrencies: (opts.currencies ?? ["USD"]).map((currencyCode) => ({ currencyCode })) },
            },
          },
        }),
      );
      return platformId;
    },
    async newCustomer(platformId, opts = {}) {
      const customerId = newId("Customer");
      const c: FakeCustomer = {
        platformId,
        platformCustomerId: `pc-${customerId.slice(-6)}`,
        verificationStatus: opts.status ?? "APPROVED",
        currencies: opts.currencies ?? ["USD"],
      };
      customers.set(customerId, c);
      await deliver(
        "customer-accounts",
        create(CustomerEventSchema, {
          eventId: newId("Event"),
          occurredAt: timestampFromDate(clock.now()),
          platformId,
          payload: { case: "customerCreated", value: { customer: { customerId, platformId, platformCustomerId: c.platformCustomerId, currencies: c.currencies, verificationStatus: c.verificationStatus } } },
        }),
      );
      return customerId;
    },
    deliver,
    deliverMany,
    async railInstructions() {
      const rows = (await schemaDb.selectFrom("outbox").select(["payload", "topic"]).where("topic", "like", "corridor.rails.%").orderBy("id").execute()) as { payload: Uint8Array; topic: string }[];
      return rows.map((r) => Object.assign(fromBinary(RailInstructionSchema, r.payload), { topic: r.topic }));
    },
    async ledgerEventsWithTopics() {
      const rows = (await schemaDb.selectFrom("outbox").select(["payload", "topic"]).where("topic", "in", LEDGER_EVENT_TOPICS).orderBy("id").execute()) as { payload: Uint8Array; topic: string }[];
      return rows.map((r) => ({ topic: r.topic, event: fromBinary(LedgerEventSchema, r.payload) }));
    },
    async outboxTopics() {
      return ((await schemaDb.selectFrom("outbox").select(["topic"]).orderBy("id").execute()) as { topic: string }[]).map((r) => r.topic);
    },
    async ledgerEvents() {
      return (await outbox(...LEDGER_EVENT_TOPICS)).map((r) => fromBinary(LedgerEventSchema, r.payload));
    },
    async outcome(platformId, transactionId, status, reason = "", eventId = newId("Event"), from) {
      await deliver(
        "rail-outcomes",
        create(RailOutcomeSchema, { eventId, occurredAt: timestampFromDate(clock.now()), platformId, transactionId, status, reason, connector: from?.connector ?? "", environment: from?.environment ?? "" }),
      );
    },
    close: drop,
  };
}


export { Code };

export const usdInfo = (accountNumber = "123456789000", extra: Record<string, unknown> = {}) => ({
  accountType: "USD_ACCOUNT",
  accountNumber,
  routingNumber: "021000021",
  bankAccountType: "CHECKING",
  beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace" },
  ...extra,
});

/** Sum of all balances per currency of a platform (system accounts included). */
export async function balanceSums(db: DatabaseHandle, platformId?: string): Promise<Map<string, bigint>> {
  let q = db.forSchema<any>(service.schema).selectFrom("accounts").select(["currency", sql<string>`sum(balance)`.as("s")]).groupBy("currency");
  if (platformId) q = q.where("platform_id", "=", platformId);
  const rows = (await q.execute()) as { currency: string; s: string | bigint }[];
  return new Map(rows.map((r) => [r.currency, BigInt(r.s)]));
}

/** For tests that build the ledger without auth-sessions: a signed retry is not what they exercise. */
export const walletSignaturesNotUsed: WalletSignatures = {
  challenge: () => Promise.reject(new Error("this test does not sign wallet operations")),
  verify: () => Promise.reject(new Error("this test does not sign wallet operations")),
};

/** A quote's world: a platform (USD, EUR), an approved customer with a USD account (funded with `fund`, if given) and the customer's EUR payee. */
export async function quoteWorld(h: LedgerHarness, opts: { fund?: bigint; status?: string } = {}) {
  const platformId = await h.newPlatform({ currencies: ["USD", "EUR"] });
  const customerId = await h.newCustomer(platformId, { currencies: ["USD", "EUR"], status: opts.status });
  const accounts = (await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId })).accounts;
  const usd = accounts.find((a) => a.type === "INTERNAL_FIAT" && a.currency?.code === "USD")!;
  const eurExt = (await h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: "DE89370400440532013000" } })).account!;
  if (opts.fund !== undefined) await h.ledger.fundInternalAccount({ platformId, accountId: usd.id, amount: opts.fund });
  return { platformId, customerId, usd, eurExt };
}

/** The CreateQuoteTransaction input of a quote in a quoteWorld: 10.00 USD sent (0.50 fee) for 8.50 EUR at 1.1176..., expiring 5 minutes from the harness clock's now; `over` replaces fields. */
export function quoteTransactionInput(h: LedgerHarness, w: { platformId: string; customerId: string; usd: { id: string }; eurExt: { id: string } }, over: Record<string, unknown> = {}) {
  return {
    platformId: w.platformId,
    quoteId: newId("Quote"),
    customerId: w.customerId,
    source: { type: "INTERNAL_ACCOUNT", accountId: w.usd.id },
    destination: { type: "EXTERNAL_ACCOUNT", accountId: w.eurExt.id, paymentRail: "SEPA" },
    sendingCurrency: "USD",
    totalSendingAmount: 1000n,
    receivingCurrency: "EUR",
    totalReceivingAmount: 850n,
    feesIncluded: 50n,
    exchangeRate: "1.11764705",
    description: "",
    counterpartyInformation: {},
    expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + 5 * 60_000)),
    ...over,
  };
}
