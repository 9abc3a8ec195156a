// The ODFI's answer to a file we uploaded (docs/connectors.md, "Acknowledgements"). Banks answer in
// NACHA layout, in their outbox, naming our file by its file header's identity (the fields an ACH
// operator matches acknowledgements on: immediate destination and origin, creation date and time,
// file ID modifier):
//
//   acknowledgement   a file with that header and no entries (a file header, at most batch headers
//                     and controls, a file control): the bank took the file. Control totals that are
//                     not zero must be our file's (entry/addenda count, entry hash, debit, credit
//                     totals): otherwise the bank holds something else than we sent, and the
//                     operator is told (logged at error, the file left as it was).
//   return of a file  our file sent back with entries (the whole file, or the batches the bank
//                     refused): each entry it echoes, found by its trace number in that file, is
//                     REJECTED (FILE_REJECTED), exactly once; the file becomes REJECTED, or
//                     PARTIALLY_REJECTED when some of its entries were not sent back.
import type { NoticePublisher, OutcomePublisher } from "@corridor/connector";
import type { Clock, Logger } from "@corridor/kit";
import { sql, type Transaction } from "kysely";
import type { AchConfig } from "./config.js";
import { completionTime } from "./engine.js";
import { parseNachaFile, type FileHeader, type ParsedNachaFile } from "./nacha/reader.js";

/** The outcome reason of every entry of a file the bank sent back. */
export const FILE_REJECTED = "FILE_REJECTED";

interface AckDeps {
  clock: Clock;
  log: Logger;
  config: AchConfig;
  outcomes: OutcomePublisher;
  notices?: NoticePublisher;
}

/** The identity fields of a file header line of ours (as written: see nacha/writer.ts). */
function headerOf(content: string): { destination: string; origin: string; stamp: string } {
  const first = content.slice(0, 94);
  return { destination: first.slice(3, 13).trim(), origin: first.slice(13, 23).trim(), stamp: first.slice(23, 34) };
}

const ANSWERABLE = ["UPLOADING", "UPLOADED", "HELD", "CANCELLED", "ACCEPTED", "REJECTED", "PARTIALLY_REJECTED"];

/**
 * The file of ours a bank file answers, if any: same creation date, time and modifier, and the same
 * pair of routing identities (a bank echoes our header or addresses its answer back to us, so
 * either order). Only files the bank may have (an upload begun).
 */
export async function answeredFile(trx: Transaction<any>, h: FileHeader): Promise<{ file_name: string; status: string; content: string } | undefined> {
  const stamp = h.creationDate + h.creationTime + h.fileIdModifier;
  if (!/^[0-9]{10}[A-Z0-9]$/.test(stamp)) return undefined;
  const candidates = await trx
    .selectFrom("ach_files")
    .select(["file_name", "status", "content"])
    .where(sql<string>`substring(content from 24 for 11)`, "=", stamp)
    .where("status", "in", ANSWERABLE)
    .forUpdate()
    .execute();
  const theirs = [h.immediateDestination, h.immediateOrigin].sort().join("|");
  return candidates.find((c: { content: string }) => {
    const ours = headerOf(c.content);
    return [ours.destination, ours.origin].sort().join("|") === theirs;
  });
}

/** What an acknowledgement carries: the header naming our file and the totals the bank counted. */
export interface Acknowledgement {
  header: FileHeader;
  control: { entryAddendaCount: number; entryHash: string; totalDebit: bigint; totalCredit: bigint };
}

/**
 * Reads a file as an acknowledgement: records of 94 printable ASCII characters (trailing blanks may
 * be stripped; LF or CRLF), a file header, batch headers and controls only (no entry, no addenda),
 * a file control, then 9-fillers. Anything else is not an acknowledgement (undefined) and goes to
 * the NACHA reader, which takes or refuses it. The file control's totals are the bank's count of
 * our file, so they are not checked against the (absent) entries here but against our file.
 */
export function acknowledgementOf(content: Buffer): Acknowledgement | undefined {
  if (content.length > 100_000 || content[0] !== 0x31) return undefined;
  const text = content.toString("latin1");
  if (/[^\x20-\x7e\r\n]/.test(text)) return undefined;
  const lines = text.split(/\r?\n/).filter((l) => l !== "").map((l) => l.padEnd(94, " "));
  if (lines.some((l) => l.length !== 94)) return undefined;
  const records = lines.filter((l) => !/^9{94}$/.test(l));
  const last = records[records.length - 1];
  if (records.length < 2 || !last || last[0] !== "9") return undefined;
  if (!records.slice(1, -1).every((l) => l[0] === "5" || l[0] === "8")) return undefined;
  const h = records[0]!;
  const num = (v: string) => (/^[0-9]+$/.test(v) ? v : undefined);
  const count = num(last.slice(13, 21));
  const hash = num(last.slice(21, 31));
  const debit = num(last.slice(31, 43));
  const credit = num(last.slice(43, 55));
  if (count === undefined || hash === undefined || debit === undefined || credit === undefined) return undefined;
  return {
    header: {
      immediateDestination: h.slice(3, 13).trim(),
      immediateOrigin: h.slice(13, 23).trim(),
      creationDate: h.slice(23, 29),
      creationTime: h.slice(29, 33),
      fileIdModifier: h.slice(33, 34),
      immediateDestinationName: h.slice(40, 63).trim(),
      immediateOriginName: h.slice(63, 86).trim(),
      referenceCode: h.slice(86, 94).trim(),
    },
    control: { entryAddendaCount: Number(count), entryHash: hash, totalDebit: BigInt(debit), totalCredit: BigInt(credit) },
  };
}

/**
 * Applies an acknowledgement of one of our files, in the transaction that records the bank's file.
 * Returns what it did, for the bank file's detail.
 */
export async function applyAcknowledgement(d: AckDeps, trx: Transaction<any>, bankFile: string, ack: Acknowledgement, ours: { file_name: string; status: string; content: string }): Promise<Record<string, unknown>> {
  const now = d.clock.now();
  const c = ack.control;
  const zero = c.entryAddendaCount === 0 && c.totalDebit === 0n && c.totalCredit === 0n && /^0*$/.test(c.entryHash);
  if (!zero) {
    const mine = (await parseNachaFile(ours.content)).control;
    const disagree = (["entryAddendaCount", "entryHash", "totalDebit", "totalCredit"] as const).filter((k) => (k === "entryHash" ? BigInt(mine[k]) !== BigInt(c[k]) : String(mine[k]) !== String(c[k])));
    if (disagree.length > 0) {
      d.log.error({ file: ours.file_name, bank_file: bankFile, fields: disagree }, "ACH acknowledgement: the bank acknowledges other totals than the file we sent; the file is left as it was for the operator");
      return { acknowledgement: "TOTALS_DISAGREE", file: ours.file_name, fields: disagree };
    }
  }
  if (ours.status === "ACCEPTED" || ours.status === "REJECTED" || ours.status === "PARTIALLY_REJECTED") return { acknowledgement: "REPEATED", file: ours.file_name };
  if (ours.status === "CANCELLED") {
    // The operator cancelled it (its entries were failed back to the ledger) and the bank says it
    // has it: nothing is reversed automatically; the operator must have the bank delete the file.
    d.log.error({ file: ours.file_name, bank_file: bankFile }, "ACH acknowledgement of a file the operator cancelled: ask the bank to delete it; nothing changed here");
    return { acknowledgement: "CANCELLED_FILE_ACKNOWLEDGED", file: ours.file_name };
  }
  await trx.updateTable("ach_files").set({ status: "ACCEPTED", acknowledged_at: now, acknowledgement: bankFile, ...(ours.status !== "UPLOADED" ? { uploaded_at: now } : {}) }).where("file_name", "=", ours.file_name).execute();
  // A file held (or left mid-upload) because nobody knew whether the bank had it: the bank says it
  // has it, so its entries are on their way now.
  let released = 0;
  if (ours.status === "HELD" || ours.status === "UPLOADING") {
    const entries = await trx.selectFrom("ach_entries").selectAll().where("file_name", "=", ours.file_name).where("status", "=", "FILED").execute();
    for (const e of entries) {
      const completesAt = completionTime(d.config, e.direction, e.effective_date);
      await trx.updateTable("ach_entries").set({ status: "SUBMITTED", completes_at: completesAt }).where("transaction_id", "=", e.transaction_id).execute();
      await d.outcomes.report(trx, { platformId: e.platform_id, transactionId: e.transaction_id, status: "PROCESSING", at: now, expectedSettlementAt: completesAt });
      released++;
    }
  }
  d.log.info({ file: ours.file_name, bank_file: bankFile, released }, "ACH file acknowledged by the bank");
  return { acknowledgement: "ACCEPTED", file: ours.file_name, released };
}

/**
 * Applies our file sent back by the bank (refused), in the transaction that records the bank's file:
 * the entries it echoes are REJECTED, each once. Returns what it did, for the bank file's detail.
 */
export async function applyFileSentBack(d: AckDeps, trx: Transaction<any>, bankFile: string, parsed: ParsedNachaFile, ours: { file_name: string; status: string; content: string }): Promise<Record<string, unknown>> {
  const now = d.clock.now();
  const echoed = parsed.batches.flatMap((b) => b.entries);
  let rejected = 0;
  let unknown = 0;
  for (const e of echoed) {
    const entry = await trx.selectFrom("ach_entries").selectAll().where("file_name", "=", ours.file_name).where("trace_number", "=", e.traceNumber).forUpdate().executeTakeFirst();
    await trx
      .insertInto("ach_bank_items")
      .values({
        bank_file: bankFile,
        line: e.line,
        kind: "REJECTED_ENTRY",
        trace_number: e.traceNumber,
        original_trace_number: e.traceNumber,
        code: FILE_REJECTED,
        amount: e.amount,
        transaction_id: entry?.transaction_id ?? null,
        detail: JSON.stringify({ file: ours.file_name, referenceCode: parsed.header.referenceCode }),
        received_at: now,
        suspense_reason: entry ? null : "NOT_IN_FILE",
      })
      .execute();
    if (!entry) {
      unknown++;
      continue;
    }
    if (entry.status !== "FILED" && entry.status !== "SUBMITTED" && entry.status !== "COMPLETED") continue; // failed or returned already: once
    const status = entry.status === "COMPLETED" ? "RETURNED" : "REJECTED";
    await trx.updateTable("ach_entries").set({ status: status === "RETURNED" ? "RETURNED" : "FAILED", return_code: FILE_REJECTED }).where("transaction_id", "=", entry.transaction_id).execute();
    await d.outcomes.report(trx, { platformId: entry.platform_id, transactionId: entry.transaction_id, status, reason: FILE_REJECTED, at: now });
    rejected++;
  }
  const left = await trx.selectFrom("ach_entries").select((eb) => eb.fn.countAll<string>().as("n")).where("file_name", "=", ours.file_name).where("status", "not in", ["FAILED", "RETURNED"]).executeTakeFirstOrThrow();
  const fileStatus = Number(left.n) === 0 ? "REJECTED" : "PARTIALLY_REJECTED";
  await trx.updateTable("ach_files").set({ status: fileStatus, acknowledged_at: now, acknowledgement: bankFile }).where("file_name", "=", ours.file_name).execute();
  d.log.warn({ file: ours.file_name, bank_file: bankFile, rejected, unknown, status: fileStatus, reference_code: parsed.header.referenceCode }, "ACH file sent back by the bank: its entries are rejected");
  return { acknowledgement: fileStatus, file: ours.file_name, rejected, unknown };
}
