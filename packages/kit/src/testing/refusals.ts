import { ConnectError } from "@connectrpc/connect";
import { PublicErrorSchema, type PublicError } from "@corridor/proto/corridor/common/v1/error_pb.js";
import type { Outcome } from "../errors.js";

/**
 * The public refusal (PublicError detail) a failed service call carries. Throws when the call
 * succeeded, or failed without one (a transport or internal failure), so a test cannot pass on the
 * wrong kind of failure.
 */
export async function refusalOf(call: Promise<unknown>): Promise<PublicError> {
  let caught: unknown;
  try {
    await call;
  } catch (err) {
    caught = err;
  }
  if (caught === undefined) throw new Error("the call should have failed");
  const [detail] = ConnectError.from(caught).findDetails(PublicErrorSchema);
  if (!detail) throw new Error(`no PublicError detail on ${String(caught)}`);
  return detail;
}

/** Asserts that a call is refused with this outcome and code; answers the refusal. */
export async function expectRefusal(call: Promise<unknown>, outcome: Outcome, code: string): Promise<PublicError> {
  const detail = await refusalOf(call);
  if (detail.outcome !== outcome || detail.code !== code) {
    throw new Error(`expected ${outcome} ${code}, got ${detail.outcome} ${detail.code}: ${detail.message}`);
  }
  return detail;
}

/** The field names of an INVALID_INPUT refusal's details.errors. */
export function fieldsOf(err: Pick<PublicError, "details">): string[] {
  return ((err.details?.errors ?? []) as { field: string }[]).map((e) => e.field);
}
