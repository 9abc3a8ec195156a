import { defineConnector, windowFor, type IncomingCreditNotice, type NoticePublisher, type OutcomePublisher, type OutcomeReport, type StatementPublisher } from "@corridor/connector";
import { pollingWorker, type Clock, type Logger } from "@corridor/kit";
import { randomUUID } from "node:crypto";
import { sql, type Kysely, type Transaction } from "kysely";
import { fileURLToPath } from "node:url";
import { Iso20022Error } from "../iso20022/errors.js";
import { identifyMessage } from "../iso20022/messages.js";
import { writeCreditTransferFile } from "../iso20022/pain001.js";
import { readPaymentStatusReport } from "../iso20022/pain002.js";
import { readNotification, readStatement, type BankToCustomerDocument, type EntryDetail } from "../iso20022/camt.js";
import { admit } from "./admission.js";
import { sepaConfigSchema, sepaSchedule, type SepaConfig } from "./config.js";
import { statementsOf } from "./statements.js";
import type { SepaTables, TransferState } from "./tables.js";
import { BankFileDropError, SftpTransport, directoryDrop, type BankFileDrop } from "@corridor/connector/bank-files";
import { createHash } from "node:crypto";

export const SEPA_CONNECTOR = "sepa";
export const SEPA_SCHEMA = "connector_sepa";
export const SEPA_MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations", import.meta.url));

type Db = Kysely<SepaTables>;

export const sha256 = (content: Buffer | string) => createHash("sha256").update(content).digest("hex");

/** The bank's file drop the settings name: its SFTP server (pinned host key), or a mounted directory. */
export function sepaDropFromConfig(c: SepaConfig): BankFileDrop {
  if (c.SEPA_FILE_DROP_DIR) return directoryDrop(c.SEPA_FILE_DROP_DIR);
  return new SftpTransport({
    host: c.SEPA_SFTP_HOST!,
    port: c.SEPA_SFTP_PORT,
    username: c.SEPA_SFTP_USERNAME!,
    password: c.SEPA_SFTP_PASSWORD,
    privateKey: c.SEPA_SFTP_PRIVATE_KEY,
    passphrase: c.SEPA_SFTP_PRIVATE_KEY_PASSPHRASE,
    hostKey: c.SEPA_SFTP_HOST_KEY!,
    hostKeySetting: "SEPA_SFTP_HOST_KEY",
    inboxDir: c.SEPA_SFTP_INBOX_DIR,
    outboxDir: c.SEPA_SFTP_OUTBOX_DIR,
    archiveDir: c.SEPA_SFTP_ARCHIVE_DIR,
    timeoutMs: c.SEPA_SFTP_TIMEOUT_MS,
  });
}
type Trx = Transaction<SepaTables>;

/** The status codes of a pain.002 that settle a transfer; other accepted states (ACCP, ACTC, ACSP, PDNG) move nothing. */
const SETTLED = new Set(["ACSC", "ACCC"]);
/** The statuses of a pain.002 that say the bank took a file or transaction (accepted at some stage, or settled). */
const ACCEPTED = new Set(["ACCP", "ACTC", "ACSP", "ACSC", "ACCC", "ACWC", "ACWP", "ACFC"]);
/** A duplicate-message rejection: the bank already has this file (a re-upload after a crash); never a rejection of its transfers. */
const DUPLICATE = "DU01";

export interface SepaDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  outcomes: OutcomePublisher;
  /** Rail notices (contract 1.2): credits received become INCOMING_CREDIT. Optional for tests of the money path alone. */
  notices?: NoticePublisher;
  /** End-of-day statements (camt.053) to the ledger for reconciliation (contract v1.2). Optional for tests of the money path alone. */
  statements?: StatementPublisher;
  config: SepaConfig;
  drop: BankFileDrop;
}

/**
 * The SEPA connector's work, as functions over its schema and the bank's file drop:
 * - accept: an instruction becomes a QUEUED transfer in the window of the cut-off after it arrived
 *   (or is REJECTED at once when SEPA cannot carry it);
 * - file: windows whose cut-off has passed become pain.001 files, content and name fixed in one
 *   transaction before anything is sent;
 * - upload: each built file reaches the bank's inbox exactly once (see `upload`), and its transfers
 *   are reported PROCESSING;
 * - read: the bank's pain.002 and camt.054 reports become COMPLETED, REJECTED and RETURNED outcomes,
 *   each report applied once; its camt.053 statements are reported to the ledger for reconciliation.
 */
export function sepaWork(d: SepaDeps) {
  const schedule = sepaSchedule(d.config);
  const report = (trx: Trx, platformId: string, transactionId: string, status: OutcomeReport["status"], reason = "") =>
    d.outcomes.report(trx as Transaction<any>, { platformId, transactionId, status, reason, at: d.clock.now() });

  async function move(trx: Trx, where: { transaction_id: string }, from: readonly TransferState[], to: TransferState): Promise<{ platform_id: string } | undefined> {
    return trx
      .updateTable("sepa_transfers")
      .set({ state: to, updated_at: d.clock.now() })
      .where("transaction_id", "=", where.transaction_id)
      .where("state", "in", from)
      .returning("platform_id")
      .executeTakeFirst();
  }

  return {
    schedule,

    async accept(i: Parameters<typeof admit>[0], trx: Trx): Promise<void> {
      const a = admit(i);
      if (!a.ok) return report(trx, i.platformId, i.transactionId, "REJECTED", a.reason);
      const now = d.clock.now();
      const window = windowFor(schedule, i.occurredAt.getTime() > now.getTime() ? i.occurredAt : now);
      await trx
        .insertInto("sepa_transfers")
        .values({
          transaction_id: i.transactionId,
          platform_id: i.platformId,
          end_to_end_id: a.endToEndId,
          amount: i.amount,
          creditor_name: a.creditorName,
          creditor_iban: a.creditorIban,
          creditor_bic: a.creditorBic ?? null,
          remittance: a.remittance,
          window_id: window.id,
          window_closes_at: window.closesAt,
          state: "QUEUED",
          file_name: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
    },

    /** Closes every window whose cut-off has passed into one file each; returns the files built. */
    async file(): Promise<number> {
      return d.db.transaction().execute(async (trx) => {
        const due = await trx
          .selectFrom("sepa_transfers")
          .selectAll()
          .where("state", "=", "QUEUED")
          .where("window_closes_at", "<=", d.clock.now())
          .orderBy("window_id")
          .orderBy("transaction_id")
          .forUpdate()
          .skipLocked()
          .execute();
        const byWindow = new Map<string, typeof due>();
        for (const t of due) byWindow.set(t.window_id, [...(byWindow.get(t.window_id) ?? []), t]);
        for (const [windowId, transfers] of byWindow) {
          const { n } = await trx.selectFrom("sepa_files").select(sql<number>`count(*)::int`.as("n")).where("window_id", "=", windowId).executeTakeFirstOrThrow();
          const sequence = n + 1;
          // Deterministic: the same window and sequence always name the same file, whoever builds it.
          const name = `CORRIDOR-SEPA-${windowId.replace(/[^0-9T]/g, "")}-${sequence}`;
          const content = writeCreditTransferFile({
            messageId: name,
            createdAt: d.clock.now(),
            initiatingParty: { name: d.config.SEPA_DEBTOR_NAME, id: d.config.SEPA_INITIATING_PARTY_ID },
            paymentInfoId: `${name}-P`,
            debtor: { name: d.config.SEPA_DEBTOR_NAME, iban: d.config.SEPA_DEBTOR_IBAN, bic: d.config.SEPA_DEBTOR_BIC },
            requestedExecutionDate: windowFor(schedule, new Date(transfers[0]!.window_closes_at.getTime() - 1)).businessDate,
            instant: d.config.SEPA_INSTANT,
            transfers: transfers.map((t) => ({
              instructionId: t.end_to_end_id,
              endToEndId: t.end_to_end_id,
              amount: BigInt(t.amount),
              creditor: { name: t.creditor_name, iban: t.creditor_iban, bic: t.creditor_bic ?? undefined },
              remittance: t.remittance || undefined,
            })),
          });
          await trx
            .insertInto("sepa_files")
            .values({
              file_name: `${name}.xml`,
              window_id: windowId,
              sequence,
              content,
              sha256: sha256(content),
              transfer_count: transfers.length,
              control_sum: transfers.reduce((s, t) => s + BigInt(t.amount), 0n),
              state: "BUILT",
              built_at: d.clock.now(),
              uploaded_at: null,
            })
            .execute();
          await trx
            .updateTable("sepa_transfers")
            .set({ state: "FILED", file_name: `${name}.xml`, updated_at: d.clock.now() })
            .where("transaction_id", "in", transfers.map((t) => t.transaction_id))
            .execute();
        }
        return byWindow.size;
      });
    },

    /**
     * Uploads every built file exactly once. The file's name and content were fixed when it was
     * built, so after a crash between the upload and its record the next pass finds the same name
     * in the inbox with the same hash and only records it. If the bank has already taken the file
     * out of its inbox, the upload is repeated under the same name and message id: the bank's
     * duplicate check refuses the copy (pain.002 DU01), which this connector never treats as a
     * rejection of the transfers.
     */
    async upload(): Promise<number> {
      const built = await d.db.selectFrom("sepa_files").select(["file_name", "content", "sha256"]).where("state", "=", "BUILT").orderBy("file_name").execute();
      for (const f of built) {
        try {
          const result = await d.drop.upload(f.file_name, Buffer.from(f.content));
          if (result === "already-present") d.log.warn({ file: f.file_name }, "sepa: the file was already in the bank's inbox (an earlier attempt got there): recorded, not sent again");
        } catch (err) {
          if (err instanceof BankFileDropError && err.kind === "conflict") throw new Error(`the bank's inbox has another file named ${f.file_name}; refusing to overwrite it (operator: see docs/connectors.md)`);
          throw err;
        }
        await d.db.transaction().execute(async (trx) => {
          const marked = await trx.updateTable("sepa_files").set({ state: "UPLOADED", uploaded_at: d.clock.now() }).where("file_name", "=", f.file_name).where("state", "=", "BUILT").executeTakeFirst();
          if (marked.numUpdatedRows === 0n) return; // another replica recorded it
          const sent = await trx
            .updateTable("sepa_transfers")
            .set({ state: "SENT", updated_at: d.clock.now() })
            .where("file_name", "=", f.file_name)
            .where("state", "=", "FILED")
            .returning(["transaction_id", "platform_id"])
            .execute();
          for (const t of sent) await report(trx, t.platform_id, t.transaction_id, "PROCESSING");
        });
      }
      return built.length;
    },

    /** Reads the bank's reports, each once, and archives them; returns how many it read. */
    async read(): Promise<number> {
      let read = 0;
      for (const { name } of await d.drop.listOutbox()) {
        const content = await d.drop.download(name);
        const hash = sha256(content);
        const applied = await d.db.transaction().execute(async (trx) => {
          const fresh = await trx.insertInto("sepa_bank_documents").values({ file_name: name, sha256: hash, message: "", outcomes: 0, read_at: d.clock.now() }).onConflict((c) => c.column("file_name").doNothing()).executeTakeFirst();
          if (fresh.numInsertedOrUpdatedRows === 0n) return false; // read before; archive it again
          let message = "unreadable";
          let outcomes = 0;
          try {
            const xml = content.toString("utf8");
            message = identifyMessage(xml).message;
            if (message === "pain.002") outcomes = await applyStatusReport(trx, xml, name);
            else if (message === "camt.054") outcomes = await applyNotification(trx, xml, name);
            else if (message === "camt.053") {
              await reportCredits(trx, readStatement(xml));
              await reportStatements(trx, xml, name);
            }
            else d.log.warn({ file: name, message }, "sepa: a bank report of a kind this connector does not act on was archived unread");
          } catch (err) {
            if (!(err instanceof Iso20022Error)) throw err;
            // A file the bank sent that cannot be read is kept (archived) and logged for the operator, never retried forever.
            d.log.error({ file: name, reason: err.message }, "sepa: a bank report could not be read; archived for the operator");
          }
          await trx.updateTable("sepa_bank_documents").set({ message, outcomes }).where("file_name", "=", name).execute();
          return true;
        });
        await d.drop.archive(name);
        if (applied) read++;
      }
      return read;
    },
  };

  /**
   * A pain.002 status report on one of our files (its original message id is the file's name):
   * rejected transfers are REJECTED and settled ones COMPLETED, each once (a transfer moves only
   * from FILED or SENT); the file takes the bank's verdict (ACCEPTED, REJECTED, PARTIALLY_ACCEPTED).
   * A report on a message that is not ours changes nothing (logged); the duplicate check's
   * rejection (DU01) of a re-upload neither rejects the transfers nor the file.
   */
  async function applyStatusReport(trx: Trx, xml: string, document: string): Promise<number> {
    const r = readPaymentStatusReport(xml);
    const file = `${r.originalMessageId}.xml`;
    const ours = await trx.selectFrom("sepa_files").select(["file_name", "state"]).where("file_name", "=", file).forUpdate().executeTakeFirst();
    if (!ours) {
      d.log.warn({ report: document, original_message_id: r.originalMessageId }, "sepa: a status report on a message that is not one of our files; nothing changed");
      return 0;
    }
    let n = 0;
    const reject = async (where: { endToEndId?: string }, reason: string) => {
      let q = trx.selectFrom("sepa_transfers").select(["transaction_id"]).where("file_name", "=", file).where("state", "in", ["FILED", "SENT"]);
      if (where.endToEndId) q = q.where("end_to_end_id", "=", where.endToEndId);
      for (const t of await q.execute()) {
        const moved = await move(trx, t, ["FILED", "SENT"], "REJECTED");
        if (moved) (await report(trx, moved.platform_id, t.transaction_id, "REJECTED", reason), n++);
      }
    };
    const code = (rs: { code?: string; proprietary?: string }[]) => rs[0]?.code ?? rs[0]?.proprietary ?? "";
    const verdict = async (state: "ACCEPTED" | "REJECTED" | "PARTIALLY_ACCEPTED", reason = "") => {
      // A later report may narrow the verdict (accepted, then some transactions rejected); a
      // rejected file stays rejected.
      if (ours.state === "REJECTED" || ours.state === state) return;
      await trx.updateTable("sepa_files").set({ state, status_report: document, status_reason: reason || null, acknowledged_at: d.clock.now() }).where("file_name", "=", file).execute();
    };
    const groupReason = code(r.groupReasons);
    if (r.groupStatus === "RJCT") {
      if (groupReason === DUPLICATE) return 0;
      await reject({}, groupReason || "RJCT");
      await verdict("REJECTED", groupReason || "RJCT");
      return n;
    }
    let rejected = 0;
    let accepted = 0;
    for (const p of r.payments) {
      if (p.status === "RJCT" && p.transactions.length === 0) (await reject({}, code(p.reasons) || "RJCT"), rejected++);
      for (const t of p.transactions) {
        if (!t.originalEndToEndId) continue;
        if (t.status === "RJCT") (await reject({ endToEndId: t.originalEndToEndId }, code(t.reasons) || "RJCT"), rejected++);
        else if (t.status && ACCEPTED.has(t.status)) accepted++;
        if (t.status && SETTLED.has(t.status)) {
          const row = await trx.selectFrom("sepa_transfers").select("transaction_id").where("file_name", "=", file).where("end_to_end_id", "=", t.originalEndToEndId).executeTakeFirst();
          const moved = row && (await move(trx, row, ["FILED", "SENT"], "COMPLETED"));
          if (row && moved) (await report(trx, moved.platform_id, row.transaction_id, "COMPLETED"), n++);
        }
      }
    }
    const left = await trx.selectFrom("sepa_transfers").select(sql<number>`count(*)::int`.as("n")).where("file_name", "=", file).where("state", "!=", "REJECTED").executeTakeFirstOrThrow();
    if (rejected > 0) await verdict(left.n === 0 ? "REJECTED" : "PARTIALLY_ACCEPTED", left.n === 0 ? "RJCT" : "");
    else if (r.groupStatus === "PART") await verdict("PARTIALLY_ACCEPTED");
    else if ((r.groupStatus && ACCEPTED.has(r.groupStatus)) || accepted > 0) {
      if (ours.state !== "PARTIALLY_ACCEPTED") await verdict("ACCEPTED");
    }
    return n;
  }

  /**
   * A camt.053 end-of-day statement: each account's statement to the ledger (once per statement id),
   * its entries marked with our transaction where the end-to-end id is one of ours.
   */
  async function reportStatements(trx: Trx, xml: string, document: string): Promise<void> {
    if (!d.statements) return;
    for (const s of statementsOf(readStatement(xml), { sourceFile: document, timeZone: d.config.SEPA_CUTOFF_ZONE })) {
      const e2e = [...new Set(s.entries.map((e) => e.endToEndId).filter((x): x is string => !!x))];
      const ours = e2e.length ? await trx.selectFrom("sepa_transfers").select(["end_to_end_id", "transaction_id"]).where("end_to_end_id", "in", e2e).execute() : [];
      const byE2e = new Map(ours.map((t) => [t.end_to_end_id, t.transaction_id]));
      const entries = s.entries.map((e) => (e.endToEndId && byE2e.has(e.endToEndId) ? { ...e, transactionId: byE2e.get(e.endToEndId) } : e));
      const reported = await d.statements!.report(trx as Transaction<any>, { ...s, entries });
      d.log.info({ file: document, statement_id: s.statementId, account: s.account, date: s.statementDate, entries: entries.length, reported }, "sepa: end-of-day statement for reconciliation");
    }
  }

  async function applyNotification(trx: Trx, xml: string, document: string): Promise<number> {
    let n = 0;
    for (const r of readNotification(xml).reports) {
      for (const e of r.entries) {
        if (e.status !== "BOOK") continue;
        // An entry without transaction details stands for one transaction of its own amount.
        const details: EntryDetail[] = e.details.length > 0 ? e.details : [{ amount: e.amount, currency: e.currency, debtor: {}, creditor: {}, remittance: { unstructured: [], references: [] } }];
        for (const x of details) {
          const ours = x.endToEndId ? await trx.selectFrom("sepa_transfers").select(["transaction_id", "state"]).where("end_to_end_id", "=", x.endToEndId).executeTakeFirst() : undefined;
          const isReturn = e.direction === "CREDIT" && (x.returnReason !== undefined || e.bankTransactionCode?.subFamily === "RRTN");
          if (ours && e.direction === "DEBIT") {
            const moved = await move(trx, ours, ["FILED", "SENT"], "COMPLETED");
            if (moved) (await report(trx, moved.platform_id, ours.transaction_id, "COMPLETED"), n++);
          } else if (ours && isReturn) {
            const moved = await move(trx, ours, ["FILED", "SENT", "COMPLETED"], "RETURNED");
            if (moved) (await report(trx, moved.platform_id, ours.transaction_id, "RETURNED", x.returnReason?.code ?? x.returnReason?.proprietary ?? "RETURNED"), n++);
          } else if (e.direction === "CREDIT" && !ours) {
            await trx
              .insertInto("sepa_received_credits")
              .values({
                id: randomUUID(),
                document,
                amount: x.amount ?? e.amount,
                currency: x.currency ?? e.currency,
                debtor_name: x.debtor.name ?? null,
                debtor_iban: x.debtor.iban ?? null,
                reference: x.remittance.references[0] ?? x.remittance.unstructured[0] ?? null,
                booking_date: e.bookingDate ?? null,
                received_at: d.clock.now(),
              })
              .execute();
          }
        }
      }
    }
    await reportCredits(trx, readNotification(xml));
    return n;
  }

  /**
   * Every booked credit of a camt.054 or camt.053 that is neither ours coming back (a return) nor
   * a reversal becomes an INCOMING_CREDIT notice, once per bank entry id: the same credit in a
   * notification and in the day's statement is reported once (connector_notices).
   */
  async function reportCredits(trx: Trx, doc: BankToCustomerDocument): Promise<void> {
    if (!d.notices) return;
    for (const n of incomingCreditNotices(doc)) {
      const ours = n.endToEndId ? await trx.selectFrom("sepa_transfers").select("transaction_id").where("end_to_end_id", "=", n.endToEndId).executeTakeFirst() : undefined;
      if (ours) continue;
      await d.notices.report(trx as Transaction<any>, n.notice);
    }
  }
}

const usable = (v: string | undefined): v is string => !!v && v.trim() !== "" && v.trim().toUpperCase() !== "NOTPROVIDED";

/**
 * The INCOMING_CREDIT notices of a camt.054 or camt.053 (pure: what the document says): booked,
 * non-reversal credit entries that are no return, one per transaction detail (an entry without
 * details stands for one credit of its amount). The bank's id of a credit is the detail's account
 * servicer reference, else the entry's (with the detail's place when it has several), else the
 * end-to-end id; a credit with none of them is skipped with nothing to dedupe it on (never seen in
 * the fixtures). Remittance: end-to-end id, structured references and unstructured lines.
 */
export function incomingCreditNotices(doc: BankToCustomerDocument): { notice: IncomingCreditNotice; endToEndId?: string }[] {
  const out: { notice: IncomingCreditNotice; endToEndId?: string }[] = [];
  for (const r of doc.reports) {
    for (const e of r.entries) {
      if (e.status !== "BOOK" || e.direction !== "CREDIT" || e.reversal) continue;
      if (e.bankTransactionCode?.subFamily === "RRTN") continue;
      const details: EntryDetail[] = e.details.length > 0 ? e.details : [{ amount: e.amount, currency: e.currency, debtor: {}, creditor: {}, remittance: { unstructured: [], references: [] } }];
      details.forEach((x, i) => {
        if (x.returnReason || (x.direction && x.direction !== "CREDIT")) return;
        const id = usable(x.accountServicerReference)
          ? x.accountServicerReference
          : usable(e.accountServicerReference)
            ? details.length > 1 ? `${e.accountServicerReference}/${i + 1}` : e.accountServicerReference
            : usable(x.endToEndId) ? `e2e:${x.endToEndId}` : undefined;
        if (!id) return;
        const date = (e.valueDate ?? e.bookingDate ?? "").slice(0, 10);
        const amount = x.amount ?? e.amount;
        if (amount <= 0n) return;
        const reference = [usable(x.endToEndId) ? x.endToEndId : "", ...x.remittance.references, ...x.remittance.unstructured].map((v) => v.trim()).filter(Boolean).join(" ");
        out.push({
          endToEndId: usable(x.endToEndId) ? x.endToEndId : undefined,
          notice: {
            kind: "INCOMING_CREDIT",
            bankEntryId: id,
            at: /^\d{4}-\d{2}-\d{2}$/.test(date) ? new Date(`${date}T00:00:00Z`) : new Date(0),
            amount,
            currency: x.currency ?? e.currency,
            paymentRail: "SEPA",
            creditedAccount: r.account.iban ?? r.account.other ?? x.creditor.iban ?? "",
            reference,
            senderName: x.debtor.name ?? "",
            senderAccount: x.debtor.iban,
            valueDate: /^\d{4}-\d{2}-\d{2}$/.test(date) ? date : "",
          },
        });
      });
    }
  }
  return out;
}

/** The SEPA connector (docs/connectors.md): payouts in EUR as pain.001 files per cut-off window. */
export const sepaConnector = defineConnector({
  name: SEPA_CONNECTOR,
  schema: SEPA_SCHEMA,
  migrationsDir: SEPA_MIGRATIONS_DIR,
  config: sepaConfigSchema,
  build(ctx) {
    const work = sepaWork({ db: ctx.db as Db, clock: ctx.clock, log: ctx.log, outcomes: ctx.outcomes, notices: ctx.notices, statements: ctx.statements, config: ctx.config, drop: sepaDropFromConfig(ctx.config) });
    const filer = pollingWorker({ name: "sepa-files", pollMs: ctx.config.SEPA_POLL_MS, log: ctx.log, pass: async () => ({ built: await work.file(), uploaded: await work.upload() }) });
    const reader = pollingWorker({ name: "sepa-reports", pollMs: ctx.config.SEPA_POLL_MS, log: ctx.log, pass: () => work.read() });
    // RETURN instructions (contract 1.3) are admitted as transfers back to the sender (admission.ts).
    return { onInstruction: (i, trx) => work.accept(i, trx as unknown as Trx), returns: true, workers: [filer, reader] };
  },
});

export type { Logger };
