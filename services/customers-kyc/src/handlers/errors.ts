import type { Interceptor } from "@connectrpc/connect";
import { toConnectError } from "@corridor/kit";

/**
 * Turns whatever a handler throws into a ConnectError that keeps an AppError's public status,
 * code and details. Registered with the service itself, so it applies in every host and in
 * tests' router transports alike.
 */
export const domainErrors: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (err) {
    throw toConnectError(err);
  }
};
