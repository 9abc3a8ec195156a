import { startHarness } from "./harness.js";
import { kycProviderContractSuite, type ProviderSubject } from "./kyc-provider-contract.js";

// The review queue (the KYC provider connector that ships) passes the provider contract suite:
// its open requests are its SUBMITTED reviews, its far side is the operator's decision.
const DECISION = { APPROVED: "APPROVE", REJECTED: "REJECT", MORE_INFO_REQUESTED: "REQUEST_INFO" } as const;

kycProviderContractSuite("the operator's review queue", async () => {
  const h = await startHarness();
  const reviewOf = async (s: ProviderSubject) => {
    const { reviews } = await h.admin.listReviews({ platformId: s.platformId, limit: 500 });
    const r = reviews.filter((x) => x.subjectId === s.subjectId).at(-1);
    if (!r) throw new Error(`no review of ${s.subjectId}`);
    return r;
  };
  const decide = async (s: ProviderSubject, outcome: keyof typeof DECISION, reason: string) => {
    await h.admin.decideReview({ reviewId: (await reviewOf(s)).id, decision: DECISION[outcome], reason });
  };
  return {
    h,
    async openRequests(platformId) {
      const { reviews } = await h.admin.listReviews({ platformId, status: "SUBMITTED", limit: 500 });
      return reviews.map((r) => ({ platformId: r.platformId, customerId: r.customerId, subjectKind: r.subjectKind as ProviderSubject["subjectKind"], subjectId: r.subjectId }));
    },
    answer: decide,
    // The queue refuses a second decision (409 INVALID_STATE_TRANSITION): a decision is final.
    answerAgain: decide,
    close: () => h.close(),
  };
});
