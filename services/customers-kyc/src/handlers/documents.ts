import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DocumentSchema, type Document as DocumentPb, type DocumentInput as DocumentInputPb } from "@corridor/proto/corridor/customers_kyc/v1/document_pb.js";
import { ReviewSchema, type Review as ReviewPb } from "@corridor/proto/corridor/customers_kyc/v1/kyc_admin_service_pb.js";
import type { DocumentInput } from "../domain/documents.js";
import type { ReviewView } from "../domain/review-queue.js";
import type { KycDocument } from "../domain/types.js";

export function documentToPb(d: KycDocument): DocumentPb {
  return create(DocumentSchema, {
    id: d.id,
    platformId: d.platformId,
    documentHolder: d.documentHolder,
    customerId: d.customerId,
    documentType: d.documentType,
    side: d.side,
    country: d.country,
    documentNumber: d.documentNumber,
    issuingAuthority: d.issuingAuthority,
    fileName: d.fileName,
    contentType: d.contentType,
    sizeBytes: BigInt(d.sizeBytes),
    sha256: d.sha256,
    usedByReviewId: d.usedByReviewId ?? "",
    createdAt: timestampFromDate(d.createdAt),
    updatedAt: timestampFromDate(d.updatedAt),
  });
}

export function documentInputFromPb(i: DocumentInputPb | undefined): DocumentInput {
  return {
    documentHolder: i?.documentHolder || undefined,
    documentType: i?.documentType ?? "",
    side: i?.side ?? "",
    country: i?.country ?? "",
    documentNumber: i?.documentNumber ?? "",
    issuingAuthority: i?.issuingAuthority ?? "",
    fileName: i?.fileName ?? "",
    declaredContentType: i?.declaredContentType ?? "",
    content: i?.content ?? new Uint8Array(),
  };
}

export function reviewToPb(v: ReviewView): ReviewPb {
  const r = v.review;
  return create(ReviewSchema, {
    id: r.id,
    platformId: r.platformId,
    customerId: r.customerId,
    subjectKind: r.subjectKind,
    subjectId: r.subjectId,
    verificationId: r.verificationId ?? "",
    status: r.status,
    reason: r.reason,
    submissions: r.submissions,
    createdAt: timestampFromDate(r.createdAt),
    updatedAt: timestampFromDate(r.updatedAt),
    subjectType: v.subjectType,
    displayName: v.displayName,
  });
}
