import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BankFileDropError, directoryDrop } from "../src/bank-files/index.js";

// The directory drop keeps the SFTP drop's guarantees (sftp-drop.test.ts runs the same cases over sshd).
const roots: string[] = [];
const fresh = () => {
  const root = mkdtempSync(join(tmpdir(), "corridor-drop-"));
  roots.push(root);
  return { root, drop: directoryDrop(root) };
};
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

describe("directory bank file drop", () => {
  it("uploads whole files once: the same bytes again are already-present and not rewritten, other bytes a conflict", async () => {
    const { root, drop } = fresh();
    expect(await drop.upload("F-1.xml", Buffer.from("one"))).toBe("uploaded");
    const path = join(root, "inbox", "F-1.xml");
    utimesSync(path, new Date("2026-01-01T00:00:00Z"), new Date("2026-01-01T00:00:00Z"));
    expect(await drop.upload("F-1.xml", Buffer.from("one"))).toBe("already-present");
    expect(statSync(path).mtime.toISOString()).toBe("2026-01-01T00:00:00.000Z");
    const err = await drop.upload("F-1.xml", Buffer.from("other")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BankFileDropError);
    expect(err).toMatchObject({ kind: "conflict" });
    expect(readFileSync(path, "utf8")).toBe("one");
    expect(readdirSync(join(root, "inbox"))).toEqual(["F-1.xml"]);
    expect((await drop.listInbox()).map((f) => f.name)).toEqual(["F-1.xml"]);
  });

  it("replaces a crashed attempt's partial file", async () => {
    const { root, drop } = fresh();
    await drop.listInbox();
    writeFileSync(join(root, "inbox", ".F-2.xml.part"), "half");
    expect(await drop.upload("F-2.xml", Buffer.from("whole"))).toBe("uploaded");
    expect(readFileSync(join(root, "inbox", "F-2.xml"), "utf8")).toBe("whole");
    expect(existsSync(join(root, "inbox", ".F-2.xml.part"))).toBe(false);
  });

  it("lists the outbox oldest first without dot-files, downloads, archives (twice is a no-op), refuses path names", async () => {
    const { root, drop } = fresh();
    await drop.listOutbox();
    writeFileSync(join(root, "outbox", "B.xml"), "second");
    writeFileSync(join(root, "outbox", "A.xml"), "first");
    writeFileSync(join(root, "outbox", ".writing"), "x");
    utimesSync(join(root, "outbox", "B.xml"), new Date("2026-11-27T11:00:00Z"), new Date("2026-11-27T11:00:00Z"));
    utimesSync(join(root, "outbox", "A.xml"), new Date("2026-11-27T12:00:00Z"), new Date("2026-11-27T12:00:00Z"));
    expect((await drop.listOutbox()).map((f) => [f.name, f.size])).toEqual([["B.xml", 6], ["A.xml", 5]]);
    expect((await drop.download("A.xml")).toString()).toBe("first");
    await drop.archive("A.xml");
    await drop.archive("A.xml");
    expect(readFileSync(join(root, "archive", "A.xml"), "utf8")).toBe("first");
    await expect(drop.download("../etc/passwd")).rejects.toThrow(/not a plain file name/);
    await expect(drop.archive("NOPE.xml")).rejects.toThrow(/not in the outbox/);
  });
});
