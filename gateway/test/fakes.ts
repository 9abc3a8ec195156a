import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createRouterTransport, type Transport } from "@connectrpc/connect";
import { AppError, SERVICE_NAMES, errors, newId, requestHash, toConnectError, type ServiceName } from "@corridor/kit";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { Environment, PlatformConfigSchema, type PlatformConfig } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { Permission, TokenSchema, type Token } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import { PageInfoSchema } from "@corridor/proto/corridor/common/v1/paging_pb.js";
import { InternalAccountSchema } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import { LedgerService, type TransferSpec } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { TransactionSchema } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import {
  DeliveryAttemptSchema,
  NotificationsService,
  WebhookSettingsSchema,
} from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@corridor/proto/grpc/health/v1/health_pb.js";
import {
  AgentActionSchema,
  AgentSchema,
  DeviceCodeSchema,
  PolicySchema,
  type Agent,
  type AgentAction,
  type DeviceCode,
} from "@corridor/proto/corridor/agents/v1/agent_pb.js";
import { AgentsService } from "@corridor/proto/corridor/agents/v1/agents_service_pb.js";
import { QuoteSchema } from "@corridor/proto/corridor/quotes_fx/v1/quote_pb.js";
import { ExternalAccountSchema } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";

/** Services' failures cross the wire as they would from a real service. */
async function asService<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw err instanceof AppError ? toConnectError(err) : err;
  }
}

interface StoredToken {
  token: Token;
  secret: string;
  environment: Environment;
}

/**
 * In-memory stand-ins for auth-sessions and notifications, with just enough behaviour to drive the
 * gateway: tokens scoped by platform, a config per platform, and call counters for assertions.
 */
export class FakeServices {
  readonly tokens = new Map<string, StoredToken>(); // by clientId
  readonly configs = new Map<string, PlatformConfig>();
  readonly serving = new Map<ServiceName, boolean>(SERVICE_NAMES.map((s) => [s, true]));
  authenticateCalls = 0;
  /** Calls of RotateWebhookSecret that reached the fake notifications service. */
  webhookRotations = 0;
  lastListRequest: unknown;
  /** When set, every auth-sessions call but Authenticate throws it (to test 500 handling). */
  failWith?: Error;
  /** When set, the TEST webhook gets no answer: the attempt's error category. */
  testWebhookUnanswered = "";
  /** Calls of the fake ledger's money-moving RPCs that reached their effect (replays excluded). */
  readonly ledgerEffects: { method: string; platformId: string; amount: bigint }[] = [];
  /** Calls of the fake ledger's money-moving RPCs, replays and refusals included. */
  ledgerCalls = 0;
  /** When set, the next effect waits for it (holds a request in flight). */
  ledgerGate?: Promise<void>;
  /** When set, the next effect throws it instead of running (the key is released first, as a service does). */
  ledgerFailNext?: Error;
  /** When set, the next transfer commits its effect (and its key's answer) and then the call fails with it: a service dying mid-call. */
  ledgerLoseAnswerNext?: Error;
  /** The fake agents service: agents by id, access tokens to agent ids, actions by id. */
  readonly agents = new Map<string, Agent>();
  readonly agentTokens = new Map<string, string>();
  readonly agentActions = new Map<string, AgentAction>();
  readonly deviceCodes = new Map<string, DeviceCode>();
  /** Every agents and ledger-read RPC the gateway made, in order (method name and request). */
  readonly rpcCalls: { method: string; req: Record<string, unknown> }[] = [];
  authenticateAgentCalls = 0;
  private readonly transports: Map<ServiceName, Transport>;

  constructor() {
    this.transports = new Map(SERVICE_NAMES.map((s) => [s, this.transportOf(s)]));
  }

  transportFor = (s: ServiceName): Transport => this.transports.get(s)!;

  /** Creates a token directly (what the operator's admin RPC would do) and answers its credentials. */
  addToken(opts: { platformId?: string; permissions: Permission[]; environment?: Environment; name?: string }) {
    const platformId = opts.platformId ?? newId("Platform");
    const now = timestampFromDate(new Date());
    const token = create(TokenSchema, {
      id: newId("Token"),
      platformId,
      name: opts.name ?? "t",
      permissions: opts.permissions,
      clientId: `cid_${Math.random().toString(36).slice(2)}`,
      createdAt: now,
      updatedAt: now,
    });
    const secret = `sec_${Math.random().toString(36).slice(2)}`;
    this.tokens.set(token.clientId, { token, secret, environment: opts.environment ?? Environment.SANDBOX });
    return { platformId, tokenId: token.id, clientId: token.clientId, clientSecret: secret };
  }

  private configOf(platformId: string): PlatformConfig {
    let c = this.configs.get(platformId);
    if (!c) {
      const now = timestampFromDate(new Date("2025-10-13T00:00:00Z"));
      c = create(PlatformConfigSchema, {
        id: newId("PlatformConfig"),
        platformId,
        supportedCurrencies: [{ currencyCode: "USD", minAmount: 1n, maxAmount: 9_000_000_000_000_000n, enabledTransactionTypes: ["OUTGOING"] }],
        createdAt: now,
        updatedAt: now,
      });
      this.configs.set(platformId, c);
    }
    return c;
  }

  private findToken(platformId: string, tokenId: string): StoredToken {
    for (const t of this.tokens.values()) if (t.token.id === tokenId && t.token.platformId === platformId) return t;
    throw errors.notFound("Token", tokenId);
  }

  private transportOf(service: ServiceName): Transport {
    return createRouterTransport((router) => {
      router.service(Health, {
        check: () => ({ status: this.serving.get(service) ? Status.SERVING : Status.NOT_SERVING }),
        watch: async function* () {},
      });
      if (service === "auth-sessions") this.authRoutes(router);
      if (service === "notifications") this.notificationRoutes(router);
      if (service === "ledger") this.ledgerRoutes(router);
      if (service === "agents") this.agentRoutes(router);
    });
  }

  private authRoutes(router: Parameters<Parameters<typeof createRouterTransport>[0]>[0]) {
    const guard = () => {
      if (this.failWith) throw this.failWith;
    };
    router.service(AuthSessionsService, {
      authenticate: (req) =>
        asService(() => {
          this.authenticateCalls++;
          const t = this.tokens.get(req.clientId);
          if (!t || t.secret !== req.clientSecret) throw errors.unauthorized();
          return {
            platformId: t.token.platformId,
            tokenId: t.token.id,
            permissions: t.token.permissions,
            environment: t.environment,
          };
        }),
      getPlatform: () => asService(() => ({})),
      createToken: (req) =>
        asService(() => {
          guard();
          const creds = this.addToken({ platformId: req.platformId, permissions: req.permissions, name: req.name });
          return { token: this.tokens.get(creds.clientId)!.token, clientSecret: creds.clientSecret };
        }),
      listTokens: (req) =>
        asService(() => {
          guard();
          this.lastListRequest = req;
          // As the real services answer a cursor they did not issue: a field without its location.
          if (req.page?.cursor === "forged") throw errors.invalidInput([{ field: "cursor", reason: "is not a cursor this API issued" }]);
          const mine = [...this.tokens.values()].map((t) => t.token).filter((t) => t.platformId === req.platformId);
          const page = mine.slice(0, req.page?.limit ?? 20);
          const hasMore = mine.length > page.length;
          return {
            tokens: page,
            pageInfo: create(PageInfoSchema, { hasMore, nextCursor: hasMore ? "next" : "", totalCount: BigInt(mine.length) }),
          };
        }),
      getToken: (req) => asService(() => (guard(), { token: this.findToken(req.platformId, req.tokenId).token })),
      deleteToken: (req) =>
        asService(() => {
          guard();
          const t = this.findToken(req.platformId, req.tokenId);
          this.tokens.delete(t.token.clientId);
          return { token: t.token };
        }),
      getPlatformConfig: (req) => asService(() => (guard(), { config: this.configOf(req.platformId) })),
      updatePlatformConfig: (req) =>
        asService(() => {
          guard();
          const c = this.configOf(req.platformId);
          if (req.umaDomain !== undefined) c.umaDomain = req.umaDomain;
          if (req.webhookEndpoint !== undefined) c.webhookEndpoint = req.webhookEndpoint;
          if (req.supportedCurrencies) c.supportedCurrencies = req.supportedCurrencies.currencies;
          if (req.passkeyRelyingPartyId !== undefined) c.passkeyRelyingPartyId = req.passkeyRelyingPartyId;
          if (req.passkeyOrigins) c.passkeyOrigins = req.passkeyOrigins.origins;
          return { config: c };
        }),
    });
  }

  private notificationRoutes(router: Parameters<Parameters<typeof createRouterTransport>[0]>[0]) {
    const settings = (platformId: string) =>
      create(WebhookSettingsSchema, {
        platformId,
        secret: "whsec_c2VjcmV0",
        secretCreatedAt: timestampFromDate(new Date("2025-10-13T00:00:00Z")),
      });
    router.service(NotificationsService, {
      getWebhookSettings: (req) => asService(() => ({ settings: settings(req.platformId) })),
      rotateWebhookSecret: (req) =>
        asService(() => {
          this.webhookRotations++;
          const s = settings(req.platformId);
          s.secret = "whsec_bmV3";
          s.previousSecretExpiresAt = timestampFromDate(new Date("2025-10-14T00:00:00Z"));
          return { settings: s };
        }),
      sendTestWebhook: (req) =>
        asService(() => {
          const url = this.configOf(req.platformId).webhookEndpoint;
          if (!url) throw errors.badRequest("WEBHOOK_ENDPOINT_NOT_SET", "Set webhookEndpoint with PATCH /config first");
          return {
            attempt: create(DeliveryAttemptSchema, {
              webhookId: newId("Webhook"),
              type: "TEST",
              url,
              responseStatus: this.testWebhookUnanswered ? 0 : 200,
              delivered: !this.testWebhookUnanswered,
              error: this.testWebhookUnanswered,
              attemptedAt: timestampFromDate(new Date()),
            }),
          };
        }),
    });
  }

  /**
   * Transfers and sandbox funding with the services' Idempotency-Key rules, but one key store per
   * RPC, as separate services keep: only the gateway can then see a key used on two routes.
   * Transfer-out refuses more than 1000 (400 INSUFFICIENT_BALANCE), releasing its key.
   */
  private ledgerRoutes(router: Parameters<Parameters<typeof createRouterTransport>[0]>[0]) {
    const stores = new Map<string, { hash: string; state: "in_flight" | "completed"; response?: unknown }>();
    const idempotent = async <T>(method: string, platformId: string, key: string, request: unknown, effect: () => Promise<T>): Promise<{ value: T; replayed: boolean }> => {
      this.ledgerCalls++;
      if (!key) return { value: await effect(), replayed: false };
      const id = `${method}\u0000${platformId}\u0000${key}`;
      const hash = requestHash(request);
      const held = stores.get(id);
      if (held && held.hash !== hash) throw new AppError("UNPROCESSABLE", "IDEMPOTENCY_KEY_REUSED", "used with another body", { idempotencyKey: key });
      if (held?.state === "completed") return { value: held.response as T, replayed: true };
      if (held) throw new AppError("CONFLICT", "IDEMPOTENCY_KEY_IN_USE", "in flight", { idempotencyKey: key }, { shouldNotRetry: false });
      stores.set(id, { hash, state: "in_flight" });
      try {
        const value = await effect();
        stores.set(id, { hash, state: "completed", response: value });
        return { value, replayed: false };
      } catch (err) {
        stores.delete(id);
        throw err;
      }
    };
    const hold = async () => {
      const gate = this.ledgerGate;
      this.ledgerGate = undefined;
      if (gate) await gate;
      const fail = this.ledgerFailNext;
      this.ledgerFailNext = undefined;
      if (fail) throw fail;
    };
    const usd = { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 };
    const transfer = (method: "transferIn" | "transferOut") => (req: { transfer?: TransferSpec }) =>
      asService(async () => {
        const t = req.transfer!;
        const { value, replayed } = await idempotent(method, t.platformId, t.idempotencyKey, { ...t, idempotencyKey: "" }, async () => {
          await hold();
          if (method === "transferOut" && t.amount > 1000n) throw errors.badRequest("INSUFFICIENT_BALANCE", "The source account's available balance is too low");
          this.ledgerEffects.push({ method, platformId: t.platformId, amount: t.amount });
          const now = timestampFromDate(new Date());
          return create(TransactionSchema, {
            id: newId("Transaction"),
            platformId: t.platformId,
            status: "PENDING",
            type: method === "transferIn" ? "INCOMING" : "OUTGOING",
            source: { type: "ACCOUNT", accountId: t.sourceAccountId, currency: "USD" },
            destination: { type: "ACCOUNT", accountId: t.destinationAccountId, currency: "USD" },
            amount: t.amount,
            currency: usd,
            sentAmount: t.amount,
            sentCurrency: usd,
            exchangeRate: "1",
            reference: `REF-${this.ledgerEffects.length}`,
            createdAt: now,
            updatedAt: now,
          });
        });
        const lost = this.ledgerLoseAnswerNext;
        this.ledgerLoseAnswerNext = undefined;
        if (lost) throw lost;
        return { result: { transaction: value, replayed } };
      });
    const record = (method: string, req: object) => this.rpcCalls.push({ method, req: req as Record<string, unknown> });
    const ext = (id: string, platformId: string, customerId: string) =>
      create(ExternalAccountSchema, {
        id,
        platformId,
        customerId,
        status: "ACTIVE",
        currency: "USD",
        accountInfo: { accountType: "USD_ACCOUNT" },
        beneficiaryVerificationStatus: "MATCHED",
        createdAt: timestampFromDate(new Date()),
        updatedAt: timestampFromDate(new Date()),
      });
    /** Records of another customer: a `customer_id` restriction that does not match answers 404. */
    const owned = (kind: string, id: string, restriction: string) => {
      if (restriction && id.includes("other")) throw errors.notFound(kind, id);
    };
    const page = (n: number) => create(PageInfoSchema, { hasMore: false, totalCount: BigInt(n) });
    router.service(LedgerService, {
      listTransactions: (req) => asService(() => (record("ledger.listTransactions", req), { transactions: [], pageInfo: page(0) })),
      getTransaction: (req) =>
        asService(() => {
          record("ledger.getTransaction", req);
          owned("Transaction", req.transactionId, req.customerId);
          const now = timestampFromDate(new Date());
          return {
            transaction: create(TransactionSchema, {
              id: req.transactionId,
              platformId: req.platformId,
              status: "COMPLETED",
              type: "OUTGOING",
              customerId: req.customerId,
              amount: 5n,
              currency: usd,
              sentAmount: 5n,
              sentCurrency: usd,
              agentId: "Agent:00000000-0000-7000-8000-000000000001",
              createdAt: now,
              updatedAt: now,
            }),
          };
        }),
      listInternalAccounts: (req) =>
        asService(() => {
          record("ledger.listInternalAccounts", req);
          const now = timestampFromDate(new Date());
          const account = create(InternalAccountSchema, { id: newId("InternalAccount"), platformId: req.platformId, customerId: req.customerId, type: "INTERNAL_FIAT", currency: usd, available: 7n, balance: 7n, createdAt: now, updatedAt: now });
          return { accounts: [account], pageInfo: page(1) };
        }),
      createExternalAccount: (req) => asService(() => (record("ledger.createExternalAccount", req), { account: ext(newId("ExternalAccount"), req.platformId, req.customerId) })),
      listExternalAccounts: (req) => asService(() => (record("ledger.listExternalAccounts", req), { accounts: [], pageInfo: page(0) })),
      getExternalAccount: (req) =>
        asService(() => {
          record("ledger.getExternalAccount", req);
          owned("ExternalAccount", req.accountId, req.customerId);
          return { account: ext(req.accountId, req.platformId, req.customerId) };
        }),
      deleteExternalAccount: (req) =>
        asService(() => {
          record("ledger.deleteExternalAccount", req);
          owned("ExternalAccount", req.accountId, req.customerId);
          return { account: ext(req.accountId, req.platformId, req.customerId) };
        }),
      transferIn: transfer("transferIn"),
      transferOut: transfer("transferOut"),
      fundInternalAccount: (req) =>
        asService(async () => {
          const { value, replayed } = await idempotent("fund", req.platformId, req.idempotencyKey, { ...req, idempotencyKey: "" }, async () => {
            await hold();
            this.ledgerEffects.push({ method: "fund", platformId: req.platformId, amount: req.amount });
            const now = timestampFromDate(new Date());
            return create(InternalAccountSchema, { id: req.accountId, platformId: req.platformId, type: "INTERNAL_FIAT", currency: usd, available: req.amount, balance: req.amount, createdAt: now, updatedAt: now });
          });
          return { account: value, replayed };
        }),
    });
  }

  /** Creates a connected agent directly and answers it with its access token. */
  addAgent(opts: { platformId: string; customerId?: string; permissions?: string[]; isPaused?: boolean; name?: string }) {
    const now = timestampFromDate(new Date("2026-11-23T10:00:00Z"));
    const agent = create(AgentSchema, {
      id: newId("Agent"),
      platformId: opts.platformId,
      customerId: opts.customerId ?? newId("Customer"),
      name: opts.name ?? "agent",
      isPaused: opts.isPaused ?? false,
      isConnected: true,
      policy: { permissions: opts.permissions ?? [], defaultExecutionMode: "APPROVAL_REQUIRED" },
      usage: { dailyResetDate: "2026-11-24", monthlyResetMonth: "2026-12" },
      createdAt: now,
      updatedAt: now,
    });
    this.agents.set(agent.id, agent);
    const token = `agt_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
    this.agentTokens.set(token, agent.id);
    return { agent, token };
  }

  /** A PENDING_APPROVAL transfer action of an agent (what the agents service records on submission). */
  addAction(agent: Agent, opts: { status?: string; type?: string } = {}) {
    const now = timestampFromDate(new Date("2026-11-23T10:00:00Z"));
    const action = create(AgentActionSchema, {
      id: newId("AgentAction"),
      platformId: agent.platformId,
      agentId: agent.id,
      customerId: agent.customerId,
      platformCustomerId: "pc-1",
      status: opts.status ?? "PENDING_APPROVAL",
      type: opts.type ?? "TRANSFER_OUT",
      createdAt: now,
      updatedAt: now,
      transferDetails: { amount: 2500n, currency: "USD", sourceAccountId: "InternalAccount:a", destinationAccountId: "ExternalAccount:b" },
    });
    this.agentActions.set(action.id, action);
    return action;
  }

  private agentRoutes(router: Parameters<Parameters<typeof createRouterTransport>[0]>[0]) {
    const record = (method: string, req: object) => this.rpcCalls.push({ method: `agents.${method}`, req: req as Record<string, unknown> });
    const now = () => timestampFromDate(new Date("2026-11-23T10:00:00Z"));
    const agentOf = (platformId: string, agentId: string) => {
      const a = this.agents.get(agentId);
      if (!a || a.platformId !== platformId) throw errors.notFound("Agent", agentId);
      return a;
    };
    const actionOf = (platformId: string, agentId: string, actionId: string) => {
      const a = this.agentActions.get(actionId);
      if (!a || a.platformId !== platformId || a.agentId !== agentId) throw errors.notFound("AgentAction", actionId);
      return a;
    };
    const issue = (agent: Agent) => {
      const code = create(DeviceCodeSchema, { code: `ABCD-${String(this.deviceCodes.size).padStart(4, "2")}`, agentId: agent.id, expiresAt: timestampFromDate(new Date("2026-11-23T10:15:00Z")), status: "PENDING" });
      this.deviceCodes.set(code.code, code);
      return code;
    };
    const page = <T>(items: T[]) => create(PageInfoSchema, { hasMore: false, totalCount: BigInt(items.length) });
    const quote = (platformId: string, agentId: string, id = newId("Quote")) =>
      create(QuoteSchema, {
        id,
        platformId,
        status: "PENDING",
        createdAt: now(),
        expiresAt: timestampFromDate(new Date("2026-11-23T10:05:00Z")),
        source: { sourceType: "ACCOUNT", accountId: "InternalAccount:a" },
        destination: { destinationType: "ACCOUNT", accountId: "ExternalAccount:b", paymentRail: "SEPA" },
        sendingCurrency: { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 },
        receivingCurrency: { code: "EUR", name: "Euro", symbol: "€", decimals: 2 },
        totalSendingAmount: 10_000n,
        totalReceivingAmount: 9_000n,
        exchangeRate: "1.1",
        feesIncluded: 100n,
        transactionId: newId("Transaction"),
        lockedCurrencySide: "SENDING",
        agentId,
      });
    // Submissions keep their Idempotency-Key per (agent, key), as the agents service does.
    const submitted = new Map<string, AgentAction>();
    const submit = (platformId: string, agentId: string, key: string, make: () => AgentAction) => {
      const id = `${agentId}\u0000${key}`;
      const held = key ? submitted.get(id) : undefined;
      if (held) return { action: held, replayed: true };
      const action = make();
      this.agentActions.set(action.id, action);
      if (key) submitted.set(id, action);
      return { action, replayed: false };
    };
    router.service(AgentsService, {
      authenticateAgent: (req) =>
        asService(() => {
          this.authenticateAgentCalls++;
          const agent = this.agents.get(this.agentTokens.get(req.accessToken) ?? "");
          if (!agent) throw errors.unauthorized();
          return { agent };
        }),
      createAgent: (req) =>
        asService(() => {
          record("createAgent", req);
          const agent = create(AgentSchema, {
            id: newId("Agent"),
            platformId: req.platformId,
            customerId: req.customerId,
            name: req.name,
            policy: req.policy ?? create(PolicySchema, { permissions: ["VIEW_TRANSACTIONS"], defaultExecutionMode: "APPROVAL_REQUIRED" }),
            usage: {},
            createdAt: now(),
            updatedAt: now(),
          });
          this.agents.set(agent.id, agent);
          return { agent, deviceCode: issue(agent) };
        }),
      listAgents: (req) =>
        asService(() => {
          record("listAgents", req);
          const mine = [...this.agents.values()].filter((a) => a.platformId === req.platformId && (!req.customerId || a.customerId === req.customerId) && (req.isPaused === undefined || a.isPaused === req.isPaused));
          return { agents: mine, pageInfo: page(mine) };
        }),
      getAgent: (req) => asService(() => (record("getAgent", req), { agent: agentOf(req.platformId, req.agentId) })),
      updateAgent: (req) =>
        asService(() => {
          record("updateAgent", req);
          const a = agentOf(req.platformId, req.agentId);
          if (req.name !== undefined) a.name = req.name;
          if (req.isPaused !== undefined) a.isPaused = req.isPaused;
          return { agent: a };
        }),
      deleteAgent: (req) =>
        asService(() => {
          record("deleteAgent", req);
          agentOf(req.platformId, req.agentId);
          this.agents.delete(req.agentId);
          return {};
        }),
      updateAgentPolicy: (req) =>
        asService(() => {
          record("updateAgentPolicy", req);
          return { agent: agentOf(req.platformId, req.agentId) };
        }),
      issueDeviceCode: (req) => asService(() => (record("issueDeviceCode", req), { deviceCode: issue(agentOf(req.platformId, req.agentId)) })),
      getDeviceCodeStatus: (req) =>
        asService(() => {
          record("getDeviceCodeStatus", req);
          const code = this.deviceCodes.get(req.code);
          if (!code || this.agents.get(code.agentId)?.platformId !== req.platformId) throw errors.notFound("DeviceCode", req.code);
          return { deviceCode: code };
        }),
      redeemDeviceCode: (req) =>
        asService(() => {
          record("redeemDeviceCode", req);
          const code = this.deviceCodes.get(req.code);
          const agent = code && this.agents.get(code.agentId);
          if (!code || !agent || code.redeemed) throw errors.badRequest("INVALID_DEVICE_CODE", "This device code is not valid");
          code.redeemed = true;
          code.status = "REDEEMED";
          agent.isConnected = true;
          const accessToken = `agt_${randomBytes(32).toString("base64url")}`;
          this.agentTokens.set(accessToken, agent.id);
          return { agent, accessToken };
        }),
      listApprovals: (req) =>
        asService(() => {
          record("listApprovals", req);
          const pending = [...this.agentActions.values()].filter((a) => a.platformId === req.platformId && a.status === "PENDING_APPROVAL" && (!req.agentId || a.agentId === req.agentId));
          return { actions: pending, pageInfo: page(pending) };
        }),
      approveAction: (req) =>
        asService(() => {
          record("approveAction", req);
          const a = actionOf(req.platformId, req.agentId, req.actionId);
          if (a.status !== "PENDING_APPROVAL") throw errors.conflict("INVALID_STATE_TRANSITION", "This action is not pending approval");
          a.status = "APPROVED";
          a.transaction = create(TransactionSchema, {
            id: newId("Transaction"),
            platformId: a.platformId,
            status: "PENDING",
            type: "OUTGOING",
            customerId: a.customerId,
            amount: 2500n,
            currency: { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 },
            sentAmount: 2500n,
            agentId: a.agentId,
            createdAt: now(),
            updatedAt: now(),
          });
          return { action: a };
        }),
      rejectAction: (req) =>
        asService(() => {
          record("rejectAction", req);
          const a = actionOf(req.platformId, req.agentId, req.actionId);
          if (a.status !== "PENDING_APPROVAL") throw errors.conflict("INVALID_STATE_TRANSITION", "This action is not pending approval");
          a.status = "REJECTED";
          a.rejectionReason = req.reason;
          return { action: a };
        }),
      listAgentActions: (req) =>
        asService(() => {
          record("listAgentActions", req);
          const mine = [...this.agentActions.values()].filter((a) => a.agentId === req.agentId && (!req.status || a.status === req.status));
          return { actions: mine, pageInfo: page(mine) };
        }),
      getAgentAction: (req) => asService(() => (record("getAgentAction", req), { action: actionOf(req.platformId, req.agentId, req.actionId) })),
      createAgentQuote: (req) => asService(() => (record("createAgentQuote", req), { quote: quote(req.platformId, req.agentId), replayed: false })),
      getAgentQuote: (req) => asService(() => (record("getAgentQuote", req), { quote: quote(req.platformId, req.agentId, req.quoteId) })),
      submitQuoteExecution: (req) =>
        asService(() => {
          record("submitQuoteExecution", req);
          const agent = agentOf(req.platformId, req.agentId);
          return submit(req.platformId, req.agentId, req.idempotencyKey, () =>
            create(AgentActionSchema, {
              id: newId("AgentAction"),
              platformId: req.platformId,
              agentId: agent.id,
              customerId: agent.customerId,
              platformCustomerId: "pc-1",
              status: "PENDING_APPROVAL",
              type: "EXECUTE_QUOTE",
              createdAt: now(),
              updatedAt: now(),
              quote: quote(req.platformId, agent.id, req.quoteId),
              transferDetails: { amount: 10_000n, currency: "USD", sourceAccountId: "InternalAccount:a", destinationAccountId: "ExternalAccount:b" },
              expiresAt: timestampFromDate(new Date("2026-11-23T10:05:00Z")),
            }),
          );
        }),
      submitTransfer: (req) =>
        asService(() => {
          record("submitTransfer", req);
          const agent = agentOf(req.platformId, req.agentId);
          return submit(req.platformId, req.agentId, req.idempotencyKey, () =>
            create(AgentActionSchema, {
              id: newId("AgentAction"),
              platformId: req.platformId,
              agentId: agent.id,
              customerId: agent.customerId,
              platformCustomerId: "pc-1",
              status: "PENDING_APPROVAL",
              type: req.direction === "IN" ? "TRANSFER_IN" : "TRANSFER_OUT",
              createdAt: now(),
              updatedAt: now(),
              transferDetails: { amount: req.amount, currency: "USD", sourceAccountId: req.sourceAccountId, destinationAccountId: req.destinationAccountId },
            }),
          );
        }),
    });
  }
}
