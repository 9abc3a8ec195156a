import type { Interceptor } from "@connectrpc/connect";
import { toConnectError } from "../errors.js";

/**
 * Server interceptor that turns whatever a handler throws into a ConnectError, keeping the public
 * meaning of AppErrors (status, code, details) for the gateway. Handlers can therefore throw
 * domain errors directly.
 */
export const appErrorInterceptor: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (err) {
    throw toConnectError(err);
  }
};
