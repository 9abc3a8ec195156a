import { AppError } from "@corridor/kit";
import { sandboxSuffix } from "./account-info.js";

export type BeneficiaryVerification = "MATCHED" | "PARTIAL_MATCH" | "NOT_MATCHED" | "UNSUPPORTED" | "CHECKED_BY_RECEIVING_FI" | "PENDING";

const BY_SUFFIX: Record<string, BeneficiaryVerification> = {
  "102": "NOT_MATCHED",
  "103": "PARTIAL_MATCH",
  "104": "PENDING",
  "106": "UNSUPPORTED",
  "107": "CHECKED_BY_RECEIVING_FI",
};

/**
 * Sandbox beneficiary-name verification by the identifier's 1xx suffix (spec table). Suffix 105
 * is an invalid account (INVALID), and nothing is stored. Production has no verification connector
 * yet, so its accounts are UNSUPPORTED.
 */
export function verifyBeneficiary(
  environment: string,
  identifier: string,
  beneficiaryName: string | undefined,
): { status: BeneficiaryVerification; verifiedData?: Record<string, unknown> } {
  if (environment !== "SANDBOX") return { status: "UNSUPPORTED" };
  const suffix = sandboxSuffix(identifier);
  if (suffix === "105") {
    throw new AppError("INVALID", "INVALID_BANK_ACCOUNT", "The receiving institution reports this account as invalid", {
      errors: [{ field: "accountInfo", reason: "the account does not exist at the receiving institution" }],
    });
  }
  const status = BY_SUFFIX[suffix] ?? "MATCHED";
  const verifiedData = (status === "MATCHED" || status === "PARTIAL_MATCH") && beneficiaryName ? { fullName: beneficiaryName } : undefined;
  return { status, verifiedData };
}
