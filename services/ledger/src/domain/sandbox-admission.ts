import { sandboxIdentifierOf, sandboxTransferOutcome } from "@corridor/kit";
import type { ExternalAccountRow } from "./model.js";
import { TRANSFER_FAILURE_REASON, type TransactionType } from "./transactions.js";

/**
 * A SANDBOX platform's transfer that the sandbox rail refuses at once (spec "Sandbox behaviour":
 * external account suffix 002, insufficient funds, and 003, account closed or invalid, "fail
 * immediately"): the request is answered with the transaction already FAILED, with its
 * failureReason (by direction, see TRANSFER_FAILURE_REASON) and the cause as failureDetail; nothing
 * is held and no rail instruction is sent. The table is the kit's, the one the sandbox simulator
 * plays. Any other environment gets undefined: production platforms never see sandbox magic.
 */
export function immediateRailFailure(environment: string | undefined, type: TransactionType, external: Pick<ExternalAccountRow, "account_info">): { reason: string; detail: string } | undefined {
  if (environment !== "SANDBOX") return undefined;
  const outcome = sandboxTransferOutcome(sandboxIdentifierOf(external.account_info));
  return outcome.kind === "FAILS_IMMEDIATELY" ? { reason: TRANSFER_FAILURE_REASON[type], detail: outcome.cause } : undefined;
}
