import { Code, ConnectError } from "@connectrpc/connect";
import { appErrorFromConnect } from "@corridor/kit";

/**
 * Another service's public refusal becomes the same AppError here (outcome, code, message,
 * details), so it can be answered as is or recorded as an action's failure. Anything without a
 * public meaning (unreachable, deadline, internal) is rethrown unchanged: a failure that may pass.
 */
export async function call<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw asAppError(err);
  }
}

export function asAppError(err: unknown): unknown {
  return appErrorFromConnect(err) ?? err;
}

/** A lookup whose 404 means "not there" (undefined); other failures propagate as `call` does. */
export async function orNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (ConnectError.from(err).code === Code.NotFound) return undefined;
    throw asAppError(err);
  }
}
