import { AppError, errors } from "@corridor/kit";

/** How one multipart route names what it reads, for the refusals below. */
export interface MultipartShape {
  /** The error field naming the file part (`file`, `body.file`). */
  fileField: string;
  /** The route's ceiling on the file part, in bytes. */
  ceilingBytes: number;
  /** What the body is, for the too-many-parts refusal ("a document upload"). */
  what: string;
}

/**
 * Maps anything reading a multipart body failed on onto 400 INVALID_INPUT naming the part:
 * @fastify/multipart's limit errors by code, and everything else busboy throws ("Part terminated
 * early due to unexpected end of multipart data", a malformed part header, ...) as an unreadable
 * body: the body's fault, never a 500. Errors the route raised itself pass through.
 */
export function multipartRefusal(err: unknown, shape: MultipartShape): never {
  if (err instanceof AppError) throw err;
  const code = (err as { code?: string })?.code ?? "";
  if (code === "FST_REQ_FILE_TOO_LARGE") throw errors.invalidInput([{ field: shape.fileField, reason: `is larger than ${shape.ceilingBytes} bytes` }]);
  if (code === "FST_FILES_LIMIT") throw errors.invalidInput([{ field: shape.fileField, reason: "send exactly one file" }]);
  if (code === "FST_FIELDS_LIMIT" || code === "FST_PARTS_LIMIT") throw errors.invalidInput([{ field: "body", reason: `has more parts than ${shape.what} has` }]);
  throw errors.invalidInput([{ field: "body", reason: "is not a valid multipart/form-data body" }]);
}
