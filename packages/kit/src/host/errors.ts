import type { Interceptor } from "@connectrpc/connect";
import { inputErrorFromDatabase } from "../db/input-errors.js";
import { unavailableFromDependency } from "../db/unavailable.js";
import { toConnectError } from "../errors.js";

/**
 * Server interceptor that turns whatever a handler throws into a ConnectError, keeping the public
 * meaning of AppErrors (status, code, details) for the gateway. Handlers can therefore throw
 * domain errors directly. A database error that only a client's value causes (a NUL in text, a
 * date out of range: see inputErrorFromDatabase) becomes a 400 INVALID_INPUT, never a 500; a lost
 * or refused connection to a dependency (database down or restarting, a connection terminated:
 * see unavailableFromDependency) becomes UNAVAILABLE SERVICE_UNAVAILABLE (503), never a 500.
 */
export const appErrorInterceptor: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (err) {
    throw toConnectError(inputErrorFromDatabase(err) ?? unavailableFromDependency(err) ?? err);
  }
};
