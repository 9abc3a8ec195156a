import { existsSync, readdirSync, readFileSync, statSync, writeFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sftpServerRequired, sftpServerUnavailableReason, startSftpServer, type SftpTestServer } from "../../../test/infra/sftp/sshd.js";
import { SftpTransport, SftpTransportError, hostKeyFingerprint, type SftpSettings } from "../src/bank-files/index.js";

// The bank's server is Debian's OpenSSH (test/infra/sftp/sshd.ts), installed when missing.
const unavailable = sftpServerUnavailableReason();
const skip = unavailable !== null && !sftpServerRequired;

describe.skipIf(skip)(`SFTP transport against OpenSSH's sshd (internal-sftp)${unavailable ? ` — ${sftpServerRequired ? "cannot run" : "skipped"}: ${unavailable}` : ""}`, () => {
  let server: SftpTestServer;
  let settings: SftpSettings;

  beforeAll(async () => {
    server = await startSftpServer();
    settings = {
      host: server.host,
      port: server.port,
      username: server.username,
      privateKey: server.privateKey,
      hostKey: server.hostPublicKey,
      inboxDir: server.remotePath("inbox"),
      outboxDir: server.remotePath("outbox"),
      archiveDir: server.remotePath("archive"),
      timeoutMs: 10_000,
    };
  });
  afterAll(async () => server?.stop());

  const bankFolder = (f: string) => join(server.localRoot, f);

  it("uploads through a temporary name and a rename: the bank's inbox holds exactly the bytes, and no partial file", async () => {
    const t = new SftpTransport(settings);
    const content = Buffer.from("101 file one\n");
    expect(await t.upload("CORRIDOR-20261127-1000-A.ach", content)).toBe("uploaded");
    expect(readFileSync(join(bankFolder("inbox"), "CORRIDOR-20261127-1000-A.ach"))).toEqual(content);
    expect(readdirSync(bankFolder("inbox")).filter((n) => n.endsWith(".part"))).toEqual([]);
  });

  it("a re-upload of a file already in the inbox (a crash after the rename) is detected and writes nothing; other bytes under that name are a conflict, never overwritten", async () => {
    const t = new SftpTransport(settings);
    const name = "CORRIDOR-20261127-1400-B.ach";
    const content = Buffer.from("101 file two\n");
    expect(await t.upload(name, content)).toBe("uploaded");
    const path = join(bankFolder("inbox"), name);
    utimesSync(path, new Date("2026-01-01T00:00:00Z"), new Date("2026-01-01T00:00:00Z"));
    expect(await t.upload(name, content)).toBe("already-present");
    expect(statSync(path).mtime.toISOString()).toBe("2026-01-01T00:00:00.000Z");
    const err = await t.upload(name, Buffer.from("101 something else\n")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SftpTransportError);
    expect(err).toMatchObject({ kind: "conflict" });
    expect(readFileSync(path)).toEqual(content);
  });

  it("replaces the partial file a crashed upload left under the temporary name", async () => {
    const t = new SftpTransport(settings);
    const name = "CORRIDOR-20261127-1645-C.ach";
    writeFileSync(join(bankFolder("inbox"), `.${name}.part`), "half a fi");
    expect(await t.upload(name, Buffer.from("101 whole file\n"))).toBe("uploaded");
    expect(readFileSync(join(bankFolder("inbox"), name), "utf8")).toBe("101 whole file\n");
    expect(existsSync(join(bankFolder("inbox"), `.${name}.part`))).toBe(false);
  });

  it("lists the bank's outbox oldest first, downloads a file, and archives it (a second archive of it is a no-op)", async () => {
    writeFileSync(join(bankFolder("outbox"), "RET-2.ach"), "second");
    writeFileSync(join(bankFolder("outbox"), "RET-1.ach"), "first");
    writeFileSync(join(bankFolder("outbox"), ".incoming.tmp"), "being written by the bank");
    utimesSync(join(bankFolder("outbox"), "RET-1.ach"), new Date("2026-11-27T10:00:00Z"), new Date("2026-11-27T10:00:00Z"));
    utimesSync(join(bankFolder("outbox"), "RET-2.ach"), new Date("2026-11-27T11:00:00Z"), new Date("2026-11-27T11:00:00Z"));
    const t = new SftpTransport(settings);
    const listed = await t.listOutbox();
    expect(listed.map((f) => [f.name, f.size])).toEqual([["RET-1.ach", 5], ["RET-2.ach", 6]]);
    expect((await t.download("RET-1.ach")).toString()).toBe("first");
    await t.archive("RET-1.ach");
    await t.archive("RET-1.ach");
    expect(readdirSync(bankFolder("outbox")).sort()).toEqual([".incoming.tmp", "RET-2.ach"]);
    expect(readFileSync(join(bankFolder("archive"), "RET-1.ach"), "utf8")).toBe("first");
  });

  it("refuses a server whose host key is not the pinned one, before sending credentials", async () => {
    const other = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBl4f3o4b0r3Cc0mWqJ8n2yU2rS7Vx3tq9y1Jm0QxqZ1 someone-else";
    const err = await new SftpTransport({ ...settings, hostKey: other }).listOutbox().catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "host-key" });
  });

  it("accepts the host key pinned by its SHA256 fingerprint", async () => {
    const blob = Buffer.from(server.hostPublicKey.split(" ")[1]!, "base64");
    await new SftpTransport({ ...settings, hostKey: hostKeyFingerprint(blob) }).listOutbox();
  });

  it("a refused login names host, port and user but never the credential", async () => {
    const wrongKey = server.strangerKey();
    const err = (await new SftpTransport({ ...settings, privateKey: wrongKey, password: "hunter2-secret" }).listOutbox().catch((e: unknown) => e)) as SftpTransportError;
    expect(err).toMatchObject({ kind: "connect" });
    expect(err.message).toContain(`${server.host}:${server.port}`);
    const everything = JSON.stringify({ ...err, text: err.message, stack: err.stack });
    expect(everything).not.toContain("hunter2-secret");
    expect(everything).not.toContain("PRIVATE KEY");
    expect(everything).not.toContain(wrongKey.split("\n")[1]!);
  });
});
