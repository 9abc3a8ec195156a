import { createHash } from "node:crypto";
import { errors, newId, type Clock } from "@corridor/kit";
import { changeTime, liveCustomer } from "./customers.js";
import { pageOf, pageStart } from "./paging.js";
import type { Store, Transact } from "./ports.js";
import { DOCUMENT_TYPES, type DocumentType, type KycDocument, type Page, type PageRequest } from "./types.js";
import { Problems, checkCountry, checkText } from "./validation.js";

/** The content types a document may have, and how each one's bytes begin. */
export const DOCUMENT_CONTENT_TYPES = ["application/pdf", "image/jpeg", "image/png"] as const;
export type DocumentContentType = (typeof DOCUMENT_CONTENT_TYPES)[number];
const MAGIC: Record<DocumentContentType, number[]> = {
  "application/pdf": [0x25, 0x50, 0x44, 0x46, 0x2d], // %PDF-
  "image/jpeg": [0xff, 0xd8, 0xff],
  "image/png": [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
};

/** The content type the bytes really are (by their magic number), or undefined when none of the allowed ones. */
export function sniffContentType(bytes: Uint8Array): DocumentContentType | undefined {
  return DOCUMENT_CONTENT_TYPES.find((t) => MAGIC[t].every((b, i) => bytes[i] === b));
}

export interface DocumentInput {
  documentHolder?: string;
  documentType: string;
  side: string;
  country: string;
  documentNumber: string;
  issuingAuthority: string;
  fileName: string;
  declaredContentType: string;
  content: Uint8Array;
}

export interface DocumentsDeps {
  transact: Transact;
  clock: Clock;
  /** Largest file accepted, in bytes. */
  maxBytes: number;
  /** Content types accepted (a subset of DOCUMENT_CONTENT_TYPES). */
  contentTypes: readonly DocumentContentType[];
}

/** 409 DOCUMENT_IN_USE: a final review decision used the document. */
const inUse = (d: KycDocument) =>
  errors.conflict("DOCUMENT_IN_USE", `Document ${d.id} was used by a KYC decision (review ${d.usedByReviewId}); it can no longer be replaced or deleted`, {
    documentId: d.id,
    reviewId: d.usedByReviewId ?? "",
  });

/**
 * KYC documents (Grid's /documents): files of a customer or a beneficial owner, kept with their
 * SHA-256 and size in this service's own table (bytea). The declared content type must be allowed
 * AND match the file's magic bytes; the size is bounded. Once a final review decision used a
 * document, it can no longer be replaced or deleted (409 DOCUMENT_IN_USE).
 */
export function createDocuments({ transact, clock, maxBytes, contentTypes }: DocumentsDeps) {
  function checkFile(p: Problems, input: DocumentInput): DocumentContentType | undefined {
    checkText(p, "documentType", input.documentType, { required: true });
    if (input.documentType && !(DOCUMENT_TYPES as readonly string[]).includes(input.documentType)) p.add("documentType", `must be one of ${DOCUMENT_TYPES.join(", ")}`);
    if (input.side !== "" && input.side !== "FRONT" && input.side !== "BACK") p.add("side", "must be FRONT or BACK");
    if (!input.country) p.add("country", "is required");
    else checkCountry(p, "country", input.country);
    checkText(p, "documentNumber", input.documentNumber, { max: 64 });
    checkText(p, "issuingAuthority", input.issuingAuthority, { max: 200 });
    if (input.fileName.length > 255) p.add("file", "the file name must be at most 255 characters");
    const declared = input.declaredContentType.split(";")[0]!.trim().toLowerCase();
    if (!(contentTypes as readonly string[]).includes(declared)) {
      p.add("file", `content type ${declared || "(none)"} is not accepted; send one of ${contentTypes.join(", ")}`);
      return undefined;
    }
    if (input.content.length === 0) p.add("file", "is empty");
    else if (input.content.length > maxBytes) p.add("file", `is ${input.content.length} bytes; at most ${maxBytes} are accepted`);
    else if (sniffContentType(input.content) !== declared) p.add("file", `the file's bytes are not ${declared} (its content does not begin as a ${declared} file does)`);
    return declared as DocumentContentType;
  }

  const fields = (input: DocumentInput, contentType: string) => ({
    documentType: input.documentType as DocumentType,
    side: input.side as KycDocument["side"],
    country: input.country,
    documentNumber: input.documentNumber.trim(),
    issuingAuthority: input.issuingAuthority.trim(),
    fileName: input.fileName || "document",
    contentType,
    sizeBytes: input.content.length,
    sha256: createHash("sha256").update(input.content).digest("hex"),
  });

  /** The holder's customer: a live customer, or a beneficial owner's business. */
  async function holderCustomer(store: Store, platformId: string, holder: string): Promise<string> {
    if (holder.startsWith("BeneficialOwner:")) {
      const owner = await store.owners.get(platformId, holder);
      if (!owner) throw errors.notFound("BeneficialOwner", holder);
      await liveCustomer(store, platformId, owner.customerId);
      return owner.customerId;
    }
    if (holder.startsWith("Customer:")) return (await liveCustomer(store, platformId, holder)).id;
    throw errors.invalidInput([{ field: "documentHolder", reason: "must be a Customer or BeneficialOwner id" }]);
  }

  async function found(store: Store, platformId: string, id: string, forUpdate = false): Promise<KycDocument> {
    const d = await store.documents.get(platformId, id, { forUpdate });
    if (!d) throw errors.notFound("Document", id);
    return d;
  }

  return {
    upload(platformId: string, input: DocumentInput): Promise<KycDocument> {
      const p = new Problems();
      if (!input.documentHolder) p.add("documentHolder", "is required");
      const contentType = checkFile(p, input);
      if (!p.empty) throw errors.invalidInput(p.list);
      return transact(async (store) => {
        const customerId = await holderCustomer(store, platformId, input.documentHolder!);
        const now = clock.now();
        const d: KycDocument = { id: newId("Document"), platformId, customerId, documentHolder: input.documentHolder!, ...fields(input, contentType!), usedByReviewId: null, createdAt: now, updatedAt: now };
        await store.documents.insert(d, input.content);
        return d;
      });
    },

    get(platformId: string, id: string): Promise<KycDocument> {
      return transact((store) => found(store, platformId, id));
    },

    async list(platformId: string, holder: string | undefined, page: PageRequest): Promise<Page<KycDocument>> {
      const { limit, after } = pageStart(page);
      return transact(async (store) => {
        const rows = await store.documents.list({ platformId, holder }, { limit: limit + 1, after });
        return pageOf(rows, limit, (d) => d.id, await store.documents.count({ platformId, holder }));
      });
    },

    replace(platformId: string, id: string, input: DocumentInput): Promise<KycDocument> {
      const p = new Problems();
      const contentType = checkFile(p, input);
      if (!p.empty) throw errors.invalidInput(p.list);
      return transact(async (store) => {
        const current = await found(store, platformId, id, true);
        if (current.usedByReviewId) throw inUse(current);
        const next: KycDocument = { ...current, ...fields(input, contentType!), updatedAt: changeTime(clock, current.updatedAt) };
        await store.documents.replace(next, input.content);
        return next;
      });
    },

    delete(platformId: string, id: string): Promise<KycDocument> {
      return transact(async (store) => {
        const current = await found(store, platformId, id, true);
        if (current.usedByReviewId) throw inUse(current);
        await store.documents.delete(id);
        return current;
      });
    },
  };
}

export type Documents = ReturnType<typeof createDocuments>;
