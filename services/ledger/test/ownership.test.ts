import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceSums, publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

// Issue 27: external-account ownership verification by micro-deposits. Two credits as real rail
// instructions, booked from MICRO_DEPOSIT_EXPENSE when the rail completes them, confirmed by amount.
describe("ledger ownership verification by micro-deposits", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  const ACH = { connector: "ach-test", environment: "PRODUCTION" };

  async function platform(environment: Environment, accountNumber = "123456789000") {
    const platformId = await h.newPlatform({ environment });
    const ext = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo(accountNumber) })).account!;
    return { platformId, ext };
  }
  const challenge = (platformId: string, accountId: string, method = "") => h.ledger.startOwnershipChallenge({ platformId, owner: "PLATFORM", accountId, method });
  const verify = (platformId: string, accountId: string, amounts: bigint[]) => h.ledger.verifyOwnership({ platformId, owner: "PLATFORM", accountId, amounts });
  const ext = async (platformId: string, accountId: string) => (await h.ledger.getExternalAccount({ platformId, owner: "PLATFORM", accountId })).account!;
  const depositsOf = async (accountId: string) => (await h.railInstructions()).filter((i) => i.externalAccountId === accountId);
  const trial = async (platformId: string) => (await h.admin.getTrialBalance({ platformId })).currencies.find((c) => c.currency === "USD")!;

  it("sends a sandbox platform's two fixed micro-deposits (32 and 45) to the simulator and verifies the account with them, in either order", async () => {
    const p = await platform(Environment.SANDBOX);
    const c = (await challenge(p.platformId, p.ext.id)).challenge!;
    expect(c).toMatchObject({ method: "MICRO_DEPOSITS", status: "PENDING", depositCount: 2, attemptsRemaining: 3, currency: "USD", externalAccountId: p.ext.id });
    const sent = await depositsOf(p.ext.id);
    expect(sent.map((i) => i.amount).sort()).toEqual([32n, 45n]);
    expect(sent.every((i) => i.topic === "corridor.rails.v1" && i.connector === "sandbox" && i.direction === "PAYOUT" && i.kind === "TRANSFER" && i.paymentRail === "ACH")).toBe(true);
    expect((await ext(p.platformId, p.ext.id)).status).toBe("PENDING_OWNERSHIP_VERIFICATION");

    // Asking again answers the outstanding challenge and sends nothing more.
    expect((await challenge(p.platformId, p.ext.id)).challenge!.id).toBe(c.id);
    expect(await depositsOf(p.ext.id)).toHaveLength(2);

    const verified = (await verify(p.platformId, p.ext.id, [45n, 32n])).account!;
    expect(verified.status).toBe("ACTIVE");
    expect(await publicError(challenge(p.platformId, p.ext.id))).toMatchObject({ code: "EXTERNAL_ACCOUNT_ALREADY_VERIFIED" });
    expect(await publicError(verify(p.platformId, p.ext.id, [32n, 45n]))).toMatchObject({ code: "EXTERNAL_ACCOUNT_ALREADY_VERIFIED" });
  });

  it("counts wrong amounts (400 with the attempts left) and fails the challenge on the third, the account UNVERIFIED until a new challenge", async () => {
    const p = await platform(Environment.SANDBOX);
    await challenge(p.platformId, p.ext.id);
    expect(await publicError(verify(p.platformId, p.ext.id, [32n, 46n]))).toMatchObject({ code: "MICRO_DEPOSIT_AMOUNTS_MISMATCH", details: { attemptsRemaining: 2 } });
    expect(await publicError(verify(p.platformId, p.ext.id, [1n, 2n]))).toMatchObject({ code: "MICRO_DEPOSIT_AMOUNTS_MISMATCH", details: { attemptsRemaining: 1 } });
    expect(await publicError(verify(p.platformId, p.ext.id, [45n, 45n]))).toMatchObject({ code: "MICRO_DEPOSIT_ATTEMPTS_EXCEEDED", details: { attemptsRemaining: 0 } });
    expect((await ext(p.platformId, p.ext.id)).status).toBe("UNVERIFIED");
    // The right amounts no longer help: the challenge is over.
    expect(await publicError(verify(p.platformId, p.ext.id, [32n, 45n]))).toMatchObject({ code: "OWNERSHIP_CHALLENGE_NOT_FOUND", details: { challengeStatus: "FAILED" } });
    // A new challenge sends two new credits and can be confirmed.
    const again = (await challenge(p.platformId, p.ext.id)).challenge!;
    expect(again.attemptsRemaining).toBe(3);
    expect(await depositsOf(p.ext.id)).toHaveLength(4);
    expect((await ext(p.platformId, p.ext.id)).status).toBe("PENDING_OWNERSHIP_VERIFICATION");
    expect((await verify(p.platformId, p.ext.id, [32n, 45n])).account!.status).toBe("ACTIVE");
  });

  it("refuses malformed amounts, a verify without a challenge, and accounts no micro-deposit can reach", async () => {
    const p = await platform(Environment.SANDBOX);
    expect(await publicError(verify(p.platformId, p.ext.id, [32n]))).toMatchObject({ code: "INVALID_INPUT" });
    expect(await publicError(verify(p.platformId, p.ext.id, [0n, 45n]))).toMatchObject({ code: "INVALID_INPUT" });
    expect(await publicError(verify(p.platformId, p.ext.id, [32n, 45n]))).toMatchObject({ code: "OWNERSHIP_CHALLENGE_NOT_FOUND" });
    expect(await publicError(challenge(p.platformId, p.ext.id, "WALLET_SIGNATURE"))).toMatchObject({ code: "OWNERSHIP_VERIFICATION_NOT_APPLICABLE" });
    expect(await publicError(challenge(p.platformId, "ExternalAccount:019542f5-b3e7-7d02-8000-000000000000"))).toMatchObject({ code: "EXTERNAL_ACCOUNT_NOT_FOUND" });
    const wallet = (await h.ledger.createExternalAccount({ platformId: p.platformId, owner: "PLATFORM", currency: "BTC", accountInfo: { accountType: "SPARK_WALLET", address: "spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhu" } }).catch(() => undefined))?.account;
    if (wallet) expect(await publicError(challenge(p.platformId, wallet.id, "MICRO_DEPOSITS"))).toMatchObject({ code: "OWNERSHIP_VERIFICATION_NOT_APPLICABLE" });
    expect(await depositsOf(p.ext.id)).toHaveLength(0);
  });

  it("books each completed micro-deposit from MICRO_DEPOSIT_EXPENSE to RAIL_CLEARING (balanced), reverses a returned one and fails the challenge", async () => {
    const p = await platform(Environment.SANDBOX);
    await challenge(p.platformId, p.ext.id);
    const [a, b] = await depositsOf(p.ext.id);
    await h.outcome(p.platformId, a!.transactionId, "COMPLETED");
    await h.outcome(p.platformId, b!.transactionId, "COMPLETED");
    await h.outcome(p.platformId, b!.transactionId, "COMPLETED"); // a repeat changes nothing
    let t = await trial(p.platformId);
    expect(t.groups.find((g) => g.accountType === "MICRO_DEPOSIT_EXPENSE")?.balanceSum).toBe(-77n);
    expect(t.groups.find((g) => g.accountType === "RAIL_CLEARING")?.balanceSum).toBe(77n);
    expect(t.balanceSum).toBe(0n);
    expect(t.mismatchedAccountCount).toBe(0n);
    expect([...(await balanceSums(h.db, p.platformId)).values()].every((s) => s === 0n)).toBe(true);

    await h.outcome(p.platformId, a!.transactionId, "RETURNED", "R03");
    t = await trial(p.platformId);
    expect(t.groups.find((g) => g.accountType === "MICRO_DEPOSIT_EXPENSE")?.balanceSum).toBe(-b!.amount);
    expect((await ext(p.platformId, p.ext.id)).status).toBe("UNVERIFIED");
    expect(await publicError(verify(p.platformId, p.ext.id, [32n, 45n]))).toMatchObject({ code: "OWNERSHIP_CHALLENGE_NOT_FOUND" });
  });

  it("fails the challenge when the rail refuses a credit, and ignores outcomes from a connector it was not routed to", async () => {
    const p = await platform(Environment.SANDBOX);
    await challenge(p.platformId, p.ext.id);
    const [a] = await depositsOf(p.ext.id);
    await h.outcome(p.platformId, a!.transactionId, "FAILED", "R04", undefined, ACH);
    expect((await ext(p.platformId, p.ext.id)).status).toBe("PENDING_OWNERSHIP_VERIFICATION");
    await h.outcome(p.platformId, a!.transactionId, "FAILED", "R04");
    expect((await ext(p.platformId, p.ext.id)).status).toBe("UNVERIFIED");
    expect((await trial(p.platformId)).groups.find((g) => g.accountType === "MICRO_DEPOSIT_EXPENSE")).toBeUndefined();
  });

  it("sends a production platform's micro-deposits through the connector bound to its rail, with secret amounts from 1 to 99, and refuses without a binding", async () => {
    const p = await platform(Environment.PRODUCTION);
    expect(await publicError(challenge(p.platformId, p.ext.id))).toMatchObject({ code: "PAYMENT_RAIL_NOT_AVAILABLE" });
    expect(await depositsOf(p.ext.id)).toHaveLength(0);
    await h.admin.bindPlatformRail({ platformId: p.platformId, currency: "USD", paymentRail: "ACH", connector: "ach-test" });
    await challenge(p.platformId, p.ext.id);
    const sent = await depositsOf(p.ext.id);
    expect(sent).toHaveLength(2);
    expect(sent.every((i) => i.topic === "corridor.rails.ach-test.v1" && i.connector === "ach-test" && i.environment === "PRODUCTION" && i.direction === "PAYOUT")).toBe(true);
    const amounts = sent.map((i) => i.amount);
    expect(amounts.every((x) => x >= 1n && x <= 99n)).toBe(true);
    expect(amounts[0]).not.toBe(amounts[1]);
    // The simulator cannot settle a production deposit.
    await h.outcome(p.platformId, sent[0]!.transactionId, "COMPLETED");
    expect((await trial(p.platformId)).groups.find((g) => g.accountType === "MICRO_DEPOSIT_EXPENSE")).toBeUndefined();
    for (const i of sent) await h.outcome(p.platformId, i.transactionId, "COMPLETED", "", undefined, ACH);
    expect((await trial(p.platformId)).groups.find((g) => g.accountType === "MICRO_DEPOSIT_EXPENSE")?.balanceSum).toBe(-(amounts[0]! + amounts[1]!));
    expect((await verify(p.platformId, p.ext.id, [amounts[1]!, amounts[0]!])).account!.status).toBe("ACTIVE");
  });

  it("expires an unconfirmed challenge after 14 days (the account UNVERIFIED)", async () => {
    const p = await platform(Environment.SANDBOX);
    await challenge(p.platformId, p.ext.id);
    h.clock.advance(14 * 24 * 3600 * 1000 + 1000);
    expect(await publicError(verify(p.platformId, p.ext.id, [32n, 45n]))).toMatchObject({ code: "OWNERSHIP_CHALLENGE_NOT_FOUND", details: { challengeStatus: "EXPIRED" } });
    expect((await ext(p.platformId, p.ext.id)).status).toBe("UNVERIFIED");
  });
});
