import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { bech32m } from "@scure/base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sparkTestWallet } from "../../../test/support/spark-wallet.js";
import { sparkIdentityKey } from "../src/domain/spark-signatures.js";
import { publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

// Issue 27, Grid's WALLET_SIGNATURE for Spark wallets: the challenge is a message the wallet's
// identity key signs; keys are made here and signatures made with the library, never a shortcut.
describe("ledger ownership verification by wallet signature", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  async function wallet(platformId?: string) {
    const pid = platformId ?? (await h.newPlatform({ environment: Environment.SANDBOX, currencies: ["USD", "BTC"] }));
    const w = sparkTestWallet();
    const ext = (await h.ledger.createExternalAccount({ platformId: pid, owner: "PLATFORM", currency: "BTC", accountInfo: { accountType: "SPARK_WALLET", address: w.address } })).account!;
    return { platformId: pid, w, ext };
  }
  const challenge = (platformId: string, accountId: string, method = "") => h.ledger.startOwnershipChallenge({ platformId, owner: "PLATFORM", accountId, method });
  const verify = (platformId: string, accountId: string, signature: string, signatureScheme = "") => h.ledger.verifyOwnership({ platformId, owner: "PLATFORM", accountId, amounts: [], signature, signatureScheme });
  const status = async (platformId: string, accountId: string) => (await h.ledger.getExternalAccount({ platformId, owner: "PLATFORM", accountId })).account!.status;

  it("decodes a Spark address's identity key (either prefix generation) and refuses what is no Spark address", () => {
    const w = sparkTestWallet();
    expect(sparkIdentityKey(w.address)).toEqual(w.publicKey);
    const legacy = sparkTestWallet("sprt");
    expect(sparkIdentityKey(legacy.address)).toEqual(legacy.publicKey);
    expect(sparkIdentityKey(sparkTestWallet("bc").address)).toBeUndefined();
    expect(sparkIdentityKey(w.address.slice(0, -1) + (w.address.endsWith("q") ? "p" : "q"))).toBeUndefined(); // checksum
    // The bare key without Spark's protobuf wrapper is not Spark's encoding.
    expect(sparkIdentityKey(bech32m.encode("spark", bech32m.toWords(w.publicKey), 1023))).toBeUndefined();
  });

  it("answers a Spark wallet's challenge with a WALLET_SIGNATURE message binding platform, account, address, nonce and expiry; a bip137 signature verifies it (ACTIVE), a replay changes nothing", async () => {
    const { platformId, w, ext } = await wallet();
    const c = (await challenge(platformId, ext.id)).challenge!;
    expect(c).toMatchObject({ method: "WALLET_SIGNATURE", status: "PENDING", depositCount: 0, attemptsRemaining: 1, externalAccountId: ext.id });
    const lines = c.messageToSign.split("\n");
    expect(lines).toContain(`Platform: ${platformId}`);
    expect(lines).toContain(`External account: ${ext.id}`);
    expect(lines).toContain(`Address: ${w.address}`);
    expect(lines.find((l) => l.startsWith("Nonce: "))).toMatch(/^Nonce: [0-9a-f]{32}$/);
    // Fifteen minutes by default (LEDGER_OWNERSHIP_SIGNATURE_TTL_SECONDS).
    const expires = new Date(Number(c.expiresAt!.seconds) * 1000);
    expect(lines).toContain(`Expires at: ${expires.toISOString()}`);
    expect(expires.getTime() - h.clock.now().getTime()).toBe(900_000);
    expect(await status(platformId, ext.id)).toBe("PENDING_OWNERSHIP_VERIFICATION");
    expect((await h.railInstructions()).filter((i) => i.externalAccountId === ext.id)).toHaveLength(0);

    const signature = w.bip137(c.messageToSign);
    expect((await verify(platformId, ext.id, signature)).account!.status).toBe("ACTIVE");
    expect(await publicError(verify(platformId, ext.id, signature))).toMatchObject({ code: "EXTERNAL_ACCOUNT_ALREADY_VERIFIED" });
    expect(await publicError(challenge(platformId, ext.id))).toMatchObject({ code: "EXTERNAL_ACCOUNT_ALREADY_VERIFIED" });
    expect(await status(platformId, ext.id)).toBe("ACTIVE");
  });

  it("takes each scheme's signature: bip137 (compressed and segwit headers), electrum, and the Spark SDK's (DER and compact, hex)", async () => {
    const cases: [string, (w: ReturnType<typeof sparkTestWallet>, m: string) => string][] = [
      ["bip137", (w, m) => w.bip137(m, true)],
      ["electrum", (w, m) => w.electrum(m)],
      ["spark", (w, m) => w.spark(m)],
      ["spark", (w, m) => w.spark(m, "compact")],
    ];
    for (const [scheme, sign] of cases) {
      const { platformId, w, ext } = await wallet();
      const c = (await challenge(platformId, ext.id, "WALLET_SIGNATURE")).challenge!;
      expect((await verify(platformId, ext.id, sign(w, c.messageToSign), scheme)).account!.status, scheme).toBe("ACTIVE");
    }
  });

  it("fails the challenge on an invalid signature (Grid's default: one attempt), the account UNVERIFIED; the right signature then finds no challenge, and a new challenge verifies", async () => {
    const { platformId, w, ext } = await wallet();
    const c = (await challenge(platformId, ext.id)).challenge!;
    const stranger = sparkTestWallet();
    expect(await publicError(verify(platformId, ext.id, stranger.bip137(c.messageToSign)))).toMatchObject({
      code: "OWNERSHIP_SIGNATURE_INVALID",
      details: { attemptsRemaining: 0, signatureScheme: "bip137" },
    });
    expect(await status(platformId, ext.id)).toBe("UNVERIFIED");
    expect(await publicError(verify(platformId, ext.id, w.bip137(c.messageToSign)))).toMatchObject({ code: "OWNERSHIP_CHALLENGE_NOT_FOUND", details: { challengeStatus: "FAILED", reason: "ATTEMPTS_EXCEEDED" } });
    const again = (await challenge(platformId, ext.id)).challenge!;
    expect(again.messageToSign).not.toBe(c.messageToSign);
    expect(await status(platformId, ext.id)).toBe("PENDING_OWNERSHIP_VERIFICATION");
    expect((await verify(platformId, ext.id, w.bip137(again.messageToSign))).account!.status).toBe("ACTIVE");
  });

  it("refuses a signature in another scheme than the one named, and an unknown scheme (400 naming the account's, not counted)", async () => {
    const { platformId, w, ext } = await wallet();
    const c = (await challenge(platformId, ext.id)).challenge!;
    const unknown = await publicError(verify(platformId, ext.id, w.bip137(c.messageToSign), "eip191"));
    expect(unknown).toMatchObject({ code: "INVALID_INPUT" });
    expect(JSON.stringify(unknown.details)).toContain("bip137, electrum, spark");
    expect(await status(platformId, ext.id)).toBe("PENDING_OWNERSHIP_VERIFICATION");
    // The Spark SDK's signature named bip137 is no Bitcoin signed message.
    expect(await publicError(verify(platformId, ext.id, w.spark(c.messageToSign), "bip137"))).toMatchObject({ code: "OWNERSHIP_SIGNATURE_INVALID" });
    // Electrum has no segwit headers.
    const second = (await challenge(platformId, ext.id)).challenge!;
    expect(await publicError(verify(platformId, ext.id, w.bip137(second.messageToSign, true), "electrum"))).toMatchObject({ code: "OWNERSHIP_SIGNATURE_INVALID" });
    // Garbage is an invalid signature too.
    const third = (await challenge(platformId, ext.id)).challenge!;
    expect(await publicError(verify(platformId, ext.id, "not a signature"))).toMatchObject({ code: "OWNERSHIP_SIGNATURE_INVALID" });
    expect((await challenge(platformId, ext.id)).challenge!.id).not.toBe(third.id);
  });

  it("keeps one live challenge per account: a new one replaces the old, whose message no longer verifies", async () => {
    const { platformId, w, ext } = await wallet();
    const first = (await challenge(platformId, ext.id)).challenge!;
    const second = (await challenge(platformId, ext.id)).challenge!;
    expect(second.id).not.toBe(first.id);
    expect(await publicError(verify(platformId, ext.id, w.bip137(first.messageToSign)))).toMatchObject({ code: "OWNERSHIP_SIGNATURE_INVALID" });
    const third = (await challenge(platformId, ext.id)).challenge!;
    expect((await verify(platformId, ext.id, w.electrum(third.messageToSign), "electrum")).account!.status).toBe("ACTIVE");
  });

  it("expires a challenge after its time (400 OWNERSHIP_CHALLENGE_EXPIRED, the account UNVERIFIED)", async () => {
    const { platformId, w, ext } = await wallet();
    const c = (await challenge(platformId, ext.id)).challenge!;
    h.clock.advance(900_000 + 1000);
    expect(await publicError(verify(platformId, ext.id, w.bip137(c.messageToSign)))).toMatchObject({ code: "OWNERSHIP_CHALLENGE_EXPIRED" });
    expect(await status(platformId, ext.id)).toBe("UNVERIFIED");
    expect(await publicError(verify(platformId, ext.id, w.bip137(c.messageToSign)))).toMatchObject({ code: "OWNERSHIP_CHALLENGE_EXPIRED" });
  });

  it("answers 409 naming why for what a signature cannot verify, 400 for the wrong proof, 404 for another platform's account", async () => {
    const { platformId, w, ext } = await wallet();
    const micro = await publicError(challenge(platformId, ext.id, "MICRO_DEPOSITS"));
    expect(micro).toMatchObject({ code: "OWNERSHIP_VERIFICATION_NOT_APPLICABLE" });
    expect(micro.message).toContain("WALLET_SIGNATURE");
    expect(await publicError(challenge(platformId, ext.id, "LIVENESS"))).toMatchObject({ code: "OWNERSHIP_VERIFICATION_NOT_APPLICABLE" });
    const lightning = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "BTC", accountInfo: { accountType: "LIGHTNING", lightningAddress: "alice@example.com" } })).account!;
    const ln = await publicError(challenge(platformId, lightning.id));
    expect(ln).toMatchObject({ code: "OWNERSHIP_VERIFICATION_NOT_APPLICABLE" });
    expect(ln.message).toContain("no key");
    const bank = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo("123456789000") })).account!;
    expect(await publicError(challenge(platformId, bank.id, "WALLET_SIGNATURE"))).toMatchObject({ code: "OWNERSHIP_VERIFICATION_NOT_APPLICABLE" });
    expect(await publicError(h.ledger.verifyOwnership({ platformId, owner: "PLATFORM", accountId: bank.id, amounts: [], signature: "abc", signatureScheme: "" }))).toMatchObject({ code: "INVALID_INPUT" });

    const c = (await challenge(platformId, ext.id)).challenge!;
    expect(await publicError(h.ledger.verifyOwnership({ platformId, owner: "PLATFORM", accountId: ext.id, amounts: [32n, 45n] }))).toMatchObject({ code: "INVALID_INPUT" });
    const other = await h.newPlatform({ environment: Environment.SANDBOX });
    expect(await publicError(challenge(other, ext.id))).toMatchObject({ code: "EXTERNAL_ACCOUNT_NOT_FOUND" });
    expect(await publicError(verify(other, ext.id, w.bip137(c.messageToSign)))).toMatchObject({ code: "EXTERNAL_ACCOUNT_NOT_FOUND" });
    expect((await verify(platformId, ext.id, w.bip137(c.messageToSign))).account!.status).toBe("ACTIVE");
  });
});

describe("ledger ownership verification by wallet signature, with three attempts (LEDGER_OWNERSHIP_SIGNATURE_MAX_ATTEMPTS=3)", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness({ env: { LEDGER_OWNERSHIP_SIGNATURE_MAX_ATTEMPTS: "3", LEDGER_OWNERSHIP_SIGNATURE_TTL_SECONDS: "120" } });
  });
  afterAll(async () => h?.close());

  it("counts invalid signatures (400 with the attempts left), verifies within them, and fails on the third; the expiry follows the knob", async () => {
    const platformId = await h.newPlatform({ environment: Environment.SANDBOX, currencies: ["BTC"] });
    const w = sparkTestWallet();
    const ext = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "BTC", accountInfo: { accountType: "SPARK_WALLET", address: w.address } })).account!;
    const verify = (signature: string) => h.ledger.verifyOwnership({ platformId, owner: "PLATFORM", accountId: ext.id, amounts: [], signature, signatureScheme: "" });
    const c = (await h.ledger.startOwnershipChallenge({ platformId, owner: "PLATFORM", accountId: ext.id, method: "" })).challenge!;
    expect(c.attemptsRemaining).toBe(3);
    expect(Number(c.expiresAt!.seconds) * 1000 - h.clock.now().getTime()).toBe(120_000);
    const stranger = sparkTestWallet();
    expect(await publicError(verify(stranger.bip137(c.messageToSign)))).toMatchObject({ code: "OWNERSHIP_SIGNATURE_INVALID", details: { attemptsRemaining: 2 } });
    expect(await publicError(verify(stranger.bip137(c.messageToSign)))).toMatchObject({ code: "OWNERSHIP_SIGNATURE_INVALID", details: { attemptsRemaining: 1 } });
    expect((await h.ledger.getExternalAccount({ platformId, owner: "PLATFORM", accountId: ext.id })).account!.status).toBe("PENDING_OWNERSHIP_VERIFICATION");
    expect(await publicError(verify(stranger.bip137(c.messageToSign)))).toMatchObject({ code: "OWNERSHIP_SIGNATURE_INVALID", details: { attemptsRemaining: 0 } });
    expect((await h.ledger.getExternalAccount({ platformId, owner: "PLATFORM", accountId: ext.id })).account!.status).toBe("UNVERIFIED");

    const again = (await h.ledger.startOwnershipChallenge({ platformId, owner: "PLATFORM", accountId: ext.id, method: "WALLET_SIGNATURE" })).challenge!;
    expect(await publicError(verify(stranger.bip137(again.messageToSign)))).toMatchObject({ details: { attemptsRemaining: 2 } });
    expect((await verify(w.bip137(again.messageToSign))).account!.status).toBe("ACTIVE");
  });
});
