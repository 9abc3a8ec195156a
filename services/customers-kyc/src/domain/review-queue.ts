import { AppError, errors, newId, type Clock } from "@corridor/kit";
import { applyDecision, type KycProvider, type VerificationRequest } from "./kyc-provider.js";
import type { Store, Transact } from "./ports.js";
import { REVIEW_STATUSES, type BeneficialOwner, type Customer, type KycDocument, type KycReview, type ReviewDecision, type ReviewStatus } from "./types.js";

/** The review queue's state machine: only a SUBMITTED review can be decided. */
export function nextReviewStatus(current: ReviewStatus, decision: ReviewDecision): ReviewStatus {
  if (current !== "SUBMITTED") {
    throw errors.conflict(
      "INVALID_STATE_TRANSITION",
      current === "MORE_INFO_REQUESTED"
        ? "This review is waiting for the customer to resubmit (more information was requested); it can be decided once resubmitted"
        : `This review is already ${current}; a decision is final`,
      { status: current, decision },
    );
  }
  if (decision === "APPROVE") return "APPROVED";
  if (decision === "REJECT") return "REJECTED";
  return "MORE_INFO_REQUESTED";
}

/** A review opened again by a resubmission: MORE_INFO_REQUESTED → SUBMITTED (a SUBMITTED one keeps waiting). */
export function resubmitted(r: KycReview, verificationId: string, now: Date): KycReview {
  if (r.status === "MORE_INFO_REQUESTED") return { ...r, status: "SUBMITTED", reason: "", submissions: r.submissions + 1, verificationId, updatedAt: now };
  if (r.status === "SUBMITTED") return { ...r, verificationId, updatedAt: now };
  throw new Error(`review ${r.id} is ${r.status}: closed reviews are never reopened`);
}

const REASON_MAX = 1000;

export const DECISIONS: readonly ReviewDecision[] = ["APPROVE", "REJECT", "REQUEST_INFO"];

export interface ReviewView {
  review: KycReview;
  subjectType: "INDIVIDUAL" | "BUSINESS" | "OWNER";
  displayName: string;
}

export interface ReviewDetail extends ReviewView {
  subject: Customer | BeneficialOwner;
  documents: KycDocument[];
}

/**
 * The operator's review queue: the KYC provider connector that ships. `provider.submit` opens
 * (or reopens) one review per subject: the customer, and a business's owners whose KYC is open;
 * the operator decides each through KycAdminService (`npm run admin -- kyc ...`), and the
 * decision is applied as any provider's would be (applyDecision). A final decision (approve or
 * reject) marks the subject's documents used: they can no longer be replaced or deleted.
 */
export function createReviewQueue({ transact, clock }: { transact: Transact; clock: Clock }) {
  async function open(store: Store, platformId: string, customerId: string, subjectKind: KycReview["subjectKind"], subjectId: string, verificationId: string, now: Date) {
    const existing = await store.reviews.openOf(platformId, subjectId, { forUpdate: true });
    if (existing) return store.reviews.update(resubmitted(existing, verificationId, now));
    await store.reviews.insert({
      id: newId("KycReview"),
      platformId,
      customerId,
      subjectKind,
      subjectId,
      verificationId,
      status: "SUBMITTED",
      reason: "",
      submissions: 1,
      createdAt: now,
      updatedAt: now,
    });
  }

  const provider: KycProvider = {
    async submit(store, req: VerificationRequest, now) {
      await open(store, req.platformId, req.customer.id, "CUSTOMER", req.customer.id, req.verification.id, now);
      for (const o of req.owners) await open(store, req.platformId, req.customer.id, "BENEFICIAL_OWNER", o.id, req.verification.id, now);
    },
  };

  async function view(store: Store, r: KycReview): Promise<ReviewDetail> {
    const customer = await store.customers.get(r.platformId, r.customerId);
    if (!customer) throw new Error(`review ${r.id}: customer ${r.customerId} is missing`);
    if (r.subjectKind === "BENEFICIAL_OWNER") {
      const owner = await store.owners.get(r.platformId, r.subjectId);
      if (!owner) throw new Error(`review ${r.id}: owner ${r.subjectId} is missing`);
      const documents = await store.documents.list({ platformId: r.platformId, holder: owner.id }, { limit: 500 });
      return { review: r, subjectType: "OWNER", displayName: `${owner.personalInfo.firstName} ${owner.personalInfo.lastName}`, subject: owner, documents };
    }
    const documents = await store.documents.list({ platformId: r.platformId, customerId: customer.id }, { limit: 500 });
    const displayName = customer.customerType === "BUSINESS" ? (customer.businessInfo?.legalName ?? "") : customer.fullName;
    return { review: r, subjectType: customer.customerType, displayName, subject: customer, documents };
  }

  const notFound = (id: string) => new AppError("NOT_FOUND", "KYC_REVIEW_NOT_FOUND", `KYC review ${id} not found`, { id });

  return {
    provider,

    list(filter: { status?: string; platformId?: string; customerId?: string; limit?: number }): Promise<ReviewView[]> {
      if (filter.status !== undefined && !(REVIEW_STATUSES as readonly string[]).includes(filter.status)) {
        throw errors.invalidInput([{ field: "status", reason: `must be one of ${REVIEW_STATUSES.join(", ")}` }]);
      }
      const limit = filter.limit ?? 100;
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw errors.invalidInput([{ field: "limit", reason: "must be 1 to 500" }]);
      return transact(async (store) => {
        const reviews = await store.reviews.list({ status: filter.status as ReviewStatus | undefined, platformId: filter.platformId, customerId: filter.customerId, limit });
        const out: ReviewView[] = [];
        for (const r of reviews) {
          const { review, subjectType, displayName } = await view(store, r);
          out.push({ review, subjectType, displayName });
        }
        return out;
      });
    },

    get(id: string): Promise<ReviewDetail> {
      return transact(async (store) => {
        const r = await store.reviews.get(id);
        if (!r) throw notFound(id);
        return view(store, r);
      });
    },

    /** The operator's decision: APPROVE, REJECT (with a reason) or REQUEST_INFO (with a reason). */
    decide(id: string, decision: string, reason: string): Promise<ReviewView> {
      const why = reason.trim();
      if (!(DECISIONS as readonly string[]).includes(decision)) throw errors.invalidInput([{ field: "decision", reason: `must be one of ${DECISIONS.join(", ")}` }]);
      if (decision !== "APPROVE" && !why) throw errors.invalidInput([{ field: "reason", reason: `is required to ${decision === "REJECT" ? "reject" : "request more information"}` }]);
      if (why.length > REASON_MAX) throw errors.invalidInput([{ field: "reason", reason: `must be at most ${REASON_MAX} characters` }]);
      return transact(async (store) => {
        const found = await store.reviews.get(id);
        if (!found) throw notFound(id);
        // The customer's row first (as every write of a customer or its owners), then the review.
        await store.customers.get(found.platformId, found.customerId, { forUpdate: true });
        const r = (await store.reviews.get(id, { forUpdate: true }))!;
        const status = nextReviewStatus(r.status, decision as ReviewDecision);
        if (r.subjectKind === "CUSTOMER" && status === "APPROVED") {
          const waiting = (await store.owners.allOf(r.platformId, r.customerId)).filter((o) => o.kycStatus !== "APPROVED");
          if (waiting.length) {
            throw errors.conflict(
              "INVALID_STATE_TRANSITION",
              `The business cannot be approved before its beneficial owners: ${waiting.map((o) => `${o.id} is ${o.kycStatus}`).join(", ")}`,
              { owners: waiting.map((o) => ({ id: o.id, kycStatus: o.kycStatus })) },
            );
          }
        }
        const now = clock.now();
        const next: KycReview = { ...r, status, reason: decision === "APPROVE" ? "" : why, updatedAt: new Date(Math.max(now.getTime(), r.updatedAt.getTime() + 1)) };
        await store.reviews.update(next);
        await applyDecision(store, clock, {
          platformId: r.platformId,
          subject: r.subjectKind === "CUSTOMER" ? { kind: "CUSTOMER", customerId: r.subjectId } : { kind: "BENEFICIAL_OWNER", ownerId: r.subjectId },
          verificationId: r.verificationId,
          outcome: status as "APPROVED" | "REJECTED" | "MORE_INFO_REQUESTED",
          reason: next.reason,
        });
        if (status === "APPROVED" || status === "REJECTED") await store.documents.markUsed(r.platformId, [r.subjectId], r.id);
        if (status === "MORE_INFO_REQUESTED" && r.subjectKind === "BENEFICIAL_OWNER") {
          // The business waits for the same resubmission as its owner.
          const business = await store.reviews.openOf(r.platformId, r.customerId, { forUpdate: true });
          if (business?.status === "SUBMITTED") await store.reviews.update({ ...business, status: "MORE_INFO_REQUESTED", reason: why, updatedAt: next.updatedAt });
        }
        const { review, subjectType, displayName } = await view(store, next);
        return { review, subjectType, displayName };
      });
    },

    /** A document's bytes, for the operator to export. */
    documentContent(id: string): Promise<{ document: KycDocument; content: Uint8Array }> {
      return transact(async (store) => {
        const document = await store.documents.get(undefined, id);
        const content = document && (await store.documents.content(id));
        if (!document || !content) throw errors.notFound("Document", id);
        return { document, content };
      });
    },
  };
}

export type ReviewQueue = ReturnType<typeof createReviewQueue>;
