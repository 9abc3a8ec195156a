import { link, mkdir, readFile, readdir, rename, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { BankFileDropError, byAgeThenName, checkFileName, type BankFile, type BankFileDrop, type UploadResult } from "./drop.js";

export interface DirectoryDropFolders {
  inbox: string;
  outbox: string;
  archive: string;
}

const missing = (err: unknown) => (err as NodeJS.ErrnoException).code === "ENOENT";

/**
 * A bank file drop on a local directory tree (`<root>/inbox`, `<root>/outbox`, `<root>/archive` by
 * default): a bank that mounts its drop, and tests. Same guarantees as the SFTP drop (drop.ts): the
 * final name is made with link(2), which refuses an existing target as SFTP's rename does.
 */
export function directoryDrop(root: string, folders: DirectoryDropFolders = { inbox: "inbox", outbox: "outbox", archive: "archive" }): BankFileDrop {
  const path = (dir: keyof DirectoryDropFolders, name = "") => join(root, folders[dir], name);
  let ready: Promise<unknown> | undefined;
  const made = () => (ready ??= Promise.all((Object.keys(folders) as (keyof DirectoryDropFolders)[]).map((d) => mkdir(path(d), { recursive: true }))));
  const list = async (dir: keyof DirectoryDropFolders): Promise<BankFile[]> => {
    await made();
    const files: BankFile[] = [];
    for (const name of await readdir(path(dir))) {
      if (name.startsWith(".")) continue;
      const s = await stat(path(dir, name)).catch((e: unknown) => (missing(e) ? undefined : Promise.reject(e)));
      if (s?.isFile()) files.push({ name, size: s.size, modifiedAt: s.mtime });
    }
    return files.sort(byAgeThenName);
  };
  const existing = async (p: string) => {
    try {
      return await readFile(p);
    } catch (e) {
      if (missing(e)) return undefined;
      throw e;
    }
  };
  return {
    async upload(name, content): Promise<UploadResult> {
      checkFileName("upload", name);
      await made();
      const target = path("inbox", name);
      const there = await existing(target);
      if (there) {
        if (Buffer.compare(there, content) === 0) return "already-present";
        throw new BankFileDropError("upload", `${target} already exists with other content; not overwritten`, "conflict");
      }
      const part = path("inbox", `.${name}.part`);
      await writeFile(part, content); // replaces a crashed attempt's leftover
      try {
        await link(part, target);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "EEXIST") throw new BankFileDropError("upload", `${target} appeared while uploading; not overwritten`, "conflict");
        throw e;
      } finally {
        await unlink(part).catch(() => undefined);
      }
      return "uploaded";
    },
    listInbox: () => list("inbox"),
    listOutbox: () => list("outbox"),
    async download(name) {
      checkFileName("download", name);
      return readFile(path("outbox", name));
    },
    async archive(name) {
      checkFileName("archive", name);
      await made();
      const from = path("outbox", name);
      const to = path("archive", name);
      const inOutbox = await stat(from).then(() => true, (e: unknown) => (missing(e) ? false : Promise.reject(e)));
      const inArchive = await stat(to).then(() => true, (e: unknown) => (missing(e) ? false : Promise.reject(e)));
      if (!inOutbox) {
        if (inArchive) return;
        throw new BankFileDropError("archive", `${from} is not in the outbox`);
      }
      // The same name archived before: keep both, the later one with a suffix.
      await rename(from, inArchive ? `${to}.${Date.now()}` : to);
    },
  };
}
