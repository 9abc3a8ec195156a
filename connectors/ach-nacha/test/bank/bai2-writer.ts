// The test bank's BAI2 statements. Written here, field by field, sharing nothing with Corridor's
// reader (src/bai2/reader.ts): its own record layout, its own totals and counts, so a statement
// of the bank passes only if two separate readings of the format agree.

export interface BankBai2Detail {
  /** 165 "preauthorized ACH credit", 455 "preauthorized ACH debit", 475 "check paid", ... */
  typeCode: string;
  /** Cents. */
  cents: bigint;
  bankReference: string;
  customerReference: string;
  text: string;
  /** A value date (YYMMDD) to write as funds type V. */
  valueDate?: string;
}

export interface BankBai2Account {
  accountNumber: string;
  openingLedger: bigint;
  closingLedger: bigint;
  details: BankBai2Detail[];
}

export interface BankBai2File {
  sender: string;
  receiver: string;
  fileId: string;
  /** "YYYY-MM-DD". */
  asOf: string;
  createdAt: Date;
  /** Default "2" (final previous-day). */
  modifier?: string;
  /** Default "1" (update). */
  groupStatus?: string;
  accounts: BankBai2Account[];
  /** Cut text over several lines with 88 continuations at this width (bank style), if set. */
  wrapAt?: number;
  /** For files meant to be refused: change a trailer's numbers after they are computed. */
  tamper?: (records: string[][]) => void;
}

const yymmdd = (iso: string) => iso.slice(2, 4) + iso.slice(5, 7) + iso.slice(8, 10);

/** The statement file's text (LF line ends). */
export function writeBankBai2(f: BankBai2File): string {
  const created = f.createdAt.toISOString();
  const records: string[][] = [];
  records.push(["01", f.sender, f.receiver, yymmdd(created.slice(0, 10)), created.slice(11, 13) + created.slice(14, 16), f.fileId, "", "", "2"]);
  records.push(["02", f.receiver, f.sender, f.groupStatus ?? "1", yymmdd(f.asOf), "2359", "USD", f.modifier ?? "2"]);
  let groupSum = 0n;
  const groupStart = records.length - 1;
  for (const a of f.accounts) {
    const start = records.length;
    let sum = a.openingLedger + a.closingLedger;
    const credits = a.details.filter((d) => Number(d.typeCode) < 400).reduce((s, d) => s + d.cents, 0n);
    const debits = a.details.filter((d) => Number(d.typeCode) >= 400).reduce((s, d) => s + d.cents, 0n);
    sum += credits + debits;
    records.push(["03", a.accountNumber, "USD", "010", String(a.openingLedger), "", "", "015", String(a.closingLedger), "", "", "100", String(credits), String(a.details.filter((d) => Number(d.typeCode) < 400).length), "", "400", String(debits), String(a.details.filter((d) => Number(d.typeCode) >= 400).length), ""]);
    for (const d of a.details) {
      sum += d.cents;
      const funds = d.valueDate ? ["V", d.valueDate, "0000"] : ["0"];
      records.push(["16", d.typeCode, String(d.cents), ...funds, d.bankReference, d.customerReference, d.text]);
    }
    records.push(["49", String(sum), ""]); // record count filled in below
    groupSum += sum;
    // 03 .. 49, counted once the lines are known (continuations count).
    (records[records.length - 1] as string[] & { start?: number }).start = start;
  }
  records.push(["98", String(groupSum), String(f.accounts.length), ""]);
  records.push(["99", String(groupSum), "1", ""]);
  // Lines: a 16's text is not ended by "/", every other record is.
  const lines: string[][] = records.map((r) => {
    const text = r[0] === "16" ? r.join(",") : `${r.join(",")}/`;
    if (!f.wrapAt || text.length <= f.wrapAt) return [text];
    const out = [text.slice(0, f.wrapAt)];
    // An 88 continues at a field boundary: cut after the last comma that fits.
    let rest = text.slice(f.wrapAt);
    const cut = out[0]!.lastIndexOf(",");
    if (cut > 3) {
      rest = out[0]!.slice(cut + 1) + rest;
      out[0] = out[0]!.slice(0, cut);
    }
    out.push(`88,${rest}`);
    return out;
  });
  const lineCount = (from: number, to: number) => lines.slice(from, to + 1).reduce((n, l) => n + l.length, 0);
  records.forEach((r, i) => {
    if (r[0] === "49") r[2] = String(lineCount((r as string[] & { start?: number }).start!, i));
    if (r[0] === "98") r[3] = String(lineCount(groupStart, i));
    if (r[0] === "99") r[3] = String(lineCount(0, i));
  });
  f.tamper?.(records);
  const final = records.map((r, i) => {
    const text = r[0] === "16" ? r.join(",") : `${r.join(",")}/`;
    return lines[i]!.length === 1 ? [text] : lines[i]!; // trailers never wrap
  });
  return final.flat().join("\n") + "\n";
}
