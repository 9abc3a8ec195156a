import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readCreditTransferFile, writeNotification, writeStatement, writeStatusReport, type BankEntry, type TransactionVerdict } from "./bank-simulator.js";

/** Cents of a decimal amount as the files write it ("12.34"), in the bank's own arithmetic. */
const cents = (v: string) => {
  const [whole, frac = ""] = v.split(".");
  return BigInt(whole!) * 100n + BigInt((frac + "00").slice(0, 2));
};
const decimal = (c: bigint) => `${c < 0n ? "-" : ""}${(c < 0n ? -c : c) / 100n}.${String((c < 0n ? -c : c) % 100n).padStart(2, "0")}`;

/**
 * A bank behind a file drop (a directory, or the folders the SFTP test server serves), for tests: it takes the pain.001 files the connector
 * uploads to inbox/ (read with the simulator's own parser), and answers in outbox/ with a pain.002
 * per file and, for creditors it is told to, a camt.054 return after settling. Which creditor IBAN
 * gets which fate is the test's choice. At the end of a day it writes a camt.053 statement of the
 * operator's account with what it booked since the last one (`statement`).
 */
export function testBank(fates: Record<string, "settle" | { reject: string } | { settleThenReturn: string }>, opts: { root?: string } = {}) {
  // Its folders: a scratch directory (the directory drop), or the SFTP test server's root (test/infra/sftp/sshd.ts).
  const root = opts.root ?? mkdtempSync(join(tmpdir(), "corridor-sepa-bank-"));
  const answered = new Set<string>();
  let n = 0;
  const received: ReturnType<typeof readCreditTransferFile>[] = [];
  /** Bookings not yet on a statement, and the account's booked balance in cents. */
  const unstated: BankEntry[] = [];
  let balance = 100_000_000n;
  let statements = 0;
  return {
    root,
    received,
    /**
     * Writes the day's camt.053 into outbox/ with every booking since the last statement. A test
     * may leave bookings off (`omit`, by end-to-end id) or book another amount (`amounts`) to make a
     * statement that disagrees with the connector's payments. Returns the file's name.
     */
    statement(o: { date: string; omit?: string[]; amounts?: Record<string, string> }): string {
      const n = ++statements;
      const entries = unstated.splice(0).filter((e) => !o.omit?.includes(e.endToEndId ?? "")).map((e) => ({ ...e, amount: o.amounts?.[e.endToEndId ?? ""] ?? e.amount }));
      const opening = balance;
      for (const e of entries) balance += e.direction === "CRDT" ? cents(e.amount) : -cents(e.amount);
      const name = `${String(n).padStart(4, "0")}-camt053-${o.date}.xml`;
      writeFileSync(join(root, "outbox", name), writeStatement({ messageId: `BANK-STMT-${o.date}-${n}`, createdAt: `${o.date}T22:00:00`, iban: "DE89370400440532013000", date: o.date, opening: decimal(opening), closing: decimal(balance), entries }));
      return name;
    },
    /** Answers every file in the inbox it has not answered yet; returns how many. */
    answer(now = "2026-01-06T08:00:00"): number {
      let count = 0;
      for (const name of readdirSync(join(root, "inbox")).filter((f) => !f.startsWith(".")).sort()) {
        if (answered.has(name)) continue;
        answered.add(name);
        const file = readCreditTransferFile(readFileSync(join(root, "inbox", name), "utf8"));
        received.push(file);
        const verdicts: TransactionVerdict[] = file.transfers.map((t) => {
          const fate = fates[t.creditorIban] ?? "settle";
          return typeof fate === "object" && "reject" in fate ? { instructionId: t.instructionId, endToEndId: t.endToEndId, status: "RJCT", reason: fate.reject } : { instructionId: t.instructionId, endToEndId: t.endToEndId, status: "ACSC" };
        });
        const seq = String(++n).padStart(4, "0");
        file.transfers.forEach((t, i) => {
          if (verdicts[i]!.status !== "ACSC") return;
          unstated.push({ amount: t.amount, direction: "DBIT", bookingDate: now.slice(0, 10), accountServicerReference: `BOOK-${seq}-${i}`, family: "ICDT", subFamily: "ESCT", endToEndId: t.endToEndId, instructionId: t.instructionId, creditor: { name: t.creditorName, iban: t.creditorIban }, remittance: t.remittance });
        });
        writeFileSync(join(root, "outbox", `${seq}-1-pain002-${name}`), writeStatusReport({ messageId: `BANK-STS-${seq}`, createdAt: now, original: file, verdicts }));
        const returns = file.transfers.filter((t) => {
          const fate = fates[t.creditorIban];
          return typeof fate === "object" && "settleThenReturn" in fate;
        });
        returns.forEach((t, i) =>
          unstated.push({ amount: t.amount, direction: "CRDT", bookingDate: now.slice(0, 10), accountServicerReference: `RET-${seq}-${i}`, family: "ICDT", subFamily: "RRTN", endToEndId: t.endToEndId, returnReason: (fates[t.creditorIban] as { settleThenReturn: string }).settleThenReturn }),
        );
        if (returns.length > 0) {
          writeFileSync(
            join(root, "outbox", `${seq}-2-camt054-${name}`),
            writeNotification({
              messageId: `BANK-NTF-${seq}`,
              createdAt: now,
              iban: "DE89370400440532013000",
              entries: returns.map((t, i) => ({
                amount: t.amount,
                direction: "CRDT" as const,
                bookingDate: now.slice(0, 10),
                accountServicerReference: `RET-${seq}-${i}`,
                family: "ICDT",
                subFamily: "RRTN",
                endToEndId: t.endToEndId,
                returnReason: (fates[t.creditorIban] as { settleThenReturn: string }).settleThenReturn,
              })),
            }),
          );
        }
        count++;
      }
      return count;
    },
  };
}
