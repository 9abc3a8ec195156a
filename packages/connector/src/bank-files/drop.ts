// The bank's file drop as a file-based connector uses it (ACH's NACHA files, SEPA's ISO 20022
// files): an inbox Corridor uploads payment files to, an outbox the bank leaves its files in
// (acknowledgements, status reports, returns, notifications), and an archive for the bank's files
// already read. SFTP in production (sftp.ts); a local directory for a bank that mounts its drop
// (directory.ts). Both keep the same guarantees:
//
// - An upload lands at most once per file name and never half: it is written under a temporary
//   name (".<name>.part") and renamed into place, a rename that refuses an existing target. Before
//   writing, the final name is looked up: the same bytes already there mean an earlier attempt got
//   as far as the rename (a crash before it was recorded) and the upload is reported
//   "already-present", never written again; other bytes under that name are a conflict
//   (`BankFileDropError` kind "conflict") and never overwritten.
// - The bank's files are listed oldest first, without dot-files (files the bank is still writing).
// - Archiving a file that is already archived is not an error (a retried pass).

export interface BankFile {
  readonly name: string;
  readonly size: number;
  readonly modifiedAt: Date;
}

export type UploadResult = "uploaded" | "already-present";

export interface BankFileDrop {
  /** Uploads `content` to the bank's inbox as `name`, at most once (see above). */
  upload(name: string, content: Buffer): Promise<UploadResult>;
  /** Files in the bank's inbox (to see what the bank has not collected yet). */
  listInbox(): Promise<BankFile[]>;
  /** The bank's files waiting in its outbox, oldest first. */
  listOutbox(): Promise<BankFile[]>;
  /** A file of the bank's outbox. */
  download(name: string): Promise<Buffer>;
  /** Moves a processed file from the outbox to the archive; safe to repeat. */
  archive(name: string): Promise<void>;
}

/** A drop failure; its message names the operation and path, never a credential. */
export class BankFileDropError extends Error {
  constructor(
    readonly operation: string,
    message: string,
    readonly kind: "connect" | "host-key" | "conflict" | "io" = "io",
    prefix = "bank file drop",
  ) {
    super(`${prefix} ${operation}: ${message}`);
    this.name = "BankFileDropError";
  }
}

/** Names a drop accepts: the bank sees them, so plain ASCII without path separators. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

export function checkFileName(op: string, name: string, prefix?: string): void {
  if (!SAFE_NAME.test(name) || name.endsWith(".part")) throw new BankFileDropError(op, `file name ${JSON.stringify(name)} is not a plain file name`, "io", prefix);
}

export const byAgeThenName = (a: BankFile, b: BankFile) => a.modifiedAt.getTime() - b.modifiedAt.getTime() || a.name.localeCompare(b.name);
