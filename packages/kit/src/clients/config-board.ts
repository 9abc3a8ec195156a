import type { Redis } from "ioredis";

/**
 * The platform-config board: for each platform, the newest version of its config that
 * auth-sessions has committed (the config's updated_at in nanoseconds), or a mark that a change is
 * being made. It lets every other process keep a copy of a platform's config and still see a change
 * as soon as the PATCH that made it has answered (read-your-writes), at the price of one Redis read
 * instead of an RPC to auth-sessions and a database read there.
 *
 * The protocol (docs/architecture.md, "The platform-config board"):
 * - auth-sessions marks the platform `changing` before its config transaction, and publishes the
 *   new version after the commit and before it answers. Without the mark it does not change the
 *   config (UNAVAILABLE), so no change can commit unseen by the board.
 * - a reader trusts its copy only when the board shows a version and the copy is at least that new
 *   (and younger than COPY_MAX_AGE_MS); otherwise it asks auth-sessions. A version seen on the board
 *   after the PATCH answered is at least the PATCH's, so a reader after the PATCH fetches it.
 * - when the board knows nothing (a new platform, a key that expired or was evicted, a flushed
 *   Redis), auth-sessions offers the version it answers GetPlatformConfig with, set only if the key
 *   is still absent: any change marks or publishes first, so an offer never hides one. Only
 *   auth-sessions writes the board, so a reader on a board auth-sessions does not write (REDIS_URL
 *   set on the reader only) finds it empty and always asks.
 * - a failed publish leaves its mark pending, so the platform's entry shows `changing` until it
 *   expires CHANGING_TTL_MS after the latest mark (a version another change publishes meanwhile does
 *   not clear it); readers ask auth-sessions until then, and afterwards the board is empty again.
 */
export interface ConfigBoard {
  /** What the board shows for a platform; `unknown` also when the board cannot be read. */
  read(platformId: string): Promise<BoardReading>;
  /** Before a config change: readers stop trusting copies. Throws when the board cannot be written. */
  markChanging(platformId: string): Promise<void>;
  /** After the change committed: `version` unless the board already shows a newer one. */
  publish(platformId: string, version: bigint): Promise<void>;
  /** auth-sessions' answer to a read, kept only where the board shows nothing. */
  offer(platformId: string, version: bigint): Promise<void>;
}

/** A config's version as the board and every copy know it: its updated_at in nanoseconds since the epoch. */
export const configVersion = (updatedAt: Date): bigint => BigInt(updatedAt.getTime()) * 1_000_000n;

export type BoardReading = { kind: "version"; version: bigint } | { kind: "changing" } | { kind: "unknown" };

/** How long a change's mark lasts when its publish never comes (the config transaction is far shorter). */
export const CHANGING_TTL_MS = 30_000;
/** How long a published or offered version stays on the board without another change. */
export const VERSION_TTL_MS = 7 * 24 * 3_600_000;
/** A copy is asked for again after this, whatever the board shows (bounds any board mishap). */
export const COPY_MAX_AGE_MS = 30_000;

const UNKNOWN: BoardReading = { kind: "unknown" };

// A platform's entry: the newest published version (v) and how many changes have marked it and not
// published yet (pending). While one is pending the entry lives only CHANGING_TTL_MS after the
// latest mark, so a change whose publish never comes makes the whole entry expire: a version
// published meanwhile by another change cannot vouch for copies older than the lost one.
const MARK_SCRIPT = `
redis.call('HINCRBY', KEYS[1], 'pending', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;

// Versions are decimal strings without leading zeros: comparing length, then text, compares numbers.
const PUBLISH_SCRIPT = `
local cur = redis.call('HGET', KEYS[1], 'v')
if not cur or string.len(cur) < string.len(ARGV[1]) or (string.len(cur) == string.len(ARGV[1]) and cur < ARGV[1]) then
  redis.call('HSET', KEYS[1], 'v', ARGV[1])
end
local pending = tonumber(redis.call('HGET', KEYS[1], 'pending') or '0') - 1
if pending > 0 then
  redis.call('HSET', KEYS[1], 'pending', pending)
else
  redis.call('HSET', KEYS[1], 'pending', 0)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
`;

const OFFER_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'pending', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

function reading(v: string | null | undefined, pending: string | null | undefined): BoardReading {
  if (pending && Number(pending) > 0) return { kind: "changing" };
  if (v && /^\d{1,30}$/.test(v)) return { kind: "version", version: BigInt(v) };
  return UNKNOWN;
}

/** The board in Redis, shared by every process of a deployment (one hash per platform). */
export function redisConfigBoard(redis: Redis, prefix = "corridor:platform-config:"): ConfigBoard {
  const key = (platformId: string) => prefix + platformId;
  return {
    async read(platformId) {
      try {
        const [v, pending] = await redis.hmget(key(platformId), "v", "pending");
        return reading(v, pending);
      } catch {
        return UNKNOWN;
      }
    },
    async markChanging(platformId) {
      await redis.eval(MARK_SCRIPT, 1, key(platformId), String(CHANGING_TTL_MS));
    },
    async publish(platformId, version) {
      await redis.eval(PUBLISH_SCRIPT, 1, key(platformId), version.toString(), String(VERSION_TTL_MS));
    },
    async offer(platformId, version) {
      await redis.eval(OFFER_SCRIPT, 1, key(platformId), version.toString(), String(VERSION_TTL_MS));
    },
  };
}

/** The board of one process (embedded mode without Redis), where every reader and auth-sessions live. */
export function memoryConfigBoard(now: () => number = Date.now, maxEntries = 100_000): ConfigBoard {
  const entries = new Map<string, { v: bigint | undefined; pending: number; expiresAt: number }>();
  const current = (platformId: string) => {
    const e = entries.get(platformId);
    if (e && e.expiresAt <= now()) {
      entries.delete(platformId);
      return undefined;
    }
    return e;
  };
  const put = (platformId: string, v: bigint | undefined, pending: number, ttlMs: number) => {
    entries.delete(platformId);
    // Bounded: past the cap the oldest entry goes (its readers ask auth-sessions again).
    if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
    entries.set(platformId, { v, pending, expiresAt: now() + ttlMs });
  };
  return {
    async read(platformId) {
      const e = current(platformId);
      if (!e) return UNKNOWN;
      if (e.pending > 0) return { kind: "changing" };
      return e.v === undefined ? UNKNOWN : { kind: "version", version: e.v };
    },
    async markChanging(platformId) {
      const e = current(platformId);
      put(platformId, e?.v, (e?.pending ?? 0) + 1, CHANGING_TTL_MS);
    },
    async publish(platformId, version) {
      const e = current(platformId);
      const v = e?.v !== undefined && e.v >= version ? e.v : version;
      const pending = Math.max(0, (e?.pending ?? 0) - 1);
      if (e && pending > 0) {
        e.v = v;
        e.pending = pending;
      } else {
        put(platformId, v, 0, VERSION_TTL_MS);
      }
    },
    async offer(platformId, version) {
      if (!current(platformId)) put(platformId, version, 0, VERSION_TTL_MS);
    },
  };
}

/**
 * Copies of a per-platform value (a platform's config, in whatever form the caller keeps it),
 * served while the board says they are current and fetched from auth-sessions otherwise (which
 * fills an empty board). Without a board every call fetches.
 */
export function boardedCopies<T>(opts: {
  board: ConfigBoard | undefined;
  fetch(platformId: string): Promise<T>;
  /** The config version the value was read at; undefined values are never kept. */
  versionOf(value: T): bigint | undefined;
  now?: () => number;
  maxEntries?: number;
}): (platformId: string) => Promise<T> {
  const { board } = opts;
  if (!board) return (platformId) => opts.fetch(platformId);
  const now = opts.now ?? Date.now;
  const maxEntries = opts.maxEntries ?? 10_000;
  const copies = new Map<string, { value: T; version: bigint; fetchedAt: number }>();
  return async (platformId) => {
    // The board first: a copy is trusted only against a reading taken after the caller's request began.
    const reading = await board.read(platformId);
    const copy = copies.get(platformId);
    if (copy && reading.kind === "version" && copy.version >= reading.version && now() - copy.fetchedAt < COPY_MAX_AGE_MS) return copy.value;
    const fetchedAt = now();
    const value = await opts.fetch(platformId);
    const version = opts.versionOf(value);
    if (version === undefined) return value;
    const held = copies.get(platformId);
    // Concurrent fetches may finish out of order: keep the newest.
    if (!held || held.version <= version) {
      copies.delete(platformId);
      if (copies.size >= maxEntries) copies.delete(copies.keys().next().value!);
      copies.set(platformId, { value, version, fetchedAt });
    }
    return value;
  };
}

/** A Redis board over a connection of its own (ioredis is loaded only when this is called). */
export async function openRedisConfigBoard(url: string, onError: (err: unknown) => void): Promise<ConfigBoard & { close(): Promise<void> }> {
  const { Redis } = await import("ioredis");
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2_000 });
  redis.on("error", onError);
  return {
    ...redisConfigBoard(redis),
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
