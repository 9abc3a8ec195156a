import { Code, ConnectError } from "@connectrpc/connect";
import { AppError } from "@corridor/kit";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";

/**
 * Another service's public refusal becomes the same AppError here (status, code, message,
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
  if (err instanceof AppError || !(err instanceof Error)) return err;
  const ce = ConnectError.from(err);
  const [detail] = ce.findDetails(PublicErrorSchema);
  if (!detail) return err;
  return new AppError(detail.httpStatus, detail.code, detail.message, detail.details ?? {}, { shouldNotRetry: detail.shouldNotRetry });
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
