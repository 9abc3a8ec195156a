import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  DecideReviewResponseSchema,
  GetDocumentContentResponseSchema,
  GetReviewResponseSchema,
  ListReviewsResponseSchema,
  type KycAdminService,
} from "@corridor/proto/corridor/customers_kyc/v1/kyc_admin_service_pb.js";
import type { ReviewQueue } from "../domain/review-queue.js";
import { documentToPb, reviewToPb } from "./documents.js";

/** KycAdminService: the operator's review queue; the gateway routes none of it. */
export function createKycAdminHandler({ queue }: { queue: ReviewQueue }): ServiceImpl<typeof KycAdminService> {
  return {
    async listReviews(req) {
      const reviews = await queue.list({ status: req.status || undefined, platformId: req.platformId || undefined, customerId: req.customerId || undefined, limit: req.limit || undefined });
      return create(ListReviewsResponseSchema, { reviews: reviews.map(reviewToPb) });
    },
    async getReview(req) {
      const d = await queue.get(req.reviewId);
      return create(GetReviewResponseSchema, { review: reviewToPb(d), subjectJson: JSON.stringify(d.subject, null, 2), documents: d.documents.map(documentToPb) });
    },
    async decideReview(req) {
      return create(DecideReviewResponseSchema, { review: reviewToPb(await queue.decide(req.reviewId, req.decision, req.reason)) });
    },
    async getDocumentContent(req) {
      const { document, content } = await queue.documentContent(req.documentId);
      return create(GetDocumentContentResponseSchema, { document: documentToPb(document), content });
    },
  };
}
