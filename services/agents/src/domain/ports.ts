/**
 * What the agents domain needs from other services and from storage. Other services are reached
 * over Connect (src/clients/), storage over Kysely (src/data/); tests pass fakes.
 *
 * The rule the shapes encode: a port of another service is NEVER called while a Store
 * transaction is open (in embedded mode every service shares one database session, so a call
 * made inside a transaction would wait for itself). Use cases read remote facts first, then run a
 * short transaction, then call, then record the outcome in another short transaction.
 *
 * Errors: a port rethrows another service's public refusal as the kit's AppError (same outcome,
 * code and details); anything else (unreachable, timeouts) stays a plain Error — a failure that
 * may pass, never a refusal.
 */
import type { IdempotencyClaim } from "@corridor/kit";
import type {
  Action,
  ActionStatus,
  Agent,
  DeviceCode,
  Policy,
  QuoteFacts,
  QuoteRequest,
  TransactionFacts,
} from "./model.js";

/* ---------- other services ---------- */

/** customers-kyc: who a customer is. Undefined when the platform has no such customer. */
export interface CustomerDirectory {
  customer(platformId: string, customerId: string): Promise<{ platformCustomerId: string; isDeleted: boolean } | undefined>;
}

/** The time a platform lives on: its sandbox clock (SandboxService.GetClock) or the service clock. */
export interface PlatformTime {
  now(platformId: string): Promise<Date>;
}

export interface AccountFacts {
  id: string;
  /** Empty for a platform-owned account. */
  customerId: string;
  currency: string;
}

/** The ledger's accounts, scoped to the platform. Undefined when not found there. */
export interface AccountDirectory {
  internalAccount(platformId: string, accountId: string): Promise<AccountFacts | undefined>;
  /** Only a CUSTOMER external account of `customerId` is found. */
  externalAccount(platformId: string, accountId: string, customerId: string): Promise<AccountFacts | undefined>;
}

/** quotes-fx, on behalf of an agent. */
export interface QuotesPort {
  create(input: { platformId: string; agentId: string; actingCustomerId: string; idempotencyKey: string; request: QuoteRequest }): Promise<QuoteFacts>;
  /** Only a quote the agent created is found. */
  get(platformId: string, quoteId: string, agentId: string): Promise<QuoteFacts | undefined>;
  /** Idempotent per key: a retry with the same key answers the first execution. */
  execute(input: { platformId: string; quoteId: string; agentId: string; idempotencyKey: string }): Promise<QuoteFacts>;
}

/** quotes-fx ListExchangeRates: sending major units per one receiving major unit, as a decimal string. */
export interface RatesPort {
  rate(platformId: string, from: string, to: string): Promise<string>;
}

export interface TransferInput {
  direction: "IN" | "OUT";
  platformId: string;
  agentId: string;
  /** Both accounts must belong to this customer (the ledger checks again). */
  customerId: string;
  sourceAccountId: string;
  destinationAccountId: string;
  amount: bigint;
  description: string;
  idempotencyKey: string;
}

/** The ledger's transfers and transactions. */
export interface LedgerPort {
  /** Idempotent per key: a retry with the same key answers the first transaction. */
  transfer(input: TransferInput): Promise<TransactionFacts>;
  transaction(platformId: string, transactionId: string): Promise<TransactionFacts | undefined>;
}

/* ---------- storage ---------- */

export interface IdempotencyRef {
  platformId: string;
  key: string;
  requestHash: string;
}

/** The kit's idempotency_keys table of this schema; completion happens in StoreTx. */
export interface IdempotencyKeys {
  claim(ref: IdempotencyRef, now: Date): Promise<IdempotencyClaim>;
  release(ref: IdempotencyRef): Promise<void>;
}

export interface KeysetAfter {
  at: Date;
  id: string;
}

export interface AgentFilter {
  platformId: string;
  customerId?: string;
  isPaused?: boolean;
}

export interface ActionFilter {
  platformId: string;
  agentId?: string;
  customerId?: string;
  status?: ActionStatus;
  createdFrom?: Date;
  createdTo?: Date;
}

export interface ListQuery {
  /** Rows to fetch (the page size + 1, so the extra row tells whether more follow). */
  limit: number;
  after?: KeysetAfter;
  ascending: boolean;
}

export interface UsageRow {
  dayCount: bigint;
  dayAmount: bigint;
  monthAmount: bigint;
}

export interface AgentChange {
  name?: string;
  isPaused?: boolean;
  isConnected?: boolean;
  policy?: Policy;
  deletedAt?: Date;
  updatedAt: Date;
}

/** Statements inside one database transaction. Locks are taken agent first, then its actions. */
export interface StoreTx {
  insertAgent(agent: Agent): Promise<void>;
  /** The agent's row, locked (deleted agents too: callers decide). */
  lockAgent(platformId: string, agentId: string): Promise<Agent | undefined>;
  updateAgent(platformId: string, agentId: string, change: AgentChange): Promise<Agent>;

  insertDeviceCode(code: DeviceCode): Promise<boolean>;
  voidOpenDeviceCodes(platformId: string, agentId: string, at: Date): Promise<void>;
  lockDeviceCode(code: string): Promise<DeviceCode | undefined>;
  markDeviceCodeRedeemed(code: string, at: Date): Promise<void>;

  insertAccessToken(tokenHash: string, platformId: string, agentId: string, at: Date): Promise<void>;
  deleteAccessTokens(platformId: string, agentId: string): Promise<void>;

  usage(platformId: string, agentId: string, dayKey: string, monthKey: string): Promise<UsageRow>;
  /** Adds one action of `amount` to the day and month windows. */
  reserve(a: Pick<Action, "platformId" | "agentId" | "dayKey" | "monthKey" | "countedAmount">): Promise<void>;
  /** Gives an action's reservation back. */
  release(a: Pick<Action, "platformId" | "agentId" | "dayKey" | "monthKey" | "countedAmount">): Promise<void>;

  insertAction(action: Action): Promise<void>;
  lockAction(platformId: string, actionId: string): Promise<Action | undefined>;
  /** Writes the fields of `action` that change after insert. */
  saveAction(action: Action): Promise<void>;
  /** Only the transaction as last seen (one statement; nothing else of the action is touched). */
  saveTransactionSnapshot(platformId: string, actionId: string, snapshot: Uint8Array): Promise<void>;
  lockPendingActions(platformId: string, agentId: string): Promise<Action[]>;
  liveActionForQuote(platformId: string, quoteId: string): Promise<Action | undefined>;
  /** The action whose execution made this transaction (no lock: lock its agent, then it). */
  actionByTransaction(platformId: string, transactionId: string): Promise<Action | undefined>;

  /** Serializes everything about one ledger transaction (the consumer and the outcome recorder). */
  lockTransactionKey(platformId: string, transactionId: string): Promise<void>;
  earlyOutcome(platformId: string, transactionId: string): Promise<TransactionFacts | undefined>;
  recordEarlyOutcome(platformId: string, t: TransactionFacts, at: Date): Promise<void>;

  /** Enqueues the AgentEvent of the action's current status (outbox, same transaction). */
  actionChanged(action: Action, at: Date): Promise<void>;
  completeIdempotencyKey(ref: IdempotencyRef, body: unknown): Promise<void>;
}

export interface Store {
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** A StoreTx over a transaction someone else opened (the host's inbox transaction). */
  within(trx: unknown): StoreTx;

  agent(platformId: string, agentId: string): Promise<Agent | undefined>;
  agentByTokenHash(tokenHash: string): Promise<Agent | undefined>;
  listAgents(filter: AgentFilter, q: ListQuery): Promise<Agent[]>;
  countAgents(filter: AgentFilter): Promise<number>;
  usages(platformId: string, agentIds: string[], dayKey: string, monthKey: string): Promise<Map<string, UsageRow>>;
  deviceCode(code: string): Promise<DeviceCode | undefined>;

  action(platformId: string, actionId: string): Promise<Action | undefined>;
  listActions(filter: ActionFilter, q: ListQuery): Promise<Action[]>;
  countActions(filter: ActionFilter): Promise<number>;
  /** APPROVED actions whose call has been out since before `staleBefore`, oldest first. */
  staleExecutions(staleBefore: Date, limit: number): Promise<Action[]>;
  /** Takes over a stale claim (single statement); false when someone else did first. */
  reclaimExecution(action: Action, at: Date): Promise<boolean>;
  /** Platforms with PENDING_APPROVAL quote executions (each expires on its platform's clock). */
  platformsWithExpiringActions(): Promise<string[]>;
  expiredPendingActions(platformId: string, now: Date, limit: number): Promise<Action[]>;
  pruneEarlyOutcomes(before: Date): Promise<number>;
}
