import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { AppError, ManualClock, createLogger } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadWalletAuthConfig } from "../src/config.js";
import type { AuthSessionsDatabase } from "../src/data/tables.js";
import { scaTransactOver, totpSealedRowsOver, type ScaDatabase } from "../src/data/sca.js";
import { walletTransactOver } from "../src/data/wallet.js";
import { totpAad } from "../src/domain/sca/sca.js";
import { atRestCipher, walletKeyId, walletKeyring } from "../src/domain/wallet/at-rest.js";
import { walletKeyReencryption } from "../src/domain/wallet/reencrypt.js";
import { SCHEMA, buildAuthSessions } from "../src/server.js";
import { startHarness, type Harness } from "./harness.js";

/**
 * Rotating CORRIDOR_WALLET_ENCRYPTION_KEY (issue 26): rows record the id of the key that sealed
 * them; reads open them under the current or the previous key; the wallet-key-reencrypt worker
 * seals every row again under the current key, after which the previous key can be removed.
 */
const OLD = randomBytes(32);
const NEW = randomBytes(32);
const WRONG = randomBytes(32);
const hex = (k: Uint8Array) => Buffer.from(k).toString("hex");

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { CORRIDOR_WALLET_ENCRYPTION_KEY: hex(OLD) } });
});
afterAll(async () => h?.close());

const db = () => h.db.forSchema<AuthSessionsDatabase>(SCHEMA);
const transact = () => walletTransactOver(db());
const platformId = "Platform:rotation";

/** Wallet keys of `n` accounts sealed under `key` as the service seals them; returns account → plaintext. */
async function sealAccounts(prefix: string, n: number, key: Uint8Array, opts: { legacy?: boolean } = {}) {
  const keyring = walletKeyring(key);
  const plain = new Map<string, Buffer>();
  await transact()(async (store) => {
    for (let i = 0; i < n; i++) {
      const accountId = `InternalAccount:${prefix}-${String(i).padStart(4, "0")}`;
      const secret = randomBytes(32);
      plain.set(accountId, Buffer.from(secret));
      // Before key ids the row held only the ciphertext.
      const sealed = opts.legacy ? { sealed: atRestCipher(key).encrypt(secret, accountId), keyId: null } : keyring.seal(secret, accountId);
      await store.walletKeys.insertIfAbsent(platformId, accountId, sealed, new Date());
    }
  });
  return plain;
}
const rowsOf = async (prefix: string) =>
  db().selectFrom("wallet_keys").select(["account_id", "key_id", "sealed_key"]).where("account_id", "like", `InternalAccount:${prefix}-%`).orderBy("account_id").execute();

describe("SCA TOTP secrets under the wallet encryption key", () => {
  it("are moved to the new key by the same worker (across batches), and count toward what is left", async () => {
    const scaDb = h.db.forSchema<ScaDatabase>(SCHEMA);
    const old = walletKeyring(OLD);
    const secrets = new Map<string, Buffer>();
    await scaTransactOver(scaDb)(async (store) => {
      for (const [p, c] of [["Platform:totp-a", "Customer:1"], ["Platform:totp-a", "Customer:2"], ["Platform:totp-b", "Customer:1"]] as const) {
        const secret = randomBytes(20);
        secrets.set(`${p} ${c}`, secret);
        const { sealed, keyId } = old.seal(secret, totpAad(p, c));
        await store.totp.put({ platformId: p, customerId: c, secretSealed: sealed, keyId, createdAt: new Date(), confirmedAt: null, lastStep: 0, recoveryCodesSha256: [] });
      }
    });
    const rotating = walletKeyring(NEW, OLD);
    const totpRows = totpSealedRowsOver(scaDb);
    // Without the TOTP rows the worker would call the previous key removable while they still need it.
    expect((await walletKeyReencryption({ transact: transact(), keyring: rotating, others: [totpRows] }).status()).rowsByKeyId[walletKeyId(OLD)]).toBeGreaterThanOrEqual(3);
    const pass = await walletKeyReencryption({ transact: transact(), keyring: rotating, batchSize: 2, others: [totpRows] }).pass();
    expect(pass.unreadable).toEqual({});
    expect(pass.left).toBe(0);
    const rows = await scaDb.selectFrom("sca_factors").selectAll().where("platform_id", "like", "Platform:totp-%").execute();
    expect(rows).toHaveLength(3);
    for (const r of rows) {
      expect(r.key_id).toBe(walletKeyId(NEW));
      const opened = walletKeyring(NEW).open(new Uint8Array(r.secret_sealed), totpAad(r.platform_id, r.customer_id), r.key_id);
      expect(Buffer.from(opened).equals(secrets.get(`${r.platform_id} ${r.customer_id}`)!)).toBe(true);
    }
  });
});

describe("wallet encryption key ids", () => {
  it("are the first 8 bytes of SHA-256 of the key, in hex: stable, distinct per key, never the key", () => {
    expect(walletKeyId(OLD)).toMatch(/^[0-9a-f]{16}$/);
    expect(walletKeyId(OLD)).toBe(walletKeyId(Buffer.from(OLD)));
    expect(walletKeyId(OLD)).not.toBe(walletKeyId(NEW));
    expect(hex(OLD)).not.toContain(walletKeyId(OLD));
  });

  it("are stored with every new row", async () => {
    await sealAccounts("new", 2, OLD);
    expect((await rowsOf("new")).map((r) => r.key_id)).toEqual([walletKeyId(OLD), walletKeyId(OLD)]);
  });
});

describe("CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS", () => {
  it("is unset by default, may come from a file (_FILE), and is refused when malformed, equal to the current key, or without a current key", () => {
    expect(loadWalletAuthConfig({}).CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS).toBeUndefined();
    const dir = mkdtempSync(join(tmpdir(), "wallet-key-"));
    try {
      writeFileSync(join(dir, "previous"), `${hex(OLD)}\n`);
      const c = loadWalletAuthConfig({ CORRIDOR_WALLET_ENCRYPTION_KEY: hex(NEW), CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS_FILE: join(dir, "previous") });
      const built = buildAuthSessions({ db: h.db, clock: new ManualClock(), env: { CORRIDOR_WALLET_ENCRYPTION_KEY: hex(NEW), CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS: c.CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS } });
      expect(built.workers.map((w) => w.name)).toContain("wallet-key-reencrypt");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const build = (env: NodeJS.ProcessEnv) => () => buildAuthSessions({ db: h.db, clock: new ManualClock(), env });
    expect(build({ CORRIDOR_WALLET_ENCRYPTION_KEY: hex(NEW), CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS: "abcd" })).toThrow(/CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS must be 32 bytes/);
    expect(build({ CORRIDOR_WALLET_ENCRYPTION_KEY: hex(NEW), CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS: hex(NEW) })).toThrow(/same key/);
    expect(build({ CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS: hex(OLD) })).toThrow(/CORRIDOR_WALLET_ENCRYPTION_KEY is not/);
  });
});

describe("rotating the wallet encryption key", () => {
  it("keeps rows sealed under the old key readable, moves every one to the new key in batches, idempotently; then the old key can go", async () => {
    const plain = new Map([...(await sealAccounts("rot", 230, OLD)), ...(await sealAccounts("rotlegacy", 3, OLD, { legacy: true }))]);
    const before = [...(await rowsOf("rot")), ...(await rowsOf("rotlegacy"))];
    expect(before.filter((r) => r.key_id === null)).toHaveLength(3);

    // During the rotation: the new key current, the old one previous; every row opens.
    const rotating = walletKeyring(NEW, OLD);
    for (const r of before) expect(Buffer.from(rotating.open(new Uint8Array(r.sealed_key), r.account_id, r.key_id)).equals(plain.get(r.account_id)!), r.account_id).toBe(true);
    // The new key alone opens none of them yet.
    const newOnly = walletKeyring(NEW);
    const r0 = before[0]!;
    expect(() => newOnly.open(new Uint8Array(r0.sealed_key), r0.account_id, r0.key_id)).toThrow(AppError);

    const worker = walletKeyReencryption({ transact: transact(), keyring: rotating, batchSize: 50 });
    const first = await worker.pass();
    // Every row of the database that the old key sealed (this file's others too), in batches of 50.
    expect(first.resealed).toBeGreaterThanOrEqual(233);
    expect(first.unreadable).toEqual({});
    expect(first.left).toBe(0);
    expect((await worker.status()).rowsByKeyId).toEqual({ [walletKeyId(NEW)]: expect.any(Number) });

    const after = [...(await rowsOf("rot")), ...(await rowsOf("rotlegacy"))];
    for (const r of after) {
      expect(r.key_id, r.account_id).toBe(walletKeyId(NEW));
      // Sealed again (a fresh IV), not relabelled; the new key alone opens it to the same secret.
      expect(Buffer.from(r.sealed_key).equals(Buffer.from(before.find((b) => b.account_id === r.account_id)!.sealed_key))).toBe(false);
      expect(Buffer.from(newOnly.open(new Uint8Array(r.sealed_key), r.account_id, r.key_id)).equals(plain.get(r.account_id)!)).toBe(true);
    }
    // A second pass finds nothing to do and changes nothing.
    expect(await worker.pass()).toEqual({ resealed: 0, unreadable: {}, left: 0 });
    expect(await rowsOf("rot")).toEqual(after.filter((r) => r.account_id.includes(":rot-")));
  });

  it("a row rewritten meanwhile is not overwritten: reseal applies only to a row still sealed as it was read", async () => {
    await sealAccounts("race", 1, OLD);
    const [row] = await rowsOf("race");
    const rotating = walletKeyring(NEW, OLD);
    const again = rotating.seal(rotating.open(new Uint8Array(row!.sealed_key), row!.account_id, row!.key_id), row!.account_id);
    expect(await transact()((s) => s.walletKeys.reseal(row!.account_id, row!.key_id, again))).toBe(true);
    expect(await transact()((s) => s.walletKeys.reseal(row!.account_id, row!.key_id, again)), "already moved").toBe(false);
  });

  it("refuses clearly, by key id and without key material, a previous key that is not the one the rows were sealed with; nothing changes", async () => {
    const plain = await sealAccounts("wrong", 4, OLD);
    const before = await rowsOf("wrong");
    const wrong = walletKeyring(NEW, WRONG);
    const r = before[0]!;
    let err: unknown;
    try {
      wrong.open(new Uint8Array(r.sealed_key), r.account_id, r.key_id);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("WALLET_ENCRYPTION_NOT_CONFIGURED");
    expect((err as Error).message).toContain(`key id ${walletKeyId(OLD)}`);
    expect((err as Error).message).toContain(`key id ${walletKeyId(WRONG)}`);
    for (const k of [OLD, NEW, WRONG]) expect((err as Error).message).not.toContain(hex(k));

    const pass = await walletKeyReencryption({ transact: transact(), keyring: wrong, batchSize: 3 }).pass();
    expect(pass.resealed).toBe(0);
    expect(pass.unreadable[walletKeyId(OLD)]).toBe(4);
    expect(pass.left).toBeGreaterThanOrEqual(4);
    expect(await rowsOf("wrong")).toEqual(before);
    // With the right previous key they move.
    expect((await walletKeyReencryption({ transact: transact(), keyring: walletKeyring(NEW, OLD) }).pass()).unreadable).toEqual({});
    for (const row of await rowsOf("wrong")) expect(Buffer.from(walletKeyring(NEW).open(new Uint8Array(row.sealed_key), row.account_id, row.key_id)).equals(plain.get(row.account_id)!)).toBe(true);
  });

  it("the service's wallet-key-reencrypt worker does it, reports by key id, says when the previous key can go, and logs no key material", async () => {
    await sealAccounts("svc", 5, OLD);
    const lines: string[] = [];
    const log = createLogger(
      "auth-sessions",
      "trace",
      new Writable({
        write(chunk, _enc, done) {
          lines.push(...chunk.toString().split("\n").filter(Boolean));
          done();
        },
      }),
    );
    const built = buildAuthSessions({ db: h.db, clock: new ManualClock(), log, env: { CORRIDOR_WALLET_ENCRYPTION_KEY: hex(NEW), CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS: hex(OLD) } });
    const worker = built.workers.find((w) => w.name === "wallet-key-reencrypt")!;
    worker.start();
    try {
      await expect.poll(() => lines.some((l) => l.includes("CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS can be removed")), { timeout: 10_000 }).toBe(true);
    } finally {
      await worker.stop();
    }
    for (const row of await rowsOf("svc")) expect(row.key_id).toBe(walletKeyId(NEW));
    const text = lines.join("\n");
    expect(text).toContain(walletKeyId(NEW));
    expect(text).toContain(walletKeyId(OLD));
    for (const k of [OLD, NEW]) {
      expect(text).not.toContain(hex(k));
      expect(text).not.toContain(Buffer.from(k).toString("base64url"));
    }
  });
});
