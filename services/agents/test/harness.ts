export { expectRefusal as expectPublicError, fieldsOf } from "@corridor/kit/testing";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { AppError, ManualClock, appErrorInterceptor, newId, topics, type ConsumerDefinition, type DatabaseHandle } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { AgentsService } from "@corridor/proto/corridor/agents/v1/agents_service_pb.js";
import { AgentEventSchema, type AgentEvent } from "@corridor/proto/corridor/agents/v1/events_pb.js";
import { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { TransactionSchema } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import { QuoteSchema } from "@corridor/proto/corridor/quotes_fx/v1/quote_pb.js";
import { expect } from "vitest";
import type { QuoteFacts, QuoteRequest, TransactionFacts } from "../src/domain/model.js";
import type { AccountFacts, TransferInput } from "../src/domain/ports.js";
import { buildAgents, service, type BuiltAgents } from "../src/server.js";

/**
 * The agents service over a real database (PGlite in memory, or a fresh Postgres database when
 * DATABASE_URL is set), reached through an in-memory Connect transport, with the other services
 * as in-memory fakes of the domain's ports and a ManualClock.
 */


export interface FakeAccount extends AccountFacts {
  platformId: string;
  kind: "INTERNAL" | "EXTERNAL";
  /** Internal accounts: what a transfer out may take. */
  balance: bigint;
}

export interface FakeTransaction {
  id: string;
  platformId: string;
  status: string;
  agentId: string;
  customerId: string;
  amount: bigint;
  currency: string;
  failureReason: string;
  quoteId: string;
}

export interface FakeQuote {
  id: string;
  platformId: string;
  agentId: string;
  customerId: string;
  status: string;
  sourceAccountId: string;
  destinationAccountId: string;
  sendingCurrency: string;
  receivingCurrency: string;
  totalSendingAmount: bigint;
  totalReceivingAmount: bigint;
  expiresAt: Date;
  transactionId: string;
}

/** How the fake ledger and quotes-fx answer: a refusal or an outage to throw, or a status to answer. */
export interface Behaviour {
  /** Thrown by every transfer / quote execution while set. */
  executeError?: Error;
  /** Status a successful transfer's transaction gets. */
  transferStatus: string;
  /** Runs after the fake ledger created a transfer's transaction and before it answers. */
  beforeAnswer?: (t: FakeTransaction) => Promise<void>;
  /** Runs once, at the next read of a platform's clock (a submission reads it after the agent and before its transaction). */
  beforePlatformTime?: () => Promise<void>;
}

export interface Harness {
  db: DatabaseHandle;
  clock: ManualClock;
  built: BuiltAgents;
  client: Client<typeof AgentsService>;
  /** Per platform, how far its sandbox clock runs ahead of the service clock (ms). */
  sandboxOffsetMs: Map<string, number>;
  customers: Map<string, { platformId: string; platformCustomerId: string; isDeleted: boolean }>;
  accounts: Map<string, FakeAccount>;
  transactions: Map<string, FakeTransaction>;
  quotes: Map<string, FakeQuote>;
  /** "FROM/TO" → FROM major units per one TO major unit. */
  rates: Map<string, string>;
  behaviour: Behaviour;
  calls: { transfers: TransferInput[]; quoteExecutions: string[]; rateReads: number };
  newPlatform(): string;
  newCustomer(platformId: string): string;
  newAccount(platformId: string, customerId: string, kind: "INTERNAL" | "EXTERNAL", currency?: string, balance?: bigint): string;
  /** A PENDING quote of the agent (as quotes-fx would have created it), expiring in 5 minutes on the platform's clock. */
  newQuote(platformId: string, agentId: string, customerId: string, opts?: Partial<FakeQuote>): FakeQuote;
  platformNow(platformId: string): Date;
  /** Delivers a LedgerEvent transactionChanged to the service's consumer, as the host's inbox would. */
  ledgerEvent(platformId: string, t: FakeTransaction): Promise<void>;
  /** AgentEvents in the outbox, oldest first. */
  events(): Promise<AgentEvent[]>;
  close(): Promise<void>;
}

const USD_EUR = "1.0850";

export function transactionFacts(t: FakeTransaction): TransactionFacts {
  const pb = create(TransactionSchema, {
    id: t.id,
    platformId: t.platformId,
    status: t.status,
    agentId: t.agentId,
    customerId: t.customerId,
    amount: t.amount,
    currency: { code: t.currency },
    failureReason: t.failureReason,
    quoteId: t.quoteId,
  });
  return { id: t.id, status: t.status, agentId: t.agentId, failureReason: t.failureReason, snapshot: toBinary(TransactionSchema, pb) };
}

function quoteFacts(q: FakeQuote): QuoteFacts {
  const pb = create(QuoteSchema, {
    id: q.id,
    platformId: q.platformId,
    status: q.status,
    agentId: q.agentId,
    source: { sourceType: "ACCOUNT", accountId: q.sourceAccountId, customerId: q.customerId },
    destination: { destinationType: "ACCOUNT", accountId: q.destinationAccountId },
    sendingCurrency: { code: q.sendingCurrency },
    receivingCurrency: { code: q.receivingCurrency },
    totalSendingAmount: q.totalSendingAmount,
    totalReceivingAmount: q.totalReceivingAmount,
    expiresAt: timestampFromDate(q.expiresAt),
    transactionId: q.transactionId,
  });
  return {
    id: q.id,
    status: q.status,
    agentId: q.agentId,
    sourceType: "ACCOUNT",
    sourceAccountId: q.sourceAccountId,
    sourceCustomerId: q.customerId,
    destinationAccountId: q.destinationAccountId,
    sendingCurrency: q.sendingCurrency,
    receivingCurrency: q.receivingCurrency,
    totalSendingAmount: q.totalSendingAmount,
    totalReceivingAmount: q.totalReceivingAmount,
    expiresAt: q.expiresAt,
    transactionId: q.transactionId,
    snapshot: toBinary(QuoteSchema, pb),
  };
}

export async function startHarness(opts: { env?: NodeJS.ProcessEnv; poolSize?: number } = {}): Promise<Harness> {
  const { db, drop } = await openServiceTestDatabase(service, { poolSize: opts.poolSize });
  const clock = new ManualClock("2026-11-23T12:00:00.000Z");
  const sandboxOffsetMs = new Map<string, number>();
  const customers = new Map<string, { platformId: string; platformCustomerId: string; isDeleted: boolean }>();
  const accounts = new Map<string, FakeAccount>();
  const transactions = new Map<string, FakeTransaction>();
  const byKey = new Map<string, FakeTransaction>();
  const quotes = new Map<string, FakeQuote>();
  const quoteKeys = new Map<string, FakeQuote>();
  const executedKeys = new Map<string, FakeQuote>();
  const rates = new Map<string, string>([
    ["USD/EUR", USD_EUR],
    ["EUR/USD", "0.9217"],
  ]);
  const behaviour: Behaviour = { transferStatus: "PENDING" };
  const calls = { transfers: [] as TransferInput[], quoteExecutions: [] as string[], rateReads: 0 };
  const platformNow = (platformId: string) => new Date(clock.now().getTime() + (sandboxOffsetMs.get(platformId) ?? 0));

  // Errors as the other services' clients rethrow them: public refusals are AppErrors.
  const notFound = (kind: string, id: string) => new AppError("NOT_FOUND", `${kind}_NOT_FOUND`, `${kind} ${id} not found`);

  const built = buildAgents({
    db,
    clock,
    env: { ...opts.env },
    customers: {
      async customer(platformId, customerId) {
        const c = customers.get(customerId);
        return c && c.platformId === platformId ? { platformCustomerId: c.platformCustomerId, isDeleted: c.isDeleted } : undefined;
      },
    },
    accounts: {
      async internalAccount(platformId, id) {
        const a = accounts.get(id);
        return a && a.kind === "INTERNAL" && a.platformId === platformId ? { id: a.id, customerId: a.customerId, currency: a.currency } : undefined;
      },
      async externalAccount(platformId, id, customerId) {
        const a = accounts.get(id);
        return a && a.kind === "EXTERNAL" && a.platformId === platformId && a.customerId === customerId ? { id: a.id, customerId: a.customerId, currency: a.currency } : undefined;
      },
    },
    ledger: {
      async transfer(i) {
        calls.transfers.push(i);
        const known = byKey.get(`${i.platformId}/${i.idempotencyKey}`);
        if (known) return transactionFacts(known);
        if (behaviour.executeError) throw behaviour.executeError;
        const internal = accounts.get(i.direction === "OUT" ? i.sourceAccountId : i.destinationAccountId)!;
        if (i.direction === "OUT") {
          if (internal.balance < i.amount) throw new AppError("INVALID", "INSUFFICIENT_BALANCE", "The account's available balance is lower than the amount");
          internal.balance -= i.amount;
        }
        const t: FakeTransaction = {
          id: newId("Transaction"),
          platformId: i.platformId,
          status: behaviour.transferStatus,
          agentId: i.agentId,
          customerId: i.customerId,
          amount: i.amount,
          currency: internal.currency,
          failureReason: "",
          quoteId: "",
        };
        transactions.set(t.id, t);
        byKey.set(`${i.platformId}/${i.idempotencyKey}`, t);
        await behaviour.beforeAnswer?.(t);
        return transactionFacts(t);
      },
      async transaction(platformId, id) {
        const t = transactions.get(id);
        return t && t.platformId === platformId ? transactionFacts(t) : undefined;
      },
    },
    quotes: {
      async create({ platformId, agentId, actingCustomerId, idempotencyKey, request }: { platformId: string; agentId: string; actingCustomerId: string; idempotencyKey: string; request: QuoteRequest }) {
        const known = idempotencyKey ? quoteKeys.get(`${platformId}/${idempotencyKey}`) : undefined;
        if (known) return quoteFacts(known);
        const source = accounts.get(request.source.accountId);
        if (!source || source.platformId !== platformId || source.customerId !== actingCustomerId) throw notFound("INTERNAL_ACCOUNT", request.source.accountId);
        const q = makeQuote(platformId, agentId, actingCustomerId, { sourceAccountId: source.id, destinationAccountId: request.destination.accountId, totalSendingAmount: request.lockedCurrencyAmount });
        if (idempotencyKey) quoteKeys.set(`${platformId}/${idempotencyKey}`, q);
        return quoteFacts(q);
      },
      async get(platformId, quoteId, agentId) {
        const q = quotes.get(quoteId);
        if (!q || q.platformId !== platformId || q.agentId !== agentId) return undefined;
        if (q.status === "PENDING" && platformNow(platformId) >= q.expiresAt) q.status = "EXPIRED";
        return quoteFacts(q);
      },
      async execute({ platformId, quoteId, agentId, idempotencyKey }) {
        calls.quoteExecutions.push(quoteId);
        const known = executedKeys.get(`${platformId}/${idempotencyKey}`);
        if (known) return quoteFacts(known);
        if (behaviour.executeError) throw behaviour.executeError;
        const q = quotes.get(quoteId);
        if (!q || q.platformId !== platformId || q.agentId !== agentId) throw notFound("QUOTE", quoteId);
        if (q.status === "PENDING" && platformNow(platformId) >= q.expiresAt) q.status = "EXPIRED";
        if (q.status === "EXPIRED") throw new AppError("CONFLICT", "QUOTE_EXPIRED", "The quote has expired");
        if (q.status !== "PENDING") throw new AppError("CONFLICT", "INVALID_STATE_TRANSITION", "already executed");
        const source = accounts.get(q.sourceAccountId)!;
        if (source.balance < q.totalSendingAmount) throw new AppError("INVALID", "INSUFFICIENT_BALANCE", "The account's available balance is lower than the amount");
        source.balance -= q.totalSendingAmount;
        q.status = "PROCESSING";
        transactions.get(q.transactionId)!.status = "PROCESSING";
        executedKeys.set(`${platformId}/${idempotencyKey}`, q);
        return quoteFacts(q);
      },
    },
    rates: {
      async rate(_platformId, from, to) {
        calls.rateReads++;
        const r = rates.get(`${from}/${to}`);
        if (!r) throw new AppError("INVALID", "CURRENCY_NOT_CONVERTIBLE", `no rate ${from}/${to}`);
        return r;
      },
    },
    time: {
      async now(platformId) {
        const hook = behaviour.beforePlatformTime;
        behaviour.beforePlatformTime = undefined;
        await hook?.();
        return platformNow(platformId);
      },
    },
  });

  function makeQuote(platformId: string, agentId: string, customerId: string, o: Partial<FakeQuote>): FakeQuote {
    const id = newId("Quote");
    const transactionId = newId("Transaction");
    const q: FakeQuote = {
      id,
      platformId,
      agentId,
      customerId,
      status: "PENDING",
      sourceAccountId: "",
      destinationAccountId: "",
      sendingCurrency: "USD",
      receivingCurrency: "EUR",
      totalSendingAmount: 10_000n,
      totalReceivingAmount: 0n,
      expiresAt: new Date(platformNow(platformId).getTime() + 5 * 60_000),
      transactionId,
      ...o,
    };
    if (!o.totalReceivingAmount) q.totalReceivingAmount = (q.totalSendingAmount * 10_000n) / 10_850n;
    quotes.set(id, q);
    transactions.set(transactionId, { id: transactionId, platformId, status: "PENDING", agentId, customerId, amount: q.totalSendingAmount, currency: q.sendingCurrency, failureReason: "", quoteId: id });
    return q;
  }

  const transport = createRouterTransport(built.routes, { router: { interceptors: [appErrorInterceptor] } });
  const schemaDb = db.forSchema<any>(service.schema);
  const consumer = built.consumers.find((c) => c.name === "agent-transactions") as ConsumerDefinition<typeof LedgerEventSchema>;

  return {
    db,
    clock,
    built,
    client: createClient(AgentsService, transport),
    sandboxOffsetMs,
    customers,
    accounts,
    transactions,
    quotes,
    rates,
    behaviour,
    calls,
    newPlatform: () => newId("Platform"),
    newCustomer(platformId) {
      const id = newId("Customer");
      customers.set(id, { platformId, platformCustomerId: `pc-${id.slice(-6)}`, isDeleted: false });
      return id;
    },
    newAccount(platformId, customerId, kind, currency = "USD", balance = 1_000_000_000n) {
      const id = newId(kind === "INTERNAL" ? "InternalAccount" : "ExternalAccount");
      accounts.set(id, { id, platformId, customerId, currency, kind, balance });
      return id;
    },
    newQuote: (platformId, agentId, customerId, o = {}) => makeQuote(platformId, agentId, customerId, o),
    platformNow,
    async ledgerEvent(platformId, t) {
      const event = create(LedgerEventSchema, {
        eventId: newId("Event"),
        occurredAt: timestampFromDate(clock.now()),
        platformId,
        eventType: `OUTGOING_PAYMENT_${t.status}`,
        payload: { case: "transactionChanged", value: { transaction: fromBinary(TransactionSchema, transactionFacts(t).snapshot) } },
      });
      await schemaDb.transaction().execute(async (trx) => {
        const fresh = await trx
          .insertInto("inbox")
          .values({ consumer: consumer.name, event_id: event.eventId })
          .onConflict((oc: any) => oc.columns(["consumer", "event_id"]).doNothing())
          .returning("event_id")
          .executeTakeFirst();
        if (fresh) await consumer.handle(event, trx);
      });
    },
    async events() {
      const rows = (await schemaDb.selectFrom("outbox").select(["payload"]).where("topic", "in", [topics.agentApprovals, topics.agentActions]).orderBy("id").execute()) as { payload: Uint8Array }[];
      return rows.map((r) => fromBinary(AgentEventSchema, r.payload));
    },
    close: drop,
  };
}



export const ALL_PERMISSIONS = ["VIEW_TRANSACTIONS", "CREATE_QUOTES", "EXECUTE_QUOTES", "CREATE_TRANSFERS", "MANAGE_EXTERNAL_ACCOUNTS"];

export interface World {
  platformId: string;
  customerId: string;
  /** The customer's USD internal account (funded) and USD external account. */
  internal: string;
  external: string;
  agentId: string;
}

/** A platform, a customer with a USD internal and external account, and an agent with `policy`. */
export async function world(h: Harness, policy: Record<string, unknown> = {}, opts: { platformId?: string } = {}): Promise<World> {
  const platformId = opts.platformId ?? h.newPlatform();
  const customerId = h.newCustomer(platformId);
  const internal = h.newAccount(platformId, customerId, "INTERNAL");
  const external = h.newAccount(platformId, customerId, "EXTERNAL");
  const res = await h.client.createAgent({ platformId, customerId, name: "agent", policy });
  return { platformId, customerId, internal, external, agentId: res.agent!.id };
}

/** A transfer out of the world's accounts. */
export function transferOut(h: Harness, w: World, amount: bigint, idempotencyKey = "") {
  return h.client.submitTransfer({ platformId: w.platformId, agentId: w.agentId, direction: "OUT", sourceAccountId: w.internal, destinationAccountId: w.external, amount, idempotencyKey });
}

export interface UsageWindowRow {
  window_kind: string;
  window_key: string;
  count: bigint;
  amount: bigint;
}

export interface LiveReservation {
  id: string;
  counted_amount: bigint;
  day_key: string;
  month_key: string;
  status: string;
}

/** What the database says: the agent's usage rows and its live (PENDING_APPROVAL, APPROVED) actions. */
export async function usageLedger(h: Harness, w: Pick<World, "platformId" | "agentId">): Promise<{ usage: UsageWindowRow[]; live: LiveReservation[] }> {
  const db = h.db.forSchema<any>("agents");
  const usage = (await db.selectFrom("usage").selectAll().where("platform_id", "=", w.platformId).where("agent_id", "=", w.agentId).execute()) as UsageWindowRow[];
  const live = (await db
    .selectFrom("actions")
    .select(["id", "counted_amount", "day_key", "month_key", "status"])
    .where("platform_id", "=", w.platformId)
    .where("agent_id", "=", w.agentId)
    .where("status", "in", ["PENDING_APPROVAL", "APPROVED"])
    .execute()) as LiveReservation[];
  return { usage, live };
}

/** Usage equals what live actions reserved, window by window. */
export function expectUsageMatchesLiveActions(usage: UsageWindowRow[], live: Pick<LiveReservation, "counted_amount" | "day_key" | "month_key">[]): void {
  const expected = new Map<string, { count: bigint; amount: bigint }>();
  for (const a of live) {
    for (const k of [`DAY/${a.day_key}`, `MONTH/${a.month_key}`]) {
      const e = expected.get(k) ?? { count: 0n, amount: 0n };
      e.count += 1n;
      e.amount += a.counted_amount;
      expected.set(k, e);
    }
  }
  for (const u of usage) {
    const e = expected.get(`${u.window_kind}/${u.window_key}`) ?? { count: 0n, amount: 0n };
    expect({ window: `${u.window_kind}/${u.window_key}`, count: u.count, amount: u.amount }).toEqual({ window: `${u.window_kind}/${u.window_key}`, ...e });
    expected.delete(`${u.window_kind}/${u.window_key}`);
  }
  expect([...expected.keys()]).toEqual([]);
}
