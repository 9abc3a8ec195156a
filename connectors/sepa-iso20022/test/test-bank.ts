import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readCreditTransferFile, writeNotification, writeStatusReport, type TransactionVerdict } from "./bank-simulator.js";

/**
 * A bank behind a file drop (a directory, or the folders the SFTP test server serves), for tests: it takes the pain.001 files the connector
 * uploads to inbox/ (read with the simulator's own parser), and answers in outbox/ with a pain.002
 * per file and, for creditors it is told to, a camt.054 return after settling. Which creditor IBAN
 * gets which fate is the test's choice.
 */
export function testBank(fates: Record<string, "settle" | { reject: string } | { settleThenReturn: string }>, opts: { root?: string } = {}) {
  // Its folders: a scratch directory (the directory drop), or the SFTP test server's root (test/infra/sftp/sshd.ts).
  const root = opts.root ?? mkdtempSync(join(tmpdir(), "corridor-sepa-bank-"));
  const answered = new Set<string>();
  let n = 0;
  const received: ReturnType<typeof readCreditTransferFile>[] = [];
  return {
    root,
    received,
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
        writeFileSync(join(root, "outbox", `${seq}-1-pain002-${name}`), writeStatusReport({ messageId: `BANK-STS-${seq}`, createdAt: now, original: file, verdicts }));
        const returns = file.transfers.filter((t) => {
          const fate = fates[t.creditorIban];
          return typeof fate === "object" && "settleThenReturn" in fate;
        });
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
