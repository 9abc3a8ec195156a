import { loadConfig, z } from "@corridor/kit";
import { DOCUMENT_CONTENT_TYPES, type DocumentContentType } from "./domain/documents.js";

const schema = z.object({
  /** Invitation links are this prefix followed by the code; point it at the page that opens them. */
  CORRIDOR_INVITATION_BASE_URL: z.string().url().default("https://uma.me/i/"),
  /** How long a hosted verification link (POST /customers/{id}/kyc-link) stays open, in seconds (default 24 h). */
  CORRIDOR_KYC_LINK_TTL_SECONDS: z.coerce.number().int().min(60).max(30 * 86_400).default(86_400),
  /** Largest KYC document accepted (POST/PUT /documents), in bytes (default 10 MiB, Grid's limit). */
  CORRIDOR_KYC_DOCUMENT_MAX_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(10 * 1024 * 1024),
  /** KYC document content types accepted, comma-separated; a subset of application/pdf, image/jpeg, image/png (their bytes are checked too). */
  CORRIDOR_KYC_DOCUMENT_CONTENT_TYPES: z
    .string()
    .default(DOCUMENT_CONTENT_TYPES.join(","))
    .transform((s) => s.split(",").map((t) => t.trim().toLowerCase()).filter(Boolean))
    .pipe(z.array(z.enum(DOCUMENT_CONTENT_TYPES)).min(1))
    .transform((list) => list as DocumentContentType[]),
  /** Largest CSV file of a bulk customer import (POST /customers/bulk/csv), in bytes (default 5 MiB). */
  CORRIDOR_BULK_IMPORT_MAX_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(5 * 1024 * 1024),
  /** Most rows (customers) in one bulk customer import file, the header not counted. */
  CORRIDOR_BULK_IMPORT_MAX_ROWS: z.coerce.number().int().min(1).max(100_000).default(10_000),
  /** How often the bulk import worker looks for unfinished jobs, in ms (an upload wakes it at once). */
  CORRIDOR_BULK_IMPORT_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
});

export type CustomersKycConfig = z.infer<typeof schema>;

export function loadCustomersKycConfig(source: NodeJS.ProcessEnv): CustomersKycConfig {
  return loadConfig(schema, source);
}
