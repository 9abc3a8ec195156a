import { inTransaction } from "@corridor/kit";
import type { Kysely, Transaction } from "kysely";
import type { Read, Store, Transact } from "../domain/ports.js";
import { getPlatformConfig, insertPlatformConfig, queuedUmaBackfill, removeUmaBackfill, updatePlatformConfig } from "./platform-configs.js";
import { getDeployment, getPlatform, insertPlatform, listPlatforms } from "./platforms.js";
import type { AuthSessionsDatabase } from "./tables.js";
import {
  clientIdExists,
  countLiveTokens,
  findTokenByClientId,
  getLiveToken,
  insertToken,
  listLiveTokens,
  markTokenDeleted,
} from "./tokens.js";

/** The repositories bound to one transaction (or to the pool, for reads), in the shape the domain's Store port asks for. */
export function repositories(trx: Kysely<AuthSessionsDatabase>): Omit<Store, "events"> {
  return {
    deployment: () => getDeployment(trx),
    platforms: {
      insert: (p) => insertPlatform(trx, p),
      get: (id) => getPlatform(trx, id),
      list: () => listPlatforms(trx),
    },
    tokens: {
      insert: (t) => insertToken(trx, t),
      clientIdExists: (clientId) => clientIdExists(trx, clientId),
      findByClientId: (clientId) => findTokenByClientId(trx, clientId),
      getLive: (platformId, id) => getLiveToken(trx, platformId, id),
      listLive: (filter, page) => listLiveTokens(trx, filter, page),
      countLive: (filter) => countLiveTokens(trx, filter),
      markDeleted: (platformId, id, at) => markTokenDeleted(trx, platformId, id, at),
    },
    configs: {
      insert: (c) => insertPlatformConfig(trx, c),
      getByPlatform: (platformId, opts) => getPlatformConfig(trx, platformId, opts),
      update: (c) => updatePlatformConfig(trx, c),
    },
    umaBackfill: {
      queued: (limit) => queuedUmaBackfill(trx, limit),
      remove: (platformId) => removeUmaBackfill(trx, platformId),
    },
  };
}

/** A Transact over `db`: each unit of work gets repositories and an event sink on one transaction. */
export function transactOver(
  db: Kysely<AuthSessionsDatabase>,
  events: (trx: Transaction<AuthSessionsDatabase>) => Store["events"],
): Transact {
  return (work) => inTransaction(db, (trx) => work({ ...repositories(trx), events: events(trx) }));
}

/** A Read over `db`: the repositories on the pool, outside any transaction. */
export function readOver(db: Kysely<AuthSessionsDatabase>): Read {
  return (work) => work(repositories(db));
}
