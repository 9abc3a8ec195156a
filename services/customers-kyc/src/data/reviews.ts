import type { Kysely, Transaction } from "kysely";
import type { KycDocument, KycReview, ReviewStatus } from "../domain/types.js";
import type { CustomersKycDatabase, KycDocumentRow, KycReviewRow } from "./tables.js";

type Db = Kysely<CustomersKycDatabase> | Transaction<CustomersKycDatabase>;

function toReview(r: KycReviewRow): KycReview {
  return {
    id: r.id,
    platformId: r.platform_id,
    customerId: r.customer_id,
    subjectKind: r.subject_kind as KycReview["subjectKind"],
    subjectId: r.subject_id,
    verificationId: r.verification_id,
    status: r.status as ReviewStatus,
    reason: r.reason,
    submissions: r.submissions,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const reviewRow = (r: KycReview) => ({
  id: r.id,
  platform_id: r.platformId,
  customer_id: r.customerId,
  subject_kind: r.subjectKind,
  subject_id: r.subjectId,
  verification_id: r.verificationId,
  status: r.status,
  reason: r.reason,
  submissions: r.submissions,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

export async function insertReview(db: Db, r: KycReview): Promise<void> {
  await db.insertInto("kyc_reviews").values(reviewRow(r)).execute();
}

export async function updateReview(db: Db, r: KycReview): Promise<void> {
  const { id: _id, ...rest } = reviewRow(r);
  await db.updateTable("kyc_reviews").set(rest).where("id", "=", r.id).execute();
}

/** Any platform's review by id: the queue is the operator's, across platforms. */
export async function getReview(db: Db, id: string, opts: { forUpdate?: boolean } = {}): Promise<KycReview | undefined> {
  let q = db.selectFrom("kyc_reviews").selectAll().where("id", "=", id);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row && toReview(row);
}

/** The subject's open review (SUBMITTED or MORE_INFO_REQUESTED), if any. */
export async function openReviewOf(db: Db, platformId: string, subjectId: string, opts: { forUpdate?: boolean } = {}): Promise<KycReview | undefined> {
  let q = db
    .selectFrom("kyc_reviews")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("subject_id", "=", subjectId)
    .where("status", "in", ["SUBMITTED", "MORE_INFO_REQUESTED"]);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row && toReview(row);
}

/** Every review of one customer (its own and its owners'), oldest first. */
export async function reviewsOfCustomer(db: Db, platformId: string, customerId: string): Promise<KycReview[]> {
  const rows = await db.selectFrom("kyc_reviews").selectAll().where("platform_id", "=", platformId).where("customer_id", "=", customerId).orderBy("created_at").orderBy("id").execute();
  return rows.map(toReview);
}

export async function listReviews(db: Db, f: { status?: ReviewStatus; platformId?: string; customerId?: string; limit: number }): Promise<KycReview[]> {
  let q = db.selectFrom("kyc_reviews").selectAll();
  if (f.customerId) q = q.where("customer_id", "=", f.customerId);
  if (f.status) q = q.where("status", "=", f.status);
  if (f.platformId) q = q.where("platform_id", "=", f.platformId);
  const rows = await q.orderBy("created_at").orderBy("id").limit(f.limit).execute();
  return rows.map(toReview);
}

const DOCUMENT_META = [
  "id",
  "platform_id",
  "customer_id",
  "document_holder",
  "document_type",
  "side",
  "country",
  "document_number",
  "issuing_authority",
  "file_name",
  "content_type",
  "size_bytes",
  "sha256",
  "used_by_review_id",
  "created_at",
  "updated_at",
] as const;

function toDocument(r: Omit<KycDocumentRow, "content">): KycDocument {
  return {
    id: r.id,
    platformId: r.platform_id,
    customerId: r.customer_id,
    documentHolder: r.document_holder,
    documentType: r.document_type as KycDocument["documentType"],
    side: r.side as KycDocument["side"],
    country: r.country,
    documentNumber: r.document_number,
    issuingAuthority: r.issuing_authority,
    fileName: r.file_name,
    contentType: r.content_type,
    sizeBytes: r.size_bytes,
    sha256: r.sha256,
    usedByReviewId: r.used_by_review_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const documentRow = (d: KycDocument, content: Uint8Array) => ({
  id: d.id,
  platform_id: d.platformId,
  customer_id: d.customerId,
  document_holder: d.documentHolder,
  document_type: d.documentType,
  side: d.side,
  country: d.country,
  document_number: d.documentNumber,
  issuing_authority: d.issuingAuthority,
  file_name: d.fileName,
  content_type: d.contentType,
  size_bytes: d.sizeBytes,
  sha256: d.sha256,
  content,
  used_by_review_id: d.usedByReviewId,
  created_at: d.createdAt,
  updated_at: d.updatedAt,
});

export async function insertDocument(db: Db, d: KycDocument, content: Uint8Array): Promise<void> {
  await db.insertInto("kyc_documents").values(documentRow(d, content)).execute();
}

/** Replaces metadata and bytes. */
export async function replaceDocument(db: Db, d: KycDocument, content: Uint8Array): Promise<void> {
  const { id: _id, created_at: _c, ...rest } = documentRow(d, content);
  await db.updateTable("kyc_documents").set(rest).where("id", "=", d.id).execute();
}

export async function deleteDocument(db: Db, id: string): Promise<void> {
  await db.deleteFrom("kyc_documents").where("id", "=", id).execute();
}

/** A document's metadata; `platformId` undefined only for the operator's review. */
export async function getDocument(db: Db, platformId: string | undefined, id: string, opts: { forUpdate?: boolean } = {}): Promise<KycDocument | undefined> {
  let q = db.selectFrom("kyc_documents").select(DOCUMENT_META).where("id", "=", id);
  if (platformId !== undefined) q = q.where("platform_id", "=", platformId);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row && toDocument(row);
}

export async function getDocumentContent(db: Db, id: string): Promise<Uint8Array | undefined> {
  const row = await db.selectFrom("kyc_documents").select("content").where("id", "=", id).executeTakeFirst();
  return row?.content;
}

/** Newest first; `holder` narrows to one holder, `customerId` to one customer and its owners. */
export async function listDocuments(
  db: Db,
  f: { platformId: string; holder?: string; customerId?: string },
  page: { limit: number; after?: { createdAt: Date; id: string } },
): Promise<KycDocument[]> {
  let q = db.selectFrom("kyc_documents").select(DOCUMENT_META).where("platform_id", "=", f.platformId);
  if (f.holder !== undefined) q = q.where("document_holder", "=", f.holder);
  if (f.customerId !== undefined) q = q.where("customer_id", "=", f.customerId);
  const after = page.after;
  if (after) q = q.where((eb) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)));
  const rows = await q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.limit).execute();
  return rows.map(toDocument);
}

export async function countDocuments(db: Db, f: { platformId: string; holder?: string }): Promise<number> {
  let q = db.selectFrom("kyc_documents").select((eb) => eb.fn.countAll<bigint | number | string>().as("n")).where("platform_id", "=", f.platformId);
  if (f.holder !== undefined) q = q.where("document_holder", "=", f.holder);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** Marks the holders' unused documents as used by a final decision. */
export async function markDocumentsUsed(db: Db, platformId: string, holders: string[], reviewId: string): Promise<void> {
  if (!holders.length) return;
  await db
    .updateTable("kyc_documents")
    .set({ used_by_review_id: reviewId })
    .where("platform_id", "=", platformId)
    .where("document_holder", "in", holders)
    .where("used_by_review_id", "is", null)
    .execute();
}
