// The bank's file drop over SFTP (ssh2-sftp-client over ssh2): Corridor uploads its payment files
// to the bank's inbox folder and reads what the bank leaves in its outbox folder, then archives each
// file it has processed. The guarantees are the drop's (drop.ts): an upload lands at most once per
// file name, never half (".<name>.part", then a rename that refuses an existing target; the same
// bytes already there are "already-present"; other bytes a conflict, never overwritten).
//
// Credentials (password or private key) are passed to ssh2 and nowhere else: no log line, error
// message or thrown object carries them. The server's host key is pinned (`hostKey`: a public key
// line or a SHA256: fingerprint): a server presenting another key is refused before any credential
// is sent. One connection per operation.
import { createHash, timingSafeEqual } from "node:crypto";
import { posix } from "node:path";
import SftpClient from "ssh2-sftp-client";
import { BankFileDropError, byAgeThenName, checkFileName, type BankFile, type BankFileDrop, type UploadResult } from "./drop.js";

export interface SftpSettings {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  readonly password?: string | undefined;
  readonly privateKey?: string | undefined;
  readonly passphrase?: string | undefined;
  /** The server's public host key ("ssh-ed25519 AAAA…") or its fingerprint ("SHA256:…"). */
  readonly hostKey: string;
  readonly inboxDir: string;
  readonly outboxDir: string;
  readonly archiveDir: string;
  readonly timeoutMs: number;
  /** The setting that pins the host key, named in errors (ACH_SFTP_HOST_KEY, SEPA_SFTP_HOST_KEY). */
  readonly hostKeySetting?: string;
}

/** An SFTP failure; its message names the operation and path, never a credential. */
export class SftpTransportError extends BankFileDropError {
  constructor(operation: string, message: string, kind: "connect" | "host-key" | "conflict" | "io" = "io") {
    super(operation, message, kind, "sftp");
    this.name = "SftpTransportError";
  }
}

function checkName(op: string, name: string): void {
  try {
    checkFileName(op, name, "sftp");
  } catch (e) {
    throw new SftpTransportError(op, (e as Error).message.replace(/^sftp \S+: /, ""));
  }
}

/** The SHA256 fingerprint OpenSSH prints for a host key blob. */
export function hostKeyFingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash("sha256").update(keyBlob).digest("base64").replace(/=+$/, "")}`;
}

function hostKeyMatcher(pinned: string, setting: string): (key: Buffer) => boolean {
  const p = pinned.trim();
  if (p.startsWith("SHA256:")) return (key) => hostKeyFingerprint(key) === p;
  const parts = p.split(/\s+/);
  const blob = Buffer.from(parts.length >= 2 ? parts[1]! : parts[0]!, "base64");
  if (blob.length < 16) throw new SftpTransportError("connect", `${setting} is neither a public key line nor a SHA256: fingerprint`, "host-key");
  return (key) => key.length === blob.length && timingSafeEqual(key, blob);
}

export class SftpTransport implements BankFileDrop {
  private readonly matches: (key: Buffer) => boolean;

  constructor(private readonly settings: SftpSettings) {
    if (!settings.password && !settings.privateKey) throw new SftpTransportError("connect", "neither a password nor a private key is configured", "connect");
    this.matches = hostKeyMatcher(settings.hostKey, settings.hostKeySetting ?? "the pinned host key");
  }

  /** Runs `fn` on a fresh connection and always closes it. */
  private async session<T>(op: string, fn: (c: SftpClient) => Promise<T>): Promise<T> {
    const client = new SftpClient("corridor-bank-files");
    let hostKeyRefused = false;
    const s = this.settings;
    try {
      await client.connect({
        host: s.host,
        port: s.port,
        username: s.username,
        ...(s.privateKey ? { privateKey: s.privateKey.endsWith("\n") ? s.privateKey : `${s.privateKey}\n` } : {}),
        ...(s.passphrase ? { passphrase: s.passphrase } : {}),
        ...(s.password ? { password: s.password } : {}),
        readyTimeout: s.timeoutMs,
        retries: 0,
        hostVerifier: (key: Buffer) => {
          const ok = this.matches(key);
          if (!ok) hostKeyRefused = true;
          return ok;
        },
      });
    } catch (e) {
      await client.end().catch(() => undefined);
      if (hostKeyRefused) throw new SftpTransportError(op, `the server at ${s.host}:${s.port} presented a host key that is not the pinned ${s.hostKeySetting ?? "host key"}`, "host-key");
      throw new SftpTransportError(op, `cannot connect to ${s.host}:${s.port} as ${s.username}: ${safeMessage(e)}`, "connect");
    }
    try {
      return await fn(client);
    } catch (e) {
      if (e instanceof SftpTransportError) throw e;
      throw new SftpTransportError(op, safeMessage(e));
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Uploads `content` to the inbox as `name`, at most once (see the header). */
  async upload(name: string, content: Buffer): Promise<UploadResult> {
    checkName("upload", name);
    const dir = this.settings.inboxDir;
    const target = posix.join(dir, name);
    const temp = posix.join(dir, `.${name}.part`);
    return this.session("upload", async (c) => {
      if (await c.exists(target)) {
        const there = (await c.get(target)) as Buffer;
        if (Buffer.compare(there, content) === 0) return "already-present";
        throw new SftpTransportError("upload", `${target} already exists with other content; not overwritten`, "conflict");
      }
      if (await c.exists(temp)) await c.delete(temp); // a crashed attempt's leftover
      await c.put(content, temp);
      // SFTP v3 rename (what OpenSSH's server does by default) fails when the target exists: two
      // uploaders racing cannot both land a file under one name.
      await c.rename(temp, target);
      return "uploaded";
    });
  }

  /** The files waiting in the bank's outbox, oldest first (dot-files and partial uploads skipped). */
  async listOutbox(): Promise<BankFile[]> {
    return this.session("list", async (c) => {
      const items = await c.list(this.settings.outboxDir);
      return items
        .filter((i) => i.type === "-" && !i.name.startsWith("."))
        .map((i) => ({ name: i.name, size: i.size, modifiedAt: new Date(i.modifyTime) }))
        .sort(byAgeThenName);
    });
  }

  async download(name: string): Promise<Buffer> {
    checkName("download", name);
    return this.session("download", async (c) => (await c.get(posix.join(this.settings.outboxDir, name))) as Buffer);
  }

  /** Moves a processed file from the outbox to the archive folder. Safe to repeat: a file already
   * archived (an earlier attempt moved it) is not an error. */
  async archive(name: string): Promise<void> {
    checkName("archive", name);
    const from = posix.join(this.settings.outboxDir, name);
    const to = posix.join(this.settings.archiveDir, name);
    await this.session("archive", async (c) => {
      const inOutbox = await c.exists(from);
      const inArchive = await c.exists(to);
      if (!inOutbox) {
        if (inArchive) return;
        throw new SftpTransportError("archive", `${from} is not in the outbox`);
      }
      if (inArchive) {
        // The same file name archived before: keep both, the later one with a suffix.
        await c.rename(from, `${to}.${Date.now()}`);
        return;
      }
      await c.rename(from, to);
    });
  }

  /** Files in the inbox (to check what the bank has not yet collected). */
  async listInbox(): Promise<BankFile[]> {
    return this.session("list", async (c) => {
      const items = await c.list(this.settings.inboxDir);
      return items.filter((i) => i.type === "-" && !i.name.startsWith(".")).map((i) => ({ name: i.name, size: i.size, modifiedAt: new Date(i.modifyTime) }));
    });
  }
}

/** An error's message with anything that looks like key material cut out. */
function safeMessage(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.replace(/-----BEGIN[\s\S]*?-----END[^-]*-----/g, "[key]").slice(0, 300);
}
