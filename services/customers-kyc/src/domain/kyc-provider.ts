import { errors } from "@corridor/kit";
import { changeTime } from "./customers.js";
import type { Store, Transact } from "./ports.js";
import type { BeneficialOwner, Customer, KycStatus, Verification, VerificationError } from "./types.js";
import type { Clock } from "@corridor/kit";

/**
 * The KYC provider connector contract (docs/connectors.md, "KYC provider connector"): a
 * verification request goes out, a decision comes back. customers-kyc calls `submit` inside the
 * transaction that records the verification (so a request exists if and only if the PENDING
 * verification does); the provider answers later through `applyDecision`, which moves the
 * subject's status and the verification and emits the same events the sandbox path emits. The
 * operator's review queue (review-queue.ts) is the connector that ships.
 */
export interface VerificationRequest {
  platformId: string;
  /** The customer being verified (an individual, or a business with its owners). */
  customer: Customer;
  /** The business's owners whose KYC is still open (UNVERIFIED or PENDING); empty for individuals. */
  owners: BeneficialOwner[];
  /** The PENDING verification the decision will answer. */
  verification: Verification;
}

export interface KycProvider {
  /**
   * Sends the request out, inside the caller's transaction: must be idempotent per subject (a
   * subject with an open request is resubmitted, not duplicated) and must not decide anything.
   */
  submit(store: Store, request: VerificationRequest, now: Date): Promise<void>;
}

/**
 * How customers-kyc's composition root builds a provider connector: over the service's
 * transactions (to call applyDecision with the record of the answer) and its clock.
 */
export type KycProviderFactory = (ctx: { transact: Transact; clock: Clock }) => KycProvider;

/** A provider's decision about one subject. */
export interface KycDecision {
  platformId: string;
  subject: { kind: "CUSTOMER"; customerId: string } | { kind: "BENEFICIAL_OWNER"; ownerId: string };
  /** The verification the decision answers (an owner's decision: its business's). */
  verificationId: string | null;
  outcome: "APPROVED" | "REJECTED" | "MORE_INFO_REQUESTED";
  /** Why (rejections and requests for information); shown to the platform in the verification's errors. */
  reason: string;
}

/** The verification's errors for a decision's reason. */
const reasonErrors = (field: string, reason: string): VerificationError[] => (reason ? [{ type: "INVALID_FIELD", field, reason }] : []);

/**
 * Applies a provider's decision inside the caller's transaction: the customer's kycStatus /
 * kybStatus or the owner's kycStatus, and the verification's status, with the events the sandbox
 * path emits (CUSTOMER_UPDATED + CUSTOMER_{KYC,KYB}_<status>, BENEFICIAL_OWNER_UPDATED,
 * VERIFICATION_<status>). MORE_INFO_REQUESTED leaves the subject PENDING and turns the
 * verification RESOLVE_ERRORS with the reason, so the platform resubmits.
 */
export async function applyDecision(store: Store, clock: Clock, d: KycDecision): Promise<void> {
  let verification = d.verificationId ? await store.verifications.get(d.platformId, d.verificationId) : undefined;
  let now = clock.now();
  if (d.subject.kind === "CUSTOMER") {
    const customer = await store.customers.get(d.platformId, d.subject.customerId, { forUpdate: true });
    if (!customer) throw errors.notFound("Customer", d.subject.customerId);
    now = changeTime(clock, customer.updatedAt);
    const status: KycStatus = d.outcome === "MORE_INFO_REQUESTED" ? customer.verificationStatus : d.outcome;
    if (status !== customer.verificationStatus) {
      const next: Customer = { ...customer, verificationStatus: status, updatedAt: now };
      await store.customers.update(next);
      await store.events.customerUpdated(next, now);
      await store.events.customerStatusChanged(next, customer.verificationStatus, now);
    }
  } else {
    const owner = await store.owners.get(d.platformId, d.subject.ownerId, { forUpdate: true });
    if (!owner) throw errors.notFound("BeneficialOwner", d.subject.ownerId);
    now = changeTime(clock, owner.updatedAt);
    if (d.outcome !== "MORE_INFO_REQUESTED" && owner.kycStatus !== d.outcome) {
      const next: BeneficialOwner = { ...owner, kycStatus: d.outcome, updatedAt: now };
      await store.owners.update(next);
      await store.events.ownerChanged(next, false, now);
    }
  }
  // An owner's approval or rejection leaves the business's verification to the business's own decision.
  const touchesVerification = d.subject.kind === "CUSTOMER" || d.outcome === "MORE_INFO_REQUESTED";
  if (verification && touchesVerification && verification.verificationStatus === "PENDING") {
    const field = d.subject.kind === "CUSTOMER" ? "review" : `beneficialOwners.${d.subject.ownerId}`;
    const at = new Date(Math.max(now.getTime(), verification.updatedAt.getTime() + 1));
    verification = {
      ...verification,
      verificationStatus: d.outcome === "MORE_INFO_REQUESTED" ? "RESOLVE_ERRORS" : d.outcome,
      errors: reasonErrors(field, d.reason),
      updatedAt: at,
    };
    await store.verifications.update(verification);
    await store.events.verificationUpdated(verification, at);
  }
}
