import { AppError, configVersion, decodeKeysetCursor, errors, newId, pageSize, targetPolicy, toPage, type Clock, type ConfigBoard, type WebhookTargetSettings } from "@corridor/kit";
import { hashSecret, newClientId, newClientSecret, secretMatches } from "./credentials.js";
import { defaultSupportedCurrencies, defaultUmaDomain } from "./defaults.js";
import { ClientIdTaken, type Read, type Store, type Transact } from "./ports.js";
import type { Permission, Platform, PlatformConfig, Principal, StoredToken, Token, TokenFilter } from "./types.js";
import { validateConfigPatch, validateNewPlatform, validatePasskeyRelyingParty, validateNewToken, type ConfigPatch, type NewPlatformInput } from "./validation.js";

export interface AuthSessionsDeps {
  transact: Transact;
  /** Single-statement reads outside a transaction; `transact` when not given. */
  read?: Read;
  clock: Clock;
  /** The operator's name for this deployment (CORRIDOR_DEPLOYMENT_NAME), shown by the operator CLI. */
  deploymentName?: string;
  /** The operator's UMA domain (CORRIDOR_UMA_DOMAIN): production platforms' domains are subdomains of it. */
  operatorUmaDomain: string;
  /** The platform-config board, told of every config change (kit clients/config-board.ts). */
  board?: Pick<ConfigBoard, "markChanging" | "publish" | "offer">;
  /** Where a failed board write is reported: a change's publish after its commit, or a read's offer. */
  onBoardError?: (err: unknown, platformId: string, step: "publish" | "offer") => void;
  /** The operator's webhook-target settings (kit webhookTargetEnv); the defaults without. */
  webhookTargets?: WebhookTargetSettings;
}

export interface TokenPage {
  tokens: Token[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount: number;
}

/** The first token of a new platform may do everything. */
const BOOTSTRAP_PERMISSIONS: Permission[] = ["VIEW", "TRANSACT", "MANAGE"];
const BOOTSTRAP_TOKEN_NAME = "bootstrap";

/** Drops the stored-only fields so they cannot leak into an answer. */
function publicToken(t: StoredToken): Token {
  return {
    id: t.id,
    platformId: t.platformId,
    name: t.name,
    permissions: t.permissions,
    clientId: t.clientId,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

async function requirePlatform(store: Pick<Store, "platforms">, platformId: string): Promise<Platform> {
  const platform = platformId ? await store.platforms.get(platformId) : undefined;
  if (!platform) throw errors.notFound("Platform", platformId || undefined);
  return platform;
}

/** The config after a validated patch with at least one field, stored with its event. */
async function applyConfigPatch(store: Store, current: PlatformConfig, valid: ConfigPatch, clock: Clock): Promise<PlatformConfig> {
    // The relying party is checked as a whole as it will be: a patch may change either half.
    const passkeyChanged = valid.passkeyRelyingPartyId !== undefined || valid.passkeyOrigins !== undefined;
    const passkeyRelyingPartyId = valid.passkeyRelyingPartyId ?? current.passkeyRelyingPartyId;
    // Clearing the RP id alone clears its origins too (they would not fit the default RP).
    const originsAfter = valid.passkeyOrigins ?? (valid.passkeyRelyingPartyId === "" ? [] : current.passkeyOrigins);
    const passkeyOrigins = passkeyChanged ? validatePasskeyRelyingParty(passkeyRelyingPartyId, originsAfter) : current.passkeyOrigins;
    // updatedAt is the config's version: consumers (notifications) apply an update only when
    // it is newer than what they hold, so two changes within one millisecond must still differ.
    const now = new Date(Math.max(clock.now().getTime(), current.updatedAt.getTime() + 1));
    const next: PlatformConfig = {
      ...current,
      umaDomain: valid.umaDomain ?? current.umaDomain,
      webhookEndpoint: valid.webhookEndpoint ?? current.webhookEndpoint,
      supportedCurrencies: valid.supportedCurrencies ?? current.supportedCurrencies,
      passkeyRelyingPartyId,
      passkeyOrigins,
      webhookEventNaming: valid.webhookEventNaming === "GRID" || valid.webhookEventNaming === "CORRIDOR" ? valid.webhookEventNaming : current.webhookEventNaming,
      updatedAt: now,
    };
    await store.configs.update(next);
    await store.events.configUpdated(next, now);
    return next;
}

/**
 * The use cases of auth-sessions: platforms, API tokens and platform configuration. Plain
 * TypeScript over the Store port; every token and config operation is scoped by platform id, so
 * another platform's records answer 404 exactly like missing ones.
 */
export function createAuthSessions({ transact, read = transact, clock, deploymentName, operatorUmaDomain, board, onBoardError = () => {}, webhookTargets }: AuthSessionsDeps) {
  const unauthorized = () => errors.unauthorized("Invalid client id or secret");

  /**
   * One config change under the platform-config board's protocol: mark the platform changing, run
   * `change` on the locked config in one transaction, publish the version that committed. With
   * `changes` false the config is only read (no mark, no publish).
   */
  async function changeConfig(
    platformId: string,
    changes: boolean,
    change: (store: Store, current: PlatformConfig) => Promise<PlatformConfig>,
  ): Promise<PlatformConfig> {
    // The board first: from here until the publish below no reader trusts its copy, so the
    // change is seen by everyone once this answers. A change the board cannot hear of is not made.
    if (changes && board) {
      try {
        await board.markChanging(platformId);
      } catch {
        throw new AppError("UNAVAILABLE", "SERVICE_UNAVAILABLE", "The configuration cannot be changed right now; retry later");
      }
    }
    let version: bigint | undefined;
    try {
      const updated = await transact(async (store) => {
        const current = await store.configs.getByPlatform(platformId, { forUpdate: true });
        if (!current) throw errors.notFound("PlatformConfig");
        // A change that fails below leaves the config as it was: the board shows that version again.
        version = configVersion(current.updatedAt);
        return await change(store, current);
      });
      version = configVersion(updated.updatedAt);
      return updated;
    } finally {
      if (changes && board && version !== undefined) {
        // Failing here leaves the mark, and readers ask auth-sessions until it expires.
        await board.publish(platformId, version).catch((err: unknown) => onBoardError(err, platformId, "publish"));
      }
    }
  }

  return {
    async authenticate(clientId: string, clientSecret: string): Promise<Principal> {
      if (!clientId || !clientSecret) throw unauthorized();
      // Two independent reads: a token revoked between them is refused by the next request.
      return read(async (store) => {
        const token = await store.tokens.findByClientId(clientId);
        if (!token || token.deletedAt !== null || !secretMatches(clientSecret, token.secretSha256)) throw unauthorized();
        const platform = await store.platforms.get(token.platformId);
        if (!platform) throw unauthorized();
        return {
          platformId: platform.id,
          tokenId: token.id,
          permissions: token.permissions,
          environment: platform.environment,
          secretSha256: token.secretSha256,
        };
      });
    },

    getPlatform(platformId: string): Promise<Platform> {
      return read((store) => requirePlatform(store, platformId));
    },

    async createToken(platformId: string, input: { name: string; permissions: string[] }): Promise<{ token: Token; clientSecret: string }> {
      const valid = validateNewToken(input);
      return transact(async (store) => {
        await requirePlatform(store, platformId);
        const clientSecret = newClientSecret();
        const now = clock.now();
        const token: StoredToken = {
          id: newId("Token"),
          platformId,
          name: valid.name,
          permissions: valid.permissions,
          clientId: newClientId(),
          secretSha256: hashSecret(clientSecret),
          createdAt: now,
          updatedAt: now,
          deletedAt: null,
        };
        await store.tokens.insert(token);
        return { token: publicToken(token), clientSecret };
      });
    },

    async listTokens(filter: TokenFilter, page: { limit?: number; cursor?: string }): Promise<TokenPage> {
      const limit = pageSize(page.limit);
      const pos = decodeKeysetCursor(page.cursor, "timestamp");
      const after = pos && { createdAt: pos.k, id: pos.id };
      return transact(async (store) => {
        const rows = await store.tokens.listLive(filter, { limit: limit + 1, after });
        const totalCount = await store.tokens.countLive(filter);
        const built = toPage(rows, limit, (t) => ({ k: t.createdAt.toISOString(), id: t.id }), totalCount);
        return { tokens: built.data.map(publicToken), hasMore: built.hasMore, nextCursor: built.nextCursor, totalCount };
      });
    },

    getToken(platformId: string, tokenId: string): Promise<Token> {
      return transact(async (store) => {
        const token = await store.tokens.getLive(platformId, tokenId);
        if (!token) throw errors.notFound("Token", tokenId);
        return publicToken(token);
      });
    },

    /** Revokes at once: Authenticate stops accepting it, and TokenRevoked tells caches to forget it. */
    deleteToken(platformId: string, tokenId: string): Promise<Token> {
      return transact(async (store) => {
        const token = await store.tokens.getLive(platformId, tokenId);
        const now = clock.now();
        if (!token || !(await store.tokens.markDeleted(platformId, tokenId, now))) throw errors.notFound("Token", tokenId);
        const revoked = publicToken({ ...token, updatedAt: now });
        await store.events.tokenRevoked(revoked, now);
        return revoked;
      });
    },

    async getConfig(platformId: string): Promise<PlatformConfig> {
      const config = await read(async (store) => {
        const found = await store.configs.getByPlatform(platformId);
        if (!found) throw errors.notFound("PlatformConfig");
        return found;
      });
      // Fills an empty board (never over a change in progress or a version on it), so the
      // asker's copy is trusted from its next read on.
      await board?.offer(platformId, configVersion(config.updatedAt)).catch((err: unknown) => onBoardError(err, platformId, "offer"));
      return config;
    },

    /** Changes only the fields present; a patch with none answers the config untouched. */
    async updateConfig(platformId: string, patch: ConfigPatch): Promise<PlatformConfig> {
      // A webhook endpoint is judged by the platform's environment (an unknown platform by the
      // strictest policy; it is refused as not found below anyway).
      const environment = patch.webhookEndpoint ? ((await read((store) => store.platforms.get(platformId)))?.environment ?? "PRODUCTION") : "PRODUCTION";
      const valid = validateConfigPatch(patch, targetPolicy(environment, webhookTargets));
      const changes = Object.values(valid).some((v) => v !== undefined);
      return changeConfig(platformId, changes, (store, current) => (changes ? applyConfigPatch(store, current, valid, clock) : Promise.resolve(current)));
    },

    /**
     * The uma-domain-backfill worker's pass (issue 29, item 6): each production platform queued by
     * the migration 20261227000000_production_uma_domains gets its default domain under the
     * operator's, if its domain is still empty, through the config-change path (board, event). The
     * row goes in the same transaction. Answers how many platforms it handled.
     */
    async backfillUmaDomains(limit = 50): Promise<number> {
      const queued = await transact((store) => store.umaBackfill.queued(limit));
      for (const platformId of queued) {
        await changeConfig(platformId, true, async (store, current) => {
          await store.umaBackfill.remove(platformId);
          const platform = await store.platforms.get(platformId);
          if (!platform || current.umaDomain !== "") return current;
          return applyConfigPatch(store, current, { umaDomain: defaultUmaDomain(platform, operatorUmaDomain) }, clock);
        });
      }
      return queued.length;
    },

    /**
     * Creates a platform with its configuration and a first all-permissions token. Fixed
     * credentials are for bootstrapping a known sandbox; a client id already in use is a 409.
     */
    async createPlatform(input: NewPlatformInput): Promise<{ platform: Platform; config: PlatformConfig; token: Token; clientSecret: string }> {
      const valid = validateNewPlatform(input);
      const taken = () => errors.conflict("CONFLICT", "This client id is already in use", { field: "clientId" });
      try {
        return await transact(async (store) => {
          if (valid.clientId && (await store.tokens.clientIdExists(valid.clientId))) throw taken();
          const now = clock.now();
          const platform: Platform = {
            id: newId("Platform"),
            name: valid.name.trim(),
            environment: valid.environment,
            isRegulated: valid.isRegulated,
            createdAt: now,
          };
          const config: PlatformConfig = {
            id: newId("PlatformConfig"),
            platformId: platform.id,
            umaDomain: defaultUmaDomain(platform, operatorUmaDomain),
            proxyUmaSubdomain: "",
            webhookEndpoint: "",
            supportedCurrencies: defaultSupportedCurrencies(),
            passkeyRelyingPartyId: "",
            passkeyOrigins: [],
            webhookEventNaming: "CORRIDOR",
            isRegulatedFinancialInstitution: platform.isRegulated,
            createdAt: now,
            updatedAt: now,
          };
          const clientSecret = valid.clientSecret || newClientSecret();
          const token: StoredToken = {
            id: newId("Token"),
            platformId: platform.id,
            name: BOOTSTRAP_TOKEN_NAME,
            permissions: BOOTSTRAP_PERMISSIONS,
            clientId: valid.clientId || newClientId(),
            secretSha256: hashSecret(clientSecret),
            createdAt: now,
            updatedAt: now,
            deletedAt: null,
          };
          await store.platforms.insert(platform);
          await store.configs.insert(config);
          await store.tokens.insert(token);
          await store.events.platformCreated(platform, config, now);
          return { platform, config, token: publicToken(token), clientSecret };
        });
      } catch (err) {
        // Two bootstraps racing on one client id: the loser hits the unique index.
        if (err instanceof ClientIdTaken) throw taken();
        throw err;
      }
    },

    listPlatforms(): Promise<Platform[]> {
      return transact((store) => store.platforms.list());
    },

    /** Which deployment this is: the operator CLI prints it before it acts. */
    async describeDeployment() {
      const d = await transact((store) => store.deployment());
      return { ...d, name: deploymentName ?? "" };
    },
  };
}

export type AuthSessions = ReturnType<typeof createAuthSessions>;
