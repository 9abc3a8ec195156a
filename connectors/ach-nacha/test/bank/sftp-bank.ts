// The bank behind the SFTP server in tests: it reads every file Corridor uploads to its inbox with
// node-nacha (bank/simulator.ts), and answers through its outbox as a test scenario tells it, by
// the receiver's account number: "…0003" is returned R03 (no account) at once, "…0001" is returned
// R01 (insufficient funds) after the entry settled, "…0009" gets a C01 notification of change.
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bankReadsUpload, bankWritesIncomingCreditFile, bankWritesReturnFile, type BankEntry, type BankReturn, type IncomingCredit } from "./simulator.js";

export interface SftpBank {
  /** Reads new uploads and writes whatever answers are due; `settled(trace)` says whether an entry completed on Corridor's side. */
  step(settled: (trace: string) => Promise<boolean>, date: string): Promise<{ wrote: boolean }>;
  /** Every entry the bank accepted, by trace number. */
  readonly accepted: Map<string, BankEntry & { file: string }>;
  /** Files the bank received, in order. */
  readonly received: string[];
  /** True while the bank's outbox holds a file Corridor has not archived. */
  outboxBusy(): boolean;
  /** Puts a file of credits received for the operator's account in the bank's outbox (deposits). */
  sendCredits(credits: readonly IncomingCredit[], date: string): string;
}

export function sftpBank(opts: { root: string; bankRouting: string; odfiRouting: string }): SftpBank {
  const inbox = join(opts.root, "inbox");
  const outbox = join(opts.root, "outbox");
  const accepted = new Map<string, BankEntry & { file: string }>();
  const received: string[] = [];
  const pendingAfterSettlement = new Map<string, BankEntry>();
  let n = 0;
  let creditTraces = 5_000_000;
  const publish = (name: string, text: string) => {
    // Written under a dot-name and renamed, as a bank's own software does.
    writeFileSync(join(outbox, `.${name}`), text);
    renameSync(join(outbox, `.${name}`), join(outbox, name));
  };
  return {
    accepted,
    received,
    outboxBusy: () => readdirSync(outbox).some((f) => !f.startsWith(".")),
    sendCredits(credits, date) {
      const text = bankWritesIncomingCreditFile({ bankRouting: opts.bankRouting, odfiRouting: opts.odfiRouting, date, credits, firstTrace: creditTraces });
      creditTraces += credits.length;
      n += 1;
      const name = `CREDITS-${date}-${String(n).padStart(3, "0")}.ach`;
      publish(name, text);
      return name;
    },
    async step(settled, date) {
      const items: BankReturn[] = [];
      for (const name of readdirSync(inbox).filter((f) => !f.startsWith(".")).sort()) {
        // The bank collects each file from its inbox (into a folder of its own) and reads it.
        const text = readFileSync(join(inbox, name), "latin1");
        const entries = bankReadsUpload(text);
        received.push(name);
        renameSync(join(inbox, name), join(opts.root, `received-${name}`));
        for (const e of entries) {
          if (accepted.has(e.traceNumber)) throw new Error(`the bank received trace ${e.traceNumber} twice`);
          accepted.set(e.traceNumber, { ...e, file: name });
          if (e.accountNumber.endsWith("0003")) items.push({ entry: e, code: "R03" });
          if (e.accountNumber.endsWith("0009")) items.push({ entry: e, code: "C01", correctedData: "99990000" });
          if (e.accountNumber.endsWith("0001")) pendingAfterSettlement.set(e.traceNumber, e);
        }
      }
      for (const [trace, e] of pendingAfterSettlement) {
        if (await settled(trace)) {
          items.push({ entry: e, code: "R01" });
          pendingAfterSettlement.delete(trace);
        }
      }
      if (items.length === 0) return { wrote: false };
      const text = bankWritesReturnFile({ bankRouting: opts.bankRouting, odfiRouting: opts.odfiRouting, date, items });
      n += 1;
      const name = `RETURNS-${date}-${String(n).padStart(3, "0")}.ach`;
      // Written under a dot-name and renamed, as a bank's own software does.
      writeFileSync(join(outbox, `.${name}`), text);
      renameSync(join(outbox, `.${name}`), join(outbox, name));
      if (!existsSync(join(outbox, name))) throw new Error("bank could not write its outbox");
      return { wrote: true };
    },
  };
}
