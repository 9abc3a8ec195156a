import { createHash } from "node:crypto";
import multipart from "@fastify/multipart";
import { multipartRefusal } from "../multipart.js";
import { errors } from "@corridor/kit";
import { isoFromTimestamp, numberFromInt64 } from "@corridor/kit/rest-json";
import { create } from "@bufbuild/protobuf";
import { DocumentInputSchema, type Document } from "@corridor/proto/corridor/customers_kyc/v1/document_pb.js";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { principalOf } from "../auth.js";
import { claimAfterBody } from "../idempotency.js";
import { HttpError } from "../http-status.js";
import { ListEnvelope, errorResponses, pagingQuery } from "../schemas/common.js";
import { listEnvelope, pageOf } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

/**
 * The largest file part the gateway reads into memory before customers-kyc judges it against its
 * own limit (CORRIDOR_KYC_DOCUMENT_MAX_BYTES, at most 64 MiB by its schema): a ceiling, not the limit.
 */
export const DOCUMENT_UPLOAD_CEILING_BYTES = 64 * 1024 * 1024;

export const DOCUMENT_TYPES = [
  "PASSPORT", "DRIVERS_LICENSE", "NATIONAL_ID", "PROOF_OF_ADDRESS", "BANK_STATEMENT", "TAX_RETURN", "CERTIFICATE_OF_INCORPORATION",
  "ARTICLES_OF_INCORPORATION", "ARTICLES_OF_ASSOCIATION", "STATE_REGISTRY_EXCERPT", "GOOD_STANDING_CERTIFICATE", "INFORMATION_STATEMENT",
  "INCUMBENCY_CERTIFICATE", "BUSINESS_LICENSE", "SHAREHOLDER_REGISTER", "POWER_OF_ATTORNEY", "UTILITY_BILL", "ELECTRICITY_BILL",
  "RENT_OR_LEASE_AGREEMENT", "DIRECTOR_REGISTRY", "TRUST_AGREEMENT", "STATE_COMPANY_REGISTRY", "PARTNERSHIP_CONTROL_AGREEMENT",
  "PARTNERSHIP_AGREEMENT", "SELFIE", "OTHER",
];

const DocumentSchema = Type.Object(
  {
    id: Type.String({ description: "Document:<uuidv7>." }),
    documentHolder: Type.String({ description: "Customer:<uuidv7> or BeneficialOwner:<uuidv7>: whose document it is." }),
    documentType: Type.Enum(DOCUMENT_TYPES, { description: "Grid's DocumentType." }),
    side: Type.Optional(Type.Enum(["FRONT", "BACK"], { description: "Which side of a two-sided document." })),
    country: Type.String({ description: "Issuing country (ISO 3166-1 alpha-2)." }),
    documentNumber: Type.Optional(Type.String({ description: "The document's number." })),
    issuingAuthority: Type.Optional(Type.String({ description: "Who issued it." })),
    fileName: Type.String({ description: "The uploaded file's name." }),
    contentType: Type.Enum(["application/pdf", "image/jpeg", "image/png"], { description: "The file's type, checked against its bytes." }),
    sizeBytes: Type.Integer({ description: "The file's size in bytes." }),
    sha256: Type.String({ description: "The file's SHA-256, lower-case hex." }),
    createdAt: Type.String({ format: "date-time", description: "When it was uploaded." }),
    updatedAt: Type.String({ format: "date-time", description: "When it was last replaced." }),
  },
  { description: "A verification document of a customer or beneficial owner (its bytes are read only by the operator's review)." },
);

const DocumentUpload = Type.Object(
  {
    file: Type.String({ format: "binary", description: "The file: application/pdf, image/jpeg or image/png (the part's Content-Type, checked against the file's bytes); at most CORRIDOR_KYC_DOCUMENT_MAX_BYTES (10 MiB by default)." }),
    documentHolder: Type.String({ description: "Customer:<uuidv7> or BeneficialOwner:<uuidv7> (upload only; a replacement keeps the holder)." }),
    documentType: Type.Enum(DOCUMENT_TYPES, { description: "Grid's DocumentType." }),
    side: Type.Optional(Type.Enum(["FRONT", "BACK"], { description: "Which side of a two-sided document." })),
    country: Type.String({ description: "Issuing country (ISO 3166-1 alpha-2)." }),
    documentNumber: Type.Optional(Type.String({ description: "The document's number." })),
    issuingAuthority: Type.Optional(Type.String({ description: "Who issued it." })),
  },
  { description: "multipart/form-data: the file in `file`, metadata in the other fields." },
);

const DocumentIdParams = Type.Object({ documentId: Type.String({ minLength: 1, maxLength: 128, description: "Document:<uuidv7>." }) }, { description: "Path parameters naming a document." });
const ListDocumentsQuery = Type.Object(
  { ...pagingQuery, documentHolder: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only this holder's documents (Customer or BeneficialOwner id)." })) },
  { description: "Filter and paging of GET /documents." },
);

function documentToJson(d: Document | undefined) {
  if (!d) throw new Error("customers-kyc answered without a document");
  return {
    id: d.id,
    documentHolder: d.documentHolder,
    documentType: d.documentType,
    ...(d.side ? { side: d.side as "FRONT" | "BACK" } : {}),
    country: d.country,
    ...(d.documentNumber ? { documentNumber: d.documentNumber } : {}),
    ...(d.issuingAuthority ? { issuingAuthority: d.issuingAuthority } : {}),
    fileName: d.fileName,
    contentType: d.contentType as "application/pdf" | "image/jpeg" | "image/png",
    sizeBytes: numberFromInt64(d.sizeBytes),
    sha256: d.sha256,
    createdAt: isoFromTimestamp(d.createdAt),
    updatedAt: isoFromTimestamp(d.updatedAt),
  };
}

const TEXT_FIELDS = ["documentHolder", "documentType", "side", "country", "documentNumber", "issuingAuthority"] as const;
type TextField = (typeof TEXT_FIELDS)[number];

/** Reads the multipart body: one `file` part and the metadata fields. */
export async function readUpload(request: FastifyRequest) {
  if (!request.isMultipart()) throw new HttpError(415, "UNSUPPORTED_MEDIA_TYPE", "Send documents as multipart/form-data (the file in `file`, metadata in the other fields)", {});
  const fields: Partial<Record<TextField, string>> = {};
  let file: { content: Buffer; fileName: string; contentType: string } | undefined;
  const unknown: string[] = [];
  try {
    for await (const part of request.parts()) {
      if (part.type === "file") {
        if (part.fieldname !== "file" || file) {
          await part.toBuffer();
          unknown.push(part.fieldname);
          continue;
        }
        file = { content: await part.toBuffer(), fileName: part.filename ?? "", contentType: part.mimetype ?? "" };
      } else if ((TEXT_FIELDS as readonly string[]).includes(part.fieldname)) {
        fields[part.fieldname as TextField] = String(part.value ?? "");
      } else {
        unknown.push(part.fieldname);
      }
    }
  } catch (err) {
    multipartRefusal(err, { fileField: "file", ceilingBytes: DOCUMENT_UPLOAD_CEILING_BYTES, what: "a document upload" });
  }
  const problems = unknown.map((f) => ({ field: f, reason: "is not a field of a document upload" }));
  if (!file) problems.push({ field: "file", reason: "is required (a file part named file)" });
  if (problems.length) throw errors.invalidInput(problems);
  return create(DocumentInputSchema, {
    documentHolder: fields.documentHolder ?? "",
    documentType: fields.documentType ?? "",
    side: fields.side ?? "",
    country: fields.country ?? "",
    documentNumber: fields.documentNumber ?? "",
    issuingAuthority: fields.issuingAuthority ?? "",
    fileName: file!.fileName,
    declaredContentType: file!.contentType,
    content: file!.content,
  });
}

/** What an upload means for its Idempotency-Key: the fields, the file's name, type and SHA-256 (not the multipart encoding). */
function uploadMeaning(d: ReturnType<typeof create<typeof DocumentInputSchema>>) {
  return {
    documentHolder: d.documentHolder,
    documentType: d.documentType,
    side: d.side,
    country: d.country,
    documentNumber: d.documentNumber,
    issuingAuthority: d.issuingAuthority,
    fileName: d.fileName,
    contentType: d.declaredContentType,
    sha256: createHash("sha256").update(d.content).digest("hex"),
  };
}

const tags = ["Customers"];
/** Multipart bodies are read by the route, not validated as JSON: only params and query are checked here. */
const MULTIPART = { consumes: ["multipart/form-data"], body: DocumentUpload };

/** Grid's /documents: KYC documents of customers and beneficial owners (multipart uploads). */
/** @fastify/multipart's options for document uploads (the API and the hosted KYC page). */
export const MULTIPART_OPTIONS = {
  limits: { fileSize: DOCUMENT_UPLOAD_CEILING_BYTES, files: 1, fields: 10, fieldSize: 1024, parts: 12, headerPairs: 100 },
  throwFileSizeLimit: true,
};

export function documentRoutes(app: Api, { clients }: RouteDeps): void {
  app.register(async (scope) => {
    await scope.register(multipart, MULTIPART_OPTIONS);
    // The multipart body is read in the handler; the body schema only documents it (no validator).
    const api = scope as unknown as Api;

    api.post(
      "/documents",
      {
        config: { permission: "MANAGE" },
        validatorCompiler: () => () => true,
        schema: {
          summary: "Upload a document",
          description:
            "Uploads a verification document of a customer or beneficial owner as multipart/form-data (the file in `file`, metadata in the other fields). PDF, JPEG or PNG only: the part's Content-Type must be allowed AND match the file's bytes (a renamed text file is 400). At most CORRIDOR_KYC_DOCUMENT_MAX_BYTES (10 MiB by default). Stored with its SHA-256 in Corridor's own storage; the operator's KYC review shows it. Unknown holder → 404 USER_NOT_FOUND / BENEFICIAL_OWNER_NOT_FOUND. Needs MANAGE.",
          tags,
          ...MULTIPART,
          response: { 201: DocumentSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { platformId } = principalOf(request);
        const document = await readUpload(request);
        if (await claimAfterBody(request, reply, uploadMeaning(document))) return reply;
        const res = await clients.customersKyc.uploadDocument({ platformId, document });
        return reply.code(201).send(documentToJson(res.document));
      },
    );

    api.get(
      "/documents",
      {
        schema: {
          summary: "List documents",
          description: "Pages through the platform's documents, newest first; documentHolder narrows to one customer or owner. Needs VIEW.",
          tags,
          querystring: ListDocumentsQuery,
          response: { 200: ListEnvelope(DocumentSchema, "One page of documents, newest first."), ...errorResponses },
        },
      },
      async (request) => {
        const { platformId } = principalOf(request);
        const q = request.query as { limit?: number; cursor?: string; documentHolder?: string };
        const res = await clients.customersKyc.listDocuments({ platformId, page: pageOf(q), documentHolder: q.documentHolder ?? "" });
        return listEnvelope(res.documents.map(documentToJson), res.pageInfo);
      },
    );

    api.get(
      "/documents/:documentId",
      {
        schema: {
          summary: "Get a document",
          description: "The document's metadata (not its bytes). Another platform's document → 404 DOCUMENT_NOT_FOUND. Needs VIEW.",
          tags,
          params: DocumentIdParams,
          response: { 200: DocumentSchema, ...errorResponses },
        },
      },
      async (request) => {
        const { platformId } = principalOf(request);
        const { documentId } = request.params as { documentId: string };
        return documentToJson((await clients.customersKyc.getDocument({ platformId, documentId })).document);
      },
    );

    api.put(
      "/documents/:documentId",
      {
        config: { permission: "MANAGE" },
        validatorCompiler: () => () => true,
        schema: {
          summary: "Replace a document",
          description:
            "Replaces the document's file and metadata (multipart/form-data, as the upload; documentHolder is not taken: a document keeps its holder). Same type and size rules as the upload. Once a KYC decision (approval or rejection) used the document → 409 DOCUMENT_IN_USE; a request for more information does not lock it. Then POST /verifications (or the hosted KYC link) resubmits. Needs MANAGE.",
          tags,
          params: DocumentIdParams,
          ...MULTIPART,
          response: { 200: DocumentSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { platformId } = principalOf(request);
        const { documentId } = request.params as { documentId: string };
        if (!documentId || documentId.length > 128) throw errors.invalidInput([{ field: "params.documentId", reason: "must be a Document id" }]);
        const document = await readUpload(request);
        if (await claimAfterBody(request, reply, uploadMeaning(document))) return reply;
        const res = await clients.customersKyc.replaceDocument({ platformId, documentId, document });
        return documentToJson(res.document);
      },
    );

    api.delete(
      "/documents/:documentId",
      {
        config: { permission: "MANAGE" },
        schema: {
          summary: "Delete a document",
          description: "Deletes the document and its bytes (204, no body); cannot be undone. Once a KYC decision used it → 409 DOCUMENT_IN_USE. Needs MANAGE.",
          tags,
          params: DocumentIdParams,
          response: { 204: { type: "null", description: "Deleted." }, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { platformId } = principalOf(request);
        const { documentId } = request.params as { documentId: string };
        await clients.customersKyc.deleteDocument({ platformId, documentId });
        return reply.code(204).send(null);
      },
    );
  });
}
