import type { Platform, PlatformConfig, StoredToken, Token, TokenFilter } from "./types.js";

/**
 * What the use cases need from storage and the event outbox. `data/` implements it over one
 * database transaction, so a change and the event announcing it commit together.
 */
export interface Store {
  /** The deployment this database belongs to (its identity row, database name, platform count). */
  deployment(): Promise<{ id: string; createdAt: Date; database: string; platformCount: number }>;
  platforms: {
    insert(p: Platform): Promise<void>;
    get(id: string): Promise<Platform | undefined>;
    /** Every platform, oldest first. */
    list(): Promise<Platform[]>;
  };
  tokens: {
    /** Throws ClientIdTaken when the client id is already used (even by a deleted token). */
    insert(t: StoredToken): Promise<void>;
    clientIdExists(clientId: string): Promise<boolean>;
    /** Live or deleted; Authenticate decides. */
    findByClientId(clientId: string): Promise<StoredToken | undefined>;
    /** A live token of that platform. */
    getLive(platformId: string, id: string): Promise<StoredToken | undefined>;
    /** One page of live tokens, newest first, strictly after `after` when given; fetches `limit` rows. */
    listLive(filter: TokenFilter, page: { limit: number; after?: { createdAt: Date; id: string } }): Promise<StoredToken[]>;
    countLive(filter: TokenFilter): Promise<number>;
    /** Marks the token deleted; false when it was not live. */
    markDeleted(platformId: string, id: string, at: Date): Promise<boolean>;
  };
  configs: {
    insert(c: PlatformConfig): Promise<void>;
    /** With `forUpdate`, locks the row until the transaction ends. */
    getByPlatform(platformId: string, opts?: { forUpdate?: boolean }): Promise<PlatformConfig | undefined>;
    update(c: PlatformConfig): Promise<void>;
  };
  /** Production platforms queued for their default UMA domain (issue 29, item 6). */
  umaBackfill: {
    /** Up to `limit` queued platform ids, oldest first. */
    queued(limit: number): Promise<string[]>;
    remove(platformId: string): Promise<void>;
  };
  events: {
    platformCreated(platform: Platform, config: PlatformConfig, at: Date): Promise<void>;
    configUpdated(config: PlatformConfig, at: Date): Promise<void>;
    tokenRevoked(token: Token, at: Date): Promise<void>;
  };
}

/** Runs `work` in one database transaction (committed when it resolves, rolled back when it throws). */
export type Transact = <T>(work: (store: Store) => Promise<T>) => Promise<T>;

/**
 * Runs read-only `work` with no transaction: each statement reads its own snapshot, which is all a
 * unit of one statement (or of reads that need not agree with each other) needs, and it saves the
 * BEGIN and COMMIT round trips on the hottest reads (a platform's config, its environment).
 */
export type Read = <T>(work: (store: Omit<Store, "events">) => Promise<T>) => Promise<T>;

/** Thrown by `tokens.insert` on a client id collision. */
export class ClientIdTaken extends Error {
  constructor(readonly clientId: string) {
    super(`client id ${clientId} is already in use`);
    this.name = "ClientIdTaken";
  }
}
