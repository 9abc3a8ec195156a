// A connector's operator service (corridor.connector.v1.ConnectorAdminService): what an operator
// decides about the files a connector keeps for the bank (HELD files: release or cancel) and what
// it refused to match (its suspense list). A connector offers it through ConnectorParts.admin; the
// connector's process serves it next to its health endpoint (standalone.ts), and the operator CLI
// calls it (`npm run admin -- connector ...`).
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, errors } from "@corridor/kit";
import {
  BankItemSchema,
  ConnectorAdminService,
  ConnectorFileSchema,
  type BankItem as BankItemPb,
  type ConnectorFile as ConnectorFilePb,
} from "@corridor/proto/corridor/connector/v1/connector_admin_service_pb.js";

/** One file a connector built for the bank. */
export interface ConnectorFile {
  fileName: string;
  status: string;
  detail: string;
  windowKey: string;
  entryCount: number;
  totalDebit: bigint;
  totalCredit: bigint;
  builtAt: Date;
  uploadedAt?: Date;
}

/** One item of a bank's file the connector keeps (a return, a NOC, an entry received). */
export interface BankItem {
  bankFile: string;
  line: number;
  kind: string;
  code: string;
  traceNumber: string;
  originalTraceNumber: string;
  amount: bigint;
  transactionId: string;
  /** Why it was not matched; "" when it was. */
  suspenseReason: string;
  detail: unknown;
  receivedAt: Date;
}

/** What a connector offers its operator; a method it leaves out answers UNIMPLEMENTED. */
export interface ConnectorAdmin {
  listFiles?(q: { status?: string; limit: number }): Promise<ConnectorFile[]>;
  /** A HELD file goes out on the next pass; CONNECTOR_FILE_NOT_HELD / CONNECTOR_FILE_NOT_FOUND otherwise. */
  releaseFile?(fileName: string, note: string): Promise<ConnectorFile>;
  /** A HELD file is never sent: its entries are FAILED back to the ledger, once. */
  cancelFile?(fileName: string, note: string): Promise<{ file: ConnectorFile; failedEntries: number }>;
  listBankItems?(q: { suspenseOnly: boolean; kind?: string; limit: number }): Promise<BankItem[]>;
}

/** Errors the admin service answers (gRPC FAILED_PRECONDITION / NOT_FOUND; docs/connectors.md). */
export const connectorAdminErrors = {
  fileNotFound: (fileName: string) => new AppError("NOT_FOUND", "CONNECTOR_FILE_NOT_FOUND", `No file ${fileName} was built by this connector`, { fileName }),
  fileNotHeld: (fileName: string, status: string) =>
    errors.conflict("CONNECTOR_FILE_NOT_HELD", `The file ${fileName} is ${status}; only a HELD file can be released or cancelled`, { fileName, status }),
};

const MAX_LIMIT = 500;

function limitOf(n: number): number {
  if (n === 0) return 100;
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIMIT) throw errors.invalidInput([{ field: "limit", reason: `must be an integer from 1 to ${MAX_LIMIT}` }]);
  return n;
}

function unimplemented(what: string): AppError {
  return new AppError("NOT_IMPLEMENTED", "NOT_IMPLEMENTED", `This connector keeps no ${what}`);
}

const fileName = (v: string): string => {
  const name = v.trim();
  if (name === "" || name.length > 200 || /[/\\]/.test(name)) throw errors.invalidInput([{ field: "fileName", reason: "must name a file (no folder)" }]);
  return name;
};

/** The operator's note: at most 2000 characters; a cancel must say why. */
const noteOf = (v: string, required: boolean): string => {
  const note = v.trim();
  if ((required && note === "") || note.length > 2000) throw errors.invalidInput([{ field: "note", reason: required ? "is required: say why the file is never sent (at most 2000 characters)" : "must be at most 2000 characters" }]);
  return note;
};

export function fileToPb(f: ConnectorFile): ConnectorFilePb {
  return create(ConnectorFileSchema, {
    fileName: f.fileName,
    status: f.status,
    detail: f.detail,
    windowKey: f.windowKey,
    entryCount: f.entryCount,
    totalDebit: f.totalDebit,
    totalCredit: f.totalCredit,
    builtAt: timestampFromDate(f.builtAt),
    ...(f.uploadedAt ? { uploadedAt: timestampFromDate(f.uploadedAt) } : {}),
  });
}

function itemToPb(i: BankItem): BankItemPb {
  return create(BankItemSchema, {
    bankFile: i.bankFile,
    line: i.line,
    kind: i.kind,
    code: i.code,
    traceNumber: i.traceNumber,
    originalTraceNumber: i.originalTraceNumber,
    amount: i.amount,
    transactionId: i.transactionId,
    suspenseReason: i.suspenseReason,
    detailJson: JSON.stringify(i.detail ?? {}),
    receivedAt: timestampFromDate(i.receivedAt),
  });
}

/** The Connect handler of ConnectorAdminService over a connector's admin. */
export function createConnectorAdminHandler(name: string, admin: ConnectorAdmin): ServiceImpl<typeof ConnectorAdminService> {
  const mine = (asked: string) => {
    const a = asked.trim();
    if (a !== "" && a !== name) throw errors.conflict("CONNECTOR_MISMATCH", `This is connector ${name}, not ${a}`, { connector: name, asked: a });
  };
  return {
    async listFiles(req) {
      mine(req.connector);
      const status = req.status.trim().toUpperCase();
      const limit = limitOf(req.limit);
      if (!admin.listFiles) throw unimplemented("files");
      const files = await admin.listFiles({ ...(status && status !== "ALL" ? { status } : {}), limit });
      return { files: files.map(fileToPb) };
    },
    async releaseFile(req) {
      mine(req.connector);
      const name = fileName(req.fileName);
      const note = noteOf(req.note, false);
      if (!admin.releaseFile) throw unimplemented("files");
      return { file: fileToPb(await admin.releaseFile(name, note)) };
    },
    async cancelFile(req) {
      mine(req.connector);
      const name = fileName(req.fileName);
      const note = noteOf(req.note, true);
      if (!admin.cancelFile) throw unimplemented("files");
      const { file, failedEntries } = await admin.cancelFile(name, note);
      return { file: fileToPb(file), failedEntries };
    },
    async listBankItems(req) {
      mine(req.connector);
      const status = req.status.trim().toUpperCase() || "SUSPENSE";
      if (status !== "SUSPENSE" && status !== "ALL") throw errors.invalidInput([{ field: "status", reason: "must be SUSPENSE or ALL" }]);
      const kind = req.kind.trim().toUpperCase();
      const limit = limitOf(req.limit);
      if (!admin.listBankItems) throw unimplemented("bank items");
      const items = await admin.listBankItems({ suspenseOnly: status === "SUSPENSE", ...(kind ? { kind } : {}), limit });
      return { items: items.map(itemToPb) };
    },
  };
}

export { ConnectorAdminService };

/** The connectors a host process runs, by name, for ConnectorAdminService served on the host's port (createConnectorAdminRouter). */
export interface ConnectorAdminDirectory {
  /** Serves these connectors' admin (a connector without one answers UNIMPLEMENTED for every method). */
  attach(connectors: ReadonlyArray<{ name: string; admin?: ConnectorAdmin }>): void;
  /** Stops serving them (before they stop): their requests answer CONNECTOR_NOT_FOUND. */
  detach(names: readonly string[]): void;
  /** The Connect handler: each request goes to the connector its `connector` field names. */
  handler: ServiceImpl<typeof ConnectorAdminService>;
}

/**
 * ConnectorAdminService for every connector running inside one host process (embedded mode: on its
 * internal port, next to the services), routed by the connector name every request carries. A name
 * that runs nowhere in this process answers NOT_FOUND CONNECTOR_NOT_FOUND naming it; an empty name
 * is taken only when exactly one connector runs here (the single-connector process's "any").
 */
export function createConnectorAdminRouter(): ConnectorAdminDirectory {
  const handlers = new Map<string, ServiceImpl<typeof ConnectorAdminService>>();
  const running = () => ([...handlers.keys()].sort().join(", ") || "none");
  const route = (asked: string): ServiceImpl<typeof ConnectorAdminService> => {
    const name = asked.trim();
    if (name === "") {
      if (handlers.size === 1) return [...handlers.values()][0]!;
      throw errors.invalidInput([{ field: "connector", reason: `must name a connector (running in this process: ${running()})` }]);
    }
    const h = handlers.get(name);
    if (!h) throw new AppError("NOT_FOUND", "CONNECTOR_NOT_FOUND", `Connector ${name} is not running in this process (running: ${running()})`, { connector: name, running: [...handlers.keys()].sort() });
    return h;
  };
  return {
    attach(connectors) {
      for (const c of connectors) handlers.set(c.name, createConnectorAdminHandler(c.name, c.admin ?? {}));
    },
    detach(names) {
      for (const n of names) handlers.delete(n);
    },
    handler: {
      listFiles: (req, ctx) => route(req.connector).listFiles!(req, ctx),
      releaseFile: (req, ctx) => route(req.connector).releaseFile!(req, ctx),
      cancelFile: (req, ctx) => route(req.connector).cancelFile!(req, ctx),
      listBankItems: (req, ctx) => route(req.connector).listBankItems!(req, ctx),
    },
  };
}
