import { AppError, decodeKeysetCursor, errors } from "@corridor/kit";
import type { AccountRow } from "./model.js";
import type { CustomerFacts, Directory, LedgerStatements } from "./ports.js";

/** The largest sandbox funding in one request (minor units). */
export const MAX_FUND_AMOUNT = 100_000_000_000n;

/** A platform's or customer's internal account; system accounts are never found. */
export async function internalAccount(store: LedgerStatements, platformId: string, id: string): Promise<AccountRow> {
  const row = await store.getAccount(platformId, id);
  if (!row || row.owner_kind === "SYSTEM") throw errors.notFound("InternalAccount", id);
  return row;
}

/** KYC/KYB gate: a customer moves money only once APPROVED (`known`: facts already read, else the directory is asked). */
export async function approvedCustomer(directory: Directory, platformId: string, customerId: string, known?: CustomerFacts) {
  const c = known ?? (await directory.customer(platformId, customerId));
  if (c.isDeleted) throw errors.notFound("Customer", customerId);
  if (c.verificationStatus !== "APPROVED") {
    throw new AppError("FORBIDDEN", "USER_NOT_READY", "The customer's KYC/KYB verification is not APPROVED; it cannot move money yet", {
      customerId,
      verificationStatus: c.verificationStatus,
    });
  }
  return c;
}

/** INVALID when the platform's configuration does not enable this direction in this currency. */
export async function requireTransactionType(directory: Directory, platformId: string, currency: string, type: "OUTGOING" | "INCOMING"): Promise<void> {
  const enabled = await directory.transactionTypes(platformId, currency);
  if (enabled && !enabled.includes(type)) {
    throw errors.badRequest(
      "TRANSACTION_TYPE_NOT_ENABLED",
      `${type} payments in ${currency} are not enabled in the platform's configuration (supportedCurrencies[].enabledTransactionTypes)`,
      { currency, transactionType: type },
    );
  }
}

export function checkAmount(amount: bigint, max: bigint): void {
  if (amount < 1n || amount > max) throw errors.invalidInput([{ field: "amount", reason: `must be an integer from 1 to ${max}` }]);
}

export interface PageInput {
  limit?: number;
  cursor?: string;
}

/** Every ledger list pages on (created_at, id): a cursor whose key is no timestamp is INVALID. */
export function after(cursor: string | undefined) {
  const pos = decodeKeysetCursor(cursor, "timestamp");
  return pos && { at: pos.k, id: pos.id };
}
