// The ACH connector's work, as passes over its own tables (each a function of its dependencies):
//
//   accept      an instruction becomes a QUEUED entry of the cut-off window it arrived in (or a
//               REJECTED outcome when it cannot be sent by ACH);
//   build       once a window's cut-off has passed, its QUEUED entries become one balanced file,
//               stored with its exact bytes and its deterministic name in the same transaction that
//               marks them FILED with their trace numbers: an entry is in exactly one file;
//   upload      each built file is uploaded (at most once: see sftp/transport.ts) and only then
//               recorded UPLOADED, its entries SUBMITTED with PROCESSING outcomes;
//   complete    entries whose settlement (payouts) or availability (pulls) time has passed are
//               COMPLETED;
//   bank files  each file in the bank's outbox is read once: returns become FAILED (before
//               completion) or RETURNED (after it) outcomes, NOCs and entries received as RDFI are
//               kept and reported as rail notices (contract 1.2: ACCOUNT_CORRECTION for a NOC of
//               our entry, INCOMING_CREDIT for a live credit received), and the file is archived;
//               BAI2 end-of-day statements are reported to the ledger for reconciliation (contract v1.2).
import {
  addBusinessDays,
  localInstant,
  localParts,
  parseCutoffs,
  windowFor,
  type AccountCorrectionNotice,
  type CutoffSchedule,
  type IncomingCreditNotice,
  type NoticePublisher,
  type OutcomePublisher,
  type RailInstruction,
  type StatementPublisher,
} from "@corridor/connector";
import type { Clock, Logger } from "@corridor/kit";
import type { Kysely, Transaction } from "kysely";
import { Bai2FormatError, looksLikeBai2, readBai2 } from "./bai2/reader.js";
import { bai2Statements } from "./bai2/statements.js";
import type { AchConfig } from "./config.js";
import { RETURN_CODES, TRANSACTION_CODES } from "./nacha/codes.js";
import { isRoutingNumber, routingCheckDigit } from "./nacha/fields.js";
import { NachaFormatError, parseNachaFile, type BatchHeader, type EntryDetail } from "./nacha/reader.js";
import { writeNachaFile, type OutgoingBatch, type OutgoingEntry } from "./nacha/writer.js";
import type { BankFileDrop } from "@corridor/connector/bank-files";
import { acknowledgementOf, answeredFile, applyAcknowledgement, applyFileSentBack } from "./acknowledgements.js";

export interface EngineDeps {
  db: Kysely<any>;
  clock: Clock;
  log: Logger;
  config: AchConfig;
  outcomes: OutcomePublisher;
  notices: NoticePublisher;
  /** End-of-day statements (BAI2) to the ledger. */
  statements: StatementPublisher;
  /** The bank's file drop (SFTP in production: @corridor/connector/bank-files). */
  transport: BankFileDrop;
}

/** The ODFI's windows and banking days (the package's cut-off calendar: weekdays, Federal Reserve holidays, ACH_HOLIDAYS), and which cut-offs are same-day. */
export interface AchSchedule {
  readonly schedule: CutoffSchedule;
  /** Cut-offs (minutes after midnight) whose entries settle that day. */
  readonly sameDay: ReadonlySet<number>;
}

const minuteOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const schedules = new WeakMap<AchConfig, AchSchedule>();

export function scheduleOf(c: AchConfig): AchSchedule {
  let s = schedules.get(c);
  if (!s) {
    s = {
      schedule: parseCutoffs({
        times: c.ACH_CUTOFF_TIMES.join(","),
        zone: c.ACH_CUTOFF_TIMEZONE,
        weekdays: c.ACH_BUSINESS_DAYS,
        holidays: c.ACH_HOLIDAYS.join(","),
        ...(c.ACH_CALENDAR === "FEDERAL_RESERVE" ? { calendar: "FEDERAL_RESERVE" as const } : {}),
      }),
      sameDay: new Set(c.ACH_SAME_DAY_CUTOFFS.map(minuteOf)),
    };
    schedules.set(c, s);
  }
  return s;
}

/** The window an instruction arriving at `at` is filed in: the first cut-off strictly after it on a banking day, skipping the same-day ones for an entry over the same-day limit. */
export function achWindowFor(c: AchConfig, at: Date, sameDayAllowed = true): { key: string; cutoffAt: Date; day: string; effectiveDate: string; sameDay: boolean } {
  const { schedule, sameDay } = scheduleOf(c);
  const w = windowFor(schedule, at, sameDayAllowed ? {} : { skip: (m) => sameDay.has(m) });
  const same = sameDay.has(w.minute);
  // A same-day window's entries settle that banking day, any other window's the next banking day.
  return { key: w.id, cutoffAt: w.closesAt, day: w.businessDate, effectiveDate: same ? w.businessDate : addBusinessDays(schedule, w.businessDate, 1), sameDay: same };
}

/** What an external account's accountInfo must carry for ACH, or why it cannot be used. */
export function achAccountOf(info: Record<string, unknown>): { routingNumber: string; accountNumber: string; accountType: "CHECKING" | "SAVINGS"; secCode: "PPD" | "CCD"; name: string } | { refused: string } {
  const str = (v: unknown) => (typeof v === "string" ? v.trim() : "");
  const routingNumber = str(info.routingNumber);
  const accountNumber = str(info.accountNumber);
  if (!isRoutingNumber(routingNumber)) return { refused: "INVALID_ROUTING_NUMBER" };
  if (!/^[0-9A-Za-z-]{1,17}$/.test(accountNumber)) return { refused: "INVALID_ACCOUNT_NUMBER" };
  const t = str(info.bankAccountType || info.accountCategory).toUpperCase();
  if (t !== "" && t !== "CHECKING" && t !== "SAVINGS") return { refused: "UNSUPPORTED_ACCOUNT_TYPE" };
  const b = (info.beneficiary ?? {}) as Record<string, unknown>;
  const business = str(b.beneficiaryType).toUpperCase() === "BUSINESS";
  const name = str(b.fullName) || str(b.legalName) || str(b.businessName) || str(info.accountHolderName);
  // The receiver's name goes into a record of printable ASCII: anything else becomes a blank.
  return { routingNumber, accountNumber, accountType: t === "SAVINGS" ? "SAVINGS" : "CHECKING", secCode: business ? "CCD" : "PPD", name: name.replace(/[^\x20-\x7e]/g, " ").trim() || "RECEIVER" };
}

/** What a return entry repeats of the credit it returns (ach_entries.return_of). */
interface ReturnOf {
  reasonCode: string;
  originalTraceNumber: string;
  originalRdfi: string;
  companyName: string;
  companyIdentification: string;
}

type CreditDetail = { name?: string; identificationNumber?: string; secCode?: string; bankEntryId?: string; companyIdentification?: string; accountNumber?: string };
const parseDetail = (v: unknown): CreditDetail => (typeof v === "string" ? JSON.parse(v) : v) as CreditDetail;

/**
 * The credit a RETURN instruction sends back, among the entries the bank reported received
 * (ach_bank_items, kind INCOMING): by the trace number that ends the notice's bank entry id and the
 * original entry's identity — the whole bank entry id (effective date, company identification,
 * batch number, trace: what the notice was keyed on), for items read before it was kept, the
 * sender's company identification and the account credited — and its amount. The same entry read
 * in two of the bank's files is one entry; two different entries that fit are ambiguous and
 * refused (the credit stays in the ledger's suspense, RETURN_FAILED, with the reason).
 */
export async function originalCreditOf(trx: Transaction<any>, rc: NonNullable<RailInstruction["returnedCredit"]>, amount: bigint): Promise<{ item: any; trace: string } | { refused: "ORIGINAL_ENTRY_NOT_FOUND" | "ORIGINAL_ENTRY_AMBIGUOUS" | "ORIGINAL_AMOUNT_MISMATCH" }> {
  const trace = rc.bankEntryId.split("-").pop() ?? "";
  if (!/^[0-9]{15}$/.test(trace)) return { refused: "ORIGINAL_ENTRY_NOT_FOUND" };
  const items = await trx.selectFrom("ach_bank_items").selectAll().where("kind", "=", "INCOMING").where("trace_number", "=", trace).orderBy("received_at").orderBy("bank_file").orderBy("line").execute();
  const fits = items.filter((it) => {
    const x = parseDetail(it.detail);
    if (x.bankEntryId) return x.bankEntryId === rc.bankEntryId;
    return (x.companyIdentification === undefined || x.companyIdentification === rc.senderAccount) && (x.accountNumber === undefined || x.accountNumber === rc.creditedAccount);
  });
  if (fits.length === 0) return { refused: "ORIGINAL_ENTRY_NOT_FOUND" };
  // The same entry (one bank entry id) read from two of the bank's files is one entry.
  const distinct = new Set(fits.map((it) => parseDetail(it.detail).bankEntryId ?? `${it.bank_file}:${it.line}`));
  if (distinct.size > 1) return { refused: "ORIGINAL_ENTRY_AMBIGUOUS" };
  const item = fits[0]!;
  if (BigInt(item.amount) !== amount) return { refused: "ORIGINAL_AMOUNT_MISMATCH" };
  return { item, trace };
}

/**
 * A RETURN instruction (rail contract 1.3): the credit this connector reported (its bank entry id
 * ends with the entry's trace number; ach_bank_items keeps its SEC and transaction code) goes back
 * as a return entry in the next window's file: to the original ODFI, the account it credited, the
 * original amount, code 21/31, a type 99 addenda with the operator's reason.
 */
async function acceptReturn(d: Omit<EngineDeps, "transport">, i: RailInstruction, trx: Transaction<any>, reject: (reason: string) => Promise<void>): Promise<void> {
  const rc = i.returnedCredit;
  if (!rc) return reject("RETURN_WITHOUT_CREDIT");
  if (!/^R[0-9]{2}$/.test(rc.reason)) return reject("INVALID_RETURN_REASON");
  const found = await originalCreditOf(trx, rc, i.amount);
  if ("refused" in found) return reject(found.refused);
  const { item: original, trace } = found;
  const detail = parseDetail(original.detail);
  const sec = detail.secCode;
  if (sec !== "PPD" && sec !== "CCD") return reject("RETURN_SEC_CODE_NOT_SUPPORTED");
  const tc = String(original.code);
  const accountType = tc.startsWith("3") ? "SAVINGS" : "CHECKING";
  const odfi8 = rc.senderRouting.slice(0, 8);
  const rdfi8 = rc.creditedRouting.slice(0, 8);
  if (!/^[0-9]{8}$/.test(odfi8) || !/^[0-9]{8}$/.test(rdfi8) || !rc.creditedAccount) return reject("ORIGINAL_ENTRY_INCOMPLETE");
  const now = d.clock.now();
  const w = achWindowFor(d.config, now, false);
  const returnOf: ReturnOf = { reasonCode: rc.reason, originalTraceNumber: trace, originalRdfi: rdfi8, companyName: rc.senderName || "ORIGINATOR", companyIdentification: rc.senderAccount || "0000000000" };
  await trx
    .insertInto("ach_entries")
    .values({
      transaction_id: i.transactionId,
      platform_id: i.platformId,
      direction: "PAYOUT",
      amount: i.amount,
      reference: (detail.identificationNumber ?? "").trim(),
      sec_code: sec,
      routing_number: odfi8 + String(routingCheckDigit(odfi8)),
      account_number: rc.creditedAccount,
      account_type: accountType,
      receiver_name: (detail.name ?? "").replace(/[^\x20-\x7e]/g, " ").trim() || "RECEIVER",
      window_key: w.key,
      cutoff_at: w.cutoffAt,
      effective_date: w.effectiveDate,
      status: "QUEUED",
      created_at: now,
      return_of: JSON.stringify(returnOf),
    })
    .execute();
}

/** Handles one instruction (in the inbox transaction): a QUEUED entry, or a REJECTED outcome. */
export async function acceptInstruction(d: Omit<EngineDeps, "transport">, i: RailInstruction, trx: Transaction<any>): Promise<void> {
  const reject = (reason: string) => d.outcomes.report(trx, { platformId: i.platformId, transactionId: i.transactionId, status: "REJECTED", reason, at: d.clock.now() });
  if (i.kind === "RETURN") {
    if (i.currency !== "USD") return reject("CURRENCY_NOT_SUPPORTED");
    if (i.amount <= 0n || i.amount > 9_999_999_999n) return reject("AMOUNT_OUT_OF_RANGE");
    return acceptReturn(d, i, trx, reject);
  }
  if (i.currency !== "USD") return reject("CURRENCY_NOT_SUPPORTED");
  if (i.paymentRail !== "" && i.paymentRail !== "ACH") return reject("PAYMENT_RAIL_NOT_SUPPORTED");
  if (i.umaAddress !== "" || i.externalAccountId === "") return reject("NOT_A_BANK_ACCOUNT");
  if (i.amount <= 0n || i.amount > 9_999_999_999n) return reject("AMOUNT_OUT_OF_RANGE");
  const account = achAccountOf(i.accountInfo);
  if ("refused" in account) return reject(account.refused);
  const now = d.clock.now();
  const w = achWindowFor(d.config, now, i.amount <= d.config.ACH_SAME_DAY_LIMIT_CENTS);
  await trx
    .insertInto("ach_entries")
    .values({
      transaction_id: i.transactionId,
      platform_id: i.platformId,
      direction: i.direction,
      amount: i.amount,
      reference: i.reference,
      sec_code: account.secCode,
      routing_number: account.routingNumber,
      account_number: account.accountNumber,
      account_type: account.accountType,
      receiver_name: account.name,
      window_key: w.key,
      cutoff_at: w.cutoffAt,
      effective_date: w.effectiveDate,
      status: "QUEUED",
      created_at: now,
    })
    .execute();
}

const yymmdd = (d: string) => d.slice(2, 4) + d.slice(5, 7) + d.slice(8, 10);
const MODIFIERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** Builds one file for each window whose cut-off has passed and that has QUEUED entries. Returns the files built. */
export async function buildDueFiles(d: Omit<EngineDeps, "transport" | "outcomes">): Promise<string[]> {
  const now = d.clock.now();
  const windows = await d.db
    .selectFrom("ach_entries")
    .select(["window_key", "effective_date"])
    .where("status", "=", "QUEUED")
    .where("cutoff_at", "<=", now)
    .groupBy(["window_key", "effective_date"])
    .orderBy("window_key")
    .execute();
  const built: string[] = [];
  for (const w of windows) {
    const name = await d.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom("ach_entries")
        .selectAll()
        .where("status", "=", "QUEUED")
        .where("window_key", "=", w.window_key)
        .where("effective_date", "=", w.effective_date)
        .orderBy("created_at")
        .orderBy("transaction_id")
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length === 0) return undefined;
      // Batches: one per SEC code and direction (payouts are credits, pulls debits), each with its
      // description; returns (contract 1.3) one per SEC code and original company, which they repeat.
      const groups = new Map<string, typeof rows>();
      const returnOf = (r: (typeof rows)[number]): ReturnOf | undefined => (r.return_of ? ((typeof r.return_of === "string" ? JSON.parse(r.return_of) : r.return_of) as ReturnOf) : undefined);
      const keyOf = (r: (typeof rows)[number]) => {
        const ro = returnOf(r);
        return ro ? `${r.sec_code}:RETURN:${ro.companyIdentification}:${ro.companyName}` : `${r.sec_code}:${r.direction}`;
      };
      for (const r of rows) groups.set(keyOf(r), [...(groups.get(keyOf(r)) ?? []), r]);
      const ordered = [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
      const counter = await trx.updateTable("ach_counters").set((eb) => ({ value: eb("value", "+", rows.length) })).where("name", "=", "trace").returning("value").executeTakeFirstOrThrow();
      let next = Number(counter.value) - rows.length;
      const traceSeq = () => (next++ % 9_999_999) + 1;
      const day = w.window_key.slice(0, 10);
      const used = await trx.selectFrom("ach_files").select((eb) => eb.fn.countAll<string>().as("n")).where("day", "=", day).executeTakeFirstOrThrow();
      const modifier = MODIFIERS[Number(used.n)];
      if (!modifier) throw new Error(`more than ${MODIFIERS.length} ACH files on ${day}`);
      const batches: OutgoingBatch[] = [];
      const traceOf = new Map<string, number>();
      for (const [bi, [key, es]] of ordered.entries()) {
        const [sec, direction] = key.split(":") as ["PPD" | "CCD", "PAYOUT" | "PULL" | "RETURN"];
        const firstReturn = returnOf(es[0]!);
        const entries: OutgoingEntry[] = es.map((e) => {
          const seq = traceSeq();
          traceOf.set(e.transaction_id, seq);
          const ro = returnOf(e);
          return {
            ...(ro ? { returnOf: { reasonCode: ro.reasonCode, originalTraceNumber: ro.originalTraceNumber, originalRdfi: ro.originalRdfi } } : {}),
            direction: direction === "PULL" ? "debit" : "credit",
            accountType: e.account_type,
            routingNumber: e.routing_number,
            accountNumber: e.account_number,
            amount: BigInt(e.amount),
            identificationNumber: String(e.reference).replace(/[^\x20-\x7e]/g, "").slice(0, 15),
            receiverName: e.receiver_name,
            traceSequence: seq,
          };
        });
        // A cycled counter could put a small sequence after a large one: trace numbers ascend in a batch.
        entries.sort((a, b) => a.traceSequence - b.traceSequence);
        batches.push({
          secCode: sec,
          companyName: firstReturn ? firstReturn.companyName.replace(/[^\x20-\x7e]/g, " ") : d.config.ACH_COMPANY_NAME,
          companyIdentification: firstReturn ? firstReturn.companyIdentification.replace(/[^\x20-\x7e]/g, " ").slice(0, 10) : d.config.ACH_COMPANY_ID,
          companyEntryDescription: firstReturn ? "RETURN" : direction === "PAYOUT" ? d.config.ACH_PAYOUT_DESCRIPTION : d.config.ACH_PULL_DESCRIPTION,
          effectiveEntryDate: yymmdd(w.effective_date),
          batchNumber: bi + 1,
          entries,
        });
      }
      const local = localParts(scheduleOf(d.config).schedule, now);
      const written = writeNachaFile({
        immediateDestination: d.config.ACH_IMMEDIATE_DESTINATION || d.config.ACH_ODFI_ROUTING,
        immediateDestinationName: d.config.ACH_IMMEDIATE_DESTINATION_NAME,
        immediateOrigin: d.config.ACH_IMMEDIATE_ORIGIN,
        immediateOriginName: d.config.ACH_IMMEDIATE_ORIGIN_NAME,
        odfiRouting: d.config.ACH_ODFI_ROUTING,
        creationDate: yymmdd(local.date),
        creationTime: local.time,
        fileIdModifier: modifier,
        batches,
      });
      const fileName = `${d.config.ACH_FILE_PREFIX}-${day.replaceAll("-", "")}-${w.window_key.slice(11).replace(":", "")}-${modifier}.ach`;
      await trx
        .insertInto("ach_files")
        .values({ file_name: fileName, day, modifier, window_key: w.window_key, status: "BUILT", content: written.text, entry_count: written.entryCount, total_debit: written.totalDebit, total_credit: written.totalCredit, built_at: now })
        .execute();
      const odfi8 = d.config.ACH_ODFI_ROUTING.slice(0, 8);
      for (const r of rows) {
        await trx
          .updateTable("ach_entries")
          .set({ status: "FILED", file_name: fileName, trace_number: odfi8 + String(traceOf.get(r.transaction_id)).padStart(7, "0") })
          .where("transaction_id", "=", r.transaction_id)
          .execute();
      }
      return fileName;
    });
    if (name) {
      d.log.info({ file: name, window: w.window_key }, "ACH file built");
      built.push(name);
    }
  }
  return built;
}

/** When an entry of `effectiveDate` completes: payouts at settlement, pulls after the availability days. */
export function completionTime(c: AchConfig, direction: "PAYOUT" | "PULL", effectiveDate: string): Date {
  const { schedule } = scheduleOf(c);
  const day = direction === "PAYOUT" ? effectiveDate : addBusinessDays(schedule, effectiveDate, c.ACH_DEBIT_AVAILABILITY_DAYS);
  return localInstant(schedule, day, c.ACH_SETTLEMENT_TIME);
}

/** Uploads built files; records each only after the bank's server has it. Returns the files uploaded. */
export async function uploadFiles(d: EngineDeps): Promise<string[]> {
  const files = await d.db.selectFrom("ach_files").select(["file_name", "status", "content"]).where("status", "in", ["BUILT", "UPLOADING"]).orderBy("built_at").orderBy("file_name").execute();
  const done: string[] = [];
  for (const f of files) {
    const content = Buffer.from(f.content, "latin1");
    if (f.status === "UPLOADING" && d.config.ACH_SFTP_BANK_COLLECTS_UPLOADS) {
      // An earlier attempt stopped at an unknown point and the bank may have collected the file:
      // present means it arrived; absent cannot tell "never sent" from "sent and collected".
      const there = (await d.transport.listInbox()).some((x) => x.name === f.file_name);
      if (!there) {
        await d.db.updateTable("ach_files").set({ status: "HELD", detail: "upload interrupted and the file is not in the bank's inbox: ask the bank whether it arrived, then release or cancel it" }).where("file_name", "=", f.file_name).execute();
        d.log.error({ file: f.file_name }, "ACH file held: an interrupted upload cannot be told apart from a collected one; the operator decides");
        continue;
      }
    } else {
      await d.db.updateTable("ach_files").set({ status: "UPLOADING" }).where("file_name", "=", f.file_name).where("status", "in", ["BUILT", "UPLOADING"]).execute();
      try {
        const result = await d.transport.upload(f.file_name, content);
        if (result === "already-present") d.log.warn({ file: f.file_name }, "ACH file was already in the bank's inbox (an earlier attempt got there): not sent again");
      } catch (e) {
        if ((e as { kind?: string }).kind === "conflict") {
          await d.db.updateTable("ach_files").set({ status: "HELD", detail: (e as Error).message }).where("file_name", "=", f.file_name).execute();
          d.log.error({ file: f.file_name, err: e }, "ACH file held: another file of that name is in the bank's inbox");
          continue;
        }
        throw e;
      }
    }
    await d.db.transaction().execute(async (trx) => {
      const now = d.clock.now();
      const updated = await trx.updateTable("ach_files").set({ status: "UPLOADED", uploaded_at: now }).where("file_name", "=", f.file_name).where("status", "=", "UPLOADING").returning("file_name").executeTakeFirst();
      if (!updated) return;
      const entries = await trx.selectFrom("ach_entries").selectAll().where("file_name", "=", f.file_name).where("status", "=", "FILED").execute();
      for (const e of entries) {
        const completesAt = completionTime(d.config, e.direction, e.effective_date);
        await trx.updateTable("ach_entries").set({ status: "SUBMITTED", completes_at: completesAt }).where("transaction_id", "=", e.transaction_id).execute();
        await d.outcomes.report(trx, { platformId: e.platform_id, transactionId: e.transaction_id, status: "PROCESSING", at: now, expectedSettlementAt: completesAt });
      }
    });
    d.log.info({ file: f.file_name }, "ACH file uploaded");
    done.push(f.file_name);
  }
  return done;
}

/** Completes the submitted entries whose completion time has passed. Returns how many. */
export async function completeSettled(d: Omit<EngineDeps, "transport">): Promise<number> {
  return d.db.transaction().execute(async (trx) => {
    const due = await trx.selectFrom("ach_entries").selectAll().where("status", "=", "SUBMITTED").where("completes_at", "<=", d.clock.now()).orderBy("completes_at").limit(500).forUpdate().skipLocked().execute();
    for (const e of due) {
      await trx.updateTable("ach_entries").set({ status: "COMPLETED" }).where("transaction_id", "=", e.transaction_id).execute();
      await d.outcomes.report(trx, { platformId: e.platform_id, transactionId: e.transaction_id, status: "COMPLETED", at: e.completes_at });
    }
    return due.length;
  });
}

/** Reads every new file in the bank's outbox once, acts on it, archives it. Returns the files read. */
export async function readBankFiles(d: EngineDeps): Promise<string[]> {
  const listed = await d.transport.listOutbox();
  const read: string[] = [];
  for (const f of listed) {
    const seen = await d.db.selectFrom("ach_bank_files").select(["status"]).where("file_name", "=", f.name).executeTakeFirst();
    if (seen?.status === "PROCESSED") {
      await d.transport.archive(f.name); // processed, but the archive step did not happen
      continue;
    }
    if (seen) continue; // REFUSED: left in place for the operator
    const content = await d.transport.download(f.name);
    if (looksLikeBai2(content)) {
      if (await reportBai2(d, f.name, content)) read.push(f.name);
      continue;
    }
    // An acknowledgement of one of our files (no entries; the bank's count of our file).
    const ack = acknowledgementOf(content);
    if (ack) {
      const done = await d.db.transaction().execute(async (trx) => {
        const answered = await answeredFile(trx, ack.header);
        if (!answered) return undefined; // not about a file of ours: read as any other file below
        const fresh = await trx.insertInto("ach_bank_files").values({ file_name: f.name, status: "PROCESSED", detail: "", processed_at: d.clock.now() }).onConflict((oc) => oc.column("file_name").doNothing()).returning("file_name").executeTakeFirst();
        if (!fresh) return {};
        const what = await applyAcknowledgement(d, trx, f.name, ack, answered);
        await trx.updateTable("ach_bank_files").set({ detail: JSON.stringify(what) }).where("file_name", "=", f.name).execute();
        return what;
      });
      if (done) {
        await d.transport.archive(f.name);
        read.push(f.name);
        continue;
      }
    }
    let parsed;
    try {
      parsed = await parseNachaFile(content, { customReturnCodes: d.config.ACH_CUSTOM_RETURN_CODES });
    } catch (e) {
      if (!(e instanceof NachaFormatError)) throw e;
      await d.db.insertInto("ach_bank_files").values({ file_name: f.name, status: "REFUSED", detail: e.message, processed_at: d.clock.now() }).onConflict((oc) => oc.column("file_name").doNothing()).execute();
      d.log.error({ file: f.name, reason: e.message }, "the bank's file is not a NACHA file this connector can vouch for; left in the outbox for the operator");
      continue;
    }
    const summary = await d.db.transaction().execute(async (trx) => {
      const now = d.clock.now();
      const fresh = await trx.insertInto("ach_bank_files").values({ file_name: f.name, status: "PROCESSED", detail: "", processed_at: now }).onConflict((oc) => oc.column("file_name").doNothing()).returning("file_name").executeTakeFirst();
      if (!fresh) return undefined;
      // The bank's answer to one of our files (an acknowledgement, or the file sent back).
      const answered = await answeredFile(trx, parsed.header);
      if (answered) {
        const what = await applyFileSentBack(d, trx, f.name, parsed, answered);
        await trx.updateTable("ach_bank_files").set({ detail: JSON.stringify(what) }).where("file_name", "=", f.name).execute();
        return what;
      }
      const counts = { returns: 0, nocs: 0, incoming: 0, unmatched: 0 };
      for (const b of parsed.batches) {
        for (const e of b.entries) {
          const original = e.return?.originalTraceNumber ?? e.change?.originalTraceNumber ?? "";
          const kind = e.return ? "RETURN" : e.change ? "NOC" : "INCOMING";
          const code = e.return?.code ?? e.change?.code ?? e.transactionCode;
          // A return or NOC names our entry by its trace number; it must also be that entry (RDFI,
          // account, direction and, for a return, amount), else it waits in suspense for the operator.
          const match = kind === "INCOMING" ? undefined : await originalEntryOf(trx, e);
          const ours = match && "entry" in match ? match.entry : undefined;
          const suspense = match && "suspense" in match ? match.suspense : null;
          if (suspense) d.log.warn({ file: f.name, line: e.line, code, original_trace: original, reason: suspense }, "ACH return/NOC does not match an entry of ours: kept in suspense for the operator");
          await trx
            .insertInto("ach_bank_items")
            .values({
              bank_file: f.name,
              line: e.line,
              kind,
              trace_number: e.traceNumber,
              original_trace_number: original,
              code,
              amount: e.amount,
              transaction_id: ours?.transaction_id ?? null,
              detail: JSON.stringify(
                e.change
                  ? { corrections: e.change.corrections, refused: e.change.refused }
                  : e.return
                    ? { dishonored: e.return.dishonored ?? null, information: e.return.addendaInformation }
                    : { name: e.name, identificationNumber: e.identificationNumber, secCode: b.header.secCode, bankEntryId: bankEntryIdOf(b.header, e), companyIdentification: b.header.companyIdentification.trim(), accountNumber: e.accountNumber.trim() },
              ),
              received_at: now,
              suspense_reason: suspense,
            })
            .execute();
          if (kind === "INCOMING") {
            counts.incoming += 1;
            const notice = incomingCreditNotice(b.header, e);
            if (notice) await d.notices.report(trx, notice);
          } else if (!ours) counts.unmatched += 1;
          else if (kind === "NOC") {
            counts.nocs += 1;
            const notice = correctionNotice(e, ours as { transaction_id: string; platform_id: string }, now);
            if (notice) await d.notices.report(trx, notice);
            else d.log.warn({ file: f.name, line: e.line, code }, "refused notification of change (C61-C69): kept, nothing to correct");
          }
          else if (e.return && (!e.return.info || e.return.info.kind === "return")) {
            counts.returns += 1;
            if (ours.status === "SUBMITTED" || ours.status === "COMPLETED" || ours.status === "FILED") {
              // Before completion nothing had settled for the platform: the payment failed. After
              // it, the money comes back: RETURNED (the ledger reverses it).
              const status = ours.status === "COMPLETED" ? "RETURNED" : "FAILED";
              await trx.updateTable("ach_entries").set({ status: status === "RETURNED" ? "RETURNED" : "FAILED", return_code: code }).where("transaction_id", "=", ours.transaction_id).execute();
              await d.outcomes.report(trx, { platformId: ours.platform_id, transactionId: ours.transaction_id, status, reason: code, at: now });
            }
          }
        }
      }
      await trx.updateTable("ach_bank_files").set({ detail: JSON.stringify(counts) }).where("file_name", "=", f.name).execute();
      return counts;
    });
    if (summary) d.log.info({ file: f.name, ...summary }, "bank file read");
    await d.transport.archive(f.name);
    read.push(f.name);
  }
  return read;
}

/** Why a return or NOC is not matched to an entry of ours (ach_bank_items.suspense_reason). */
export type ReturnSuspenseReason = "UNKNOWN_TRACE" | "RDFI_MISMATCH" | "ACCOUNT_MISMATCH" | "DIRECTION_MISMATCH" | "AMOUNT_MISMATCH";

/**
 * The entry of ours a return or NOC is about: the one whose trace number its addenda names, and
 * only if it is that entry — the same receiving DFI (the addenda's original RDFI), the same account
 * (the return entry repeats the receiver's account), the same direction (21/31 return or correct a
 * credit of ours, 26/36 a debit) and, for a return, the same amount. Trace numbers are unique among
 * our entries, but a bank's error or a trace sequence that wrapped could name another entry: such a
 * return moves no money and is kept in suspense with its reason.
 */
export async function originalEntryOf(trx: Transaction<any>, e: EntryDetail): Promise<{ entry: any } | { suspense: ReturnSuspenseReason }> {
  const addenda = e.return ?? e.change;
  const original = addenda?.originalTraceNumber ?? "";
  const entry = original ? await trx.selectFrom("ach_entries").selectAll().where("trace_number", "=", original).forUpdate().executeTakeFirst() : undefined;
  if (!entry) return { suspense: "UNKNOWN_TRACE" };
  const rdfi = (addenda?.originalRdfi ?? "").trim();
  if (rdfi !== "" && rdfi !== String(entry.routing_number).slice(0, 8)) return { suspense: "RDFI_MISMATCH" };
  if (e.accountNumber.trim() !== String(entry.account_number).trim()) return { suspense: "ACCOUNT_MISMATCH" };
  const credit = Number(e.transactionCode[1]) <= 4;
  if ((entry.direction === "PAYOUT") !== credit) return { suspense: "DIRECTION_MISMATCH" };
  if (e.return && e.amount !== BigInt(entry.amount)) return { suspense: "AMOUNT_MISMATCH" };
  return { entry };
}

/** YYMMDD (a batch's effective entry date) as YYYY-MM-DD; "" when it is not a date. */
function isoDate(yymmdd: string): string {
  if (!/^[0-9]{6}$/.test(yymmdd)) return "";
  const iso = `20${yymmdd.slice(0, 2)}-${yymmdd.slice(2, 4)}-${yymmdd.slice(4, 6)}`;
  return Number.isNaN(Date.parse(`${iso}T00:00:00Z`)) ? "" : iso;
}

/**
 * The INCOMING_CREDIT notice of an entry the bank received for the operator's account (RDFI): live
 * credits only (prenotes, zero-dollar and debit entries move no money into the account). The
 * bank's id of the entry is its trace number with the batch's effective date, company
 * identification and batch number: trace sequences restart (the trace alone is not unique over
 * time) and real files repeat a trace in two batches of one file (fixture 20110805A.ach). The same
 * entry in a file read again gives the same id; each entry comes in one file of the bank.
 */
export const bankEntryIdOf = (h: BatchHeader, e: EntryDetail): string => `${h.effectiveEntryDate}-${h.companyIdentification.trim() || "-"}-${h.batchNumber}-${e.traceNumber}`;

export function incomingCreditNotice(h: BatchHeader, e: EntryDetail): IncomingCreditNotice | undefined {
  if (e.transaction.direction !== "credit" || e.transaction.use !== "live" || e.amount <= 0n) return undefined;
  const valueDate = isoDate(h.effectiveEntryDate);
  const reference = [e.identificationNumber.trim(), ...e.paymentRelatedInformation.map((p) => p.trim())].filter(Boolean).join(" ");
  return {
    kind: "INCOMING_CREDIT",
    bankEntryId: bankEntryIdOf(h, e),
    at: valueDate ? new Date(`${valueDate}T00:00:00Z`) : new Date(0),
    amount: e.amount,
    currency: "USD",
    paymentRail: "ACH",
    creditedAccount: e.accountNumber.trim(),
    creditedRouting: e.routingNumber,
    reference,
    // The originator of a credit is the batch's company; its identification and ODFI are what the
    // file says of the sender's side.
    senderName: h.companyName.trim(),
    senderAccount: h.companyIdentification.trim(),
    senderRouting: h.odfiIdentification,
    valueDate,
  };
}

/**
 * The ACCOUNT_CORRECTION notice of a NOC of one of our entries; undefined for a refused NOC
 * (C61-C69: the RDFI refuses our earlier NOC, there is nothing to correct). The corrected
 * transaction code of C05-C07 also says the account type (2x checking, 3x savings).
 */
export function correctionNotice(e: EntryDetail, ours: { transaction_id: string; platform_id: string }, now: Date): AccountCorrectionNotice | undefined {
  const c = e.change;
  if (!c || c.refused) return undefined;
  const corrected: Record<string, string> = {};
  for (const [k, v] of Object.entries(c.corrections)) if (v) corrected[k === "individualId" ? "identification" : k] = v;
  const tc = corrected.transactionCode ? TRANSACTION_CODES[corrected.transactionCode] : undefined;
  if (tc && (tc.accountType === "CHECKING" || tc.accountType === "SAVINGS")) corrected.accountType = tc.accountType;
  return {
    kind: "ACCOUNT_CORRECTION",
    bankEntryId: `noc-${c.originalTraceNumber}-${c.traceNumber}-${c.code}`,
    at: now,
    transactionId: ours.transaction_id,
    platformId: ours.platform_id,
    code: c.code,
    corrected,
    correctedData: c.correctedData,
  };
}

/**
 * A BAI2 statement file from the bank's outbox: each final account statement in it reported to the
 * ledger (once per statement id), its entries marked with our transaction where a trace number is
 * one of ours; the file recorded PROCESSED and archived. A file that does not read (format, a
 * control total or count that disagrees) is recorded REFUSED and left for the operator.
 */
async function reportBai2(d: EngineDeps, name: string, content: Buffer): Promise<boolean> {
  let found;
  try {
    found = bai2Statements(readBai2(content), { sourceFile: name, timeZone: d.config.ACH_CUTOFF_TIMEZONE });
  } catch (e) {
    if (!(e instanceof Bai2FormatError)) throw e;
    await d.db.insertInto("ach_bank_files").values({ file_name: name, status: "REFUSED", detail: e.message, processed_at: d.clock.now() }).onConflict((oc) => oc.column("file_name").doNothing()).execute();
    d.log.error({ file: name, reason: e.message }, "the bank's BAI2 statement cannot be read; left in the outbox for the operator");
    return false;
  }
  const summary = await d.db.transaction().execute(async (trx) => {
    const fresh = await trx.insertInto("ach_bank_files").values({ file_name: name, status: "PROCESSED", detail: "", processed_at: d.clock.now() }).onConflict((oc) => oc.column("file_name").doNothing()).returning("file_name").executeTakeFirst();
    if (!fresh) return undefined;
    const counts = { statements: 0, duplicates: 0, entries: 0, skipped: found.skipped };
    for (const s of found.statements) {
      const traces = [...new Set(s.entries.map((e) => e.traceNumber).filter((t): t is string => !!t))];
      const ours = traces.length ? await trx.selectFrom("ach_entries").select(["trace_number", "transaction_id"]).where("trace_number", "in", traces).execute() : [];
      const byTrace = new Map(ours.map((e) => [e.trace_number as string, e.transaction_id as string]));
      const entries = s.entries.map((e) => (e.traceNumber && byTrace.has(e.traceNumber) ? { ...e, transactionId: byTrace.get(e.traceNumber) } : e));
      const reported = await d.statements.report(trx, { ...s, entries });
      if (reported === "reported") counts.statements++;
      else counts.duplicates++;
      counts.entries += entries.length;
    }
    await trx.updateTable("ach_bank_files").set({ detail: JSON.stringify(counts) }).where("file_name", "=", name).execute();
    return counts;
  });
  if (summary) d.log.info({ file: name, ...summary }, "bank statement (BAI2) read for reconciliation");
  await d.transport.archive(name);
  return summary !== undefined;
}

/** The failure reason of an R-code, for platforms (docs/connectors.md). */
export const returnReason = (code: string): string => RETURN_CODES[code]?.reason ?? "OTHER";
