import { closeSync, createReadStream, mkdirSync, openSync, writeSync } from "node:fs";
import * as path from "node:path";
import { createGunzip } from "node:zlib";

/**
 * Unpacks a PGlite data folder tarball (`dumpDataDir("gzip")`: ustar, regular files and folders)
 * into `dataDir`, streaming, so that PGlite then finds a database there and starts on it. PGlite's
 * own `loadDataDir` would do the same in memory and keep ~100 MB of buffers alive afterwards.
 * PG_VERSION, which is how PGlite (and Postgres) recognise a data folder, is written last: a start
 * interrupted while unpacking leaves no database, and the next start unpacks again over it.
 */
export async function unpackPgliteTemplate(tarball: string, dataDir: string): Promise<void> {
  const root = path.resolve(dataDir);
  const target = (name: string) => {
    const rel = path.normalize(name.replace(/^\/+/, ""));
    if (rel === "" || rel === "." || rel.startsWith("..") || path.isAbsolute(rel)) throw new Error(`PGlite template ${tarball}: unexpected entry ${JSON.stringify(name)}`);
    return path.join(root, rel);
  };
  mkdirSync(root, { recursive: true });

  let pending: Buffer<ArrayBufferLike> = Buffer.alloc(0);
  let fd: number | undefined; // the file being written
  let left = 0; // its bytes still to come
  let skip = 0; // padding to the next 512-byte block
  let versionFile: { at: string; data: Buffer[] } | undefined;
  let current: { at: string; data: Buffer[] } | undefined; // PG_VERSION, kept for last
  let ended = false;

  const header = (block: Buffer) => {
    if (block.every((b) => b === 0)) {
      ended = true;
      return;
    }
    const text = (from: number, len: number) => block.subarray(from, from + len).toString("utf8").replace(/\0.*$/s, "");
    if (text(257, 5) !== "ustar") throw new Error(`PGlite template ${tarball}: not a ustar archive`);
    const prefix = text(345, 155);
    const name = prefix ? `${prefix}/${text(0, 100)}` : text(0, 100);
    const size = parseInt(text(124, 12).trim() || "0", 8);
    const type = String.fromCharCode(block[156] ?? 0);
    const at = target(name);
    if (type === "5") {
      mkdirSync(at, { recursive: true });
      return;
    }
    if (type !== "0" && type !== "\0") throw new Error(`PGlite template ${tarball}: entry ${name} of type ${JSON.stringify(type)}`);
    mkdirSync(path.dirname(at), { recursive: true });
    left = size;
    skip = (512 - (size % 512)) % 512;
    if (path.relative(root, at) === "PG_VERSION") current = versionFile = { at, data: [] };
    else fd = openSync(at, "w", 0o600);
    if (left === 0) finishFile();
  };
  const finishFile = () => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    current = undefined;
  };

  for await (const chunk of createReadStream(tarball).pipe(createGunzip()) as AsyncIterable<Buffer>) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let at = 0;
    while (!ended) {
      if (left > 0) {
        const take = Math.min(left, pending.length - at);
        if (take === 0) break;
        const piece = pending.subarray(at, at + take);
        if (current) current.data.push(Buffer.from(piece));
        else writeSync(fd!, piece);
        at += take;
        left -= take;
        if (left === 0) finishFile();
      } else if (skip > 0) {
        const take = Math.min(skip, pending.length - at);
        if (take === 0) break;
        at += take;
        skip -= take;
      } else {
        if (pending.length - at < 512) break;
        header(pending.subarray(at, at + 512));
        at += 512;
      }
    }
    pending = pending.subarray(at);
    if (ended) break;
  }
  if (!ended || left > 0) throw new Error(`PGlite template ${tarball} ends early`);
  if (!versionFile) throw new Error(`PGlite template ${tarball} holds no PG_VERSION`);
  const version = openSync(versionFile.at, "w", 0o600);
  try {
    writeSync(version, Buffer.concat(versionFile.data));
  } finally {
    closeSync(version);
  }
}
