import { createHash } from "node:crypto";
import { mkdir, readFile, readdir, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The bank's file drop as the connector uses it: an inbox it uploads payment files to, an outbox
 * the bank leaves its reports in, and an archive for reports already read. SFTP in production; a
 * directory for a bank that mounts its drop (and for tests).
 */
export interface BankFileDrop {
  /** The file's content if a file of that name is in the inbox, else undefined. */
  inboxContent(name: string): Promise<Buffer | undefined>;
  /** Uploads under a temporary name, then renames: the bank never sees half a file. */
  upload(name: string, content: Buffer): Promise<void>;
  /** Names of the reports waiting in the outbox, oldest name first. */
  reports(): Promise<string[]>;
  read(name: string): Promise<Buffer>;
  /** Moves a report that has been read out of the outbox. */
  archive(name: string): Promise<void>;
  close?(): Promise<void>;
}

export const sha256 = (content: Buffer | string) => createHash("sha256").update(content).digest("hex");

/** A file drop on a local directory tree: `<root>/inbox`, `<root>/outbox`, `<root>/archive`. */
export function directoryDrop(root: string, dirs = { inbox: "inbox", outbox: "outbox", archive: "archive" }): BankFileDrop {
  const path = (dir: keyof typeof dirs, name = "") => join(root, dirs[dir], name);
  const ready = Promise.all(Object.keys(dirs).map((d) => mkdir(path(d as keyof typeof dirs), { recursive: true })));
  return {
    async inboxContent(name) {
      await ready;
      try {
        return await readFile(path("inbox", name));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw err;
      }
    },
    async upload(name, content) {
      await ready;
      const part = path("inbox", `.${name}.part`);
      await writeFile(part, content);
      await rename(part, path("inbox", name));
    },
    async reports() {
      await ready;
      const names = await readdir(path("outbox"));
      const files: string[] = [];
      for (const n of names) if (!n.startsWith(".") && (await stat(path("outbox", n))).isFile()) files.push(n);
      return files.sort();
    },
    read: async (name) => readFile(path("outbox", name)),
    async archive(name) {
      await rename(path("outbox", name), path("archive", name));
    },
  };
}
