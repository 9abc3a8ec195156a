// Public JSON of an external account, shared by the gateway (its GET answers) and notifications
// (EXTERNAL_ACCOUNT_UPDATED: the webhook's data is the account as its GET returns it). Pure.
import type { ExternalAccount } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import { emptyToUndefined, isoFromTimestamp } from "./time.js";

/** Ledger proto -> the public ExternalAccount (customerId is null for the platform's own accounts). */
export function externalAccountToJson(a: ExternalAccount | undefined) {
  if (!a) throw new Error("service answered without an external account");
  const platformAccountId = emptyToUndefined(a.platformAccountId);
  const verified = a.beneficiaryVerifiedData && Object.keys(a.beneficiaryVerifiedData).length > 0 ? a.beneficiaryVerifiedData : undefined;
  return {
    id: a.id,
    status: a.status,
    currency: a.currency,
    accountInfo: a.accountInfo ?? {},
    customerId: emptyToUndefined(a.customerId) ?? null,
    ...(platformAccountId ? { platformAccountId } : {}),
    defaultUmaDepositAccount: a.defaultUmaDepositAccount,
    beneficiaryVerificationStatus: a.beneficiaryVerificationStatus,
    ...(verified ? { beneficiaryVerifiedData: verified } : {}),
    createdAt: isoFromTimestamp(a.createdAt),
    updatedAt: isoFromTimestamp(a.updatedAt),
  };
}
