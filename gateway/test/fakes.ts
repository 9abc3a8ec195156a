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
  lastListRequest: unknown;
  /** When set, every auth-sessions call but Authenticate throws it (to test 500 handling). */
  failWith?: Error;
  /** Calls of the fake ledger's money-moving RPCs that reached their effect (replays excluded). */
  readonly ledgerEffects: { method: string; platformId: string; amount: bigint }[] = [];
  /** Calls of the fake ledger's money-moving RPCs, replays and refusals included. */
  ledgerCalls = 0;
  /** When set, the next effect waits for it (holds a request in flight). */
  ledgerGate?: Promise<void>;
  /** When set, the next effect throws it instead of running (the key is released first, as a service does). */
  ledgerFailNext?: Error;
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
          const s = settings(req.platformId);
          s.secret = "whsec_bmV3";
          s.previousSecretExpiresAt = timestampFromDate(new Date("2025-10-14T00:00:00Z"));
          return { settings: s };
        }),
      sendTestWebhook: (req) =>
        asService(() => {
          const url = this.configOf(req.platformId).webhookEndpoint;
          if (!url) throw errors.conflict("WEBHOOK_ENDPOINT_NOT_SET", "Set webhookEndpoint with PATCH /config first");
          return {
            attempt: create(DeliveryAttemptSchema, {
              webhookId: newId("Webhook"),
              type: "TEST",
              url,
              responseStatus: 200,
              delivered: true,
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
      if (held && held.hash !== hash) throw new AppError(422, "IDEMPOTENCY_KEY_REUSED", "used with another body", { idempotencyKey: key });
      if (held?.state === "completed") return { value: held.response as T, replayed: true };
      if (held) throw new AppError(409, "IDEMPOTENCY_KEY_IN_USE", "in flight", { idempotencyKey: key }, { shouldNotRetry: false });
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
        return { result: { transaction: value, replayed, httpStatus: 201 } };
      });
    router.service(LedgerService, {
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
}
