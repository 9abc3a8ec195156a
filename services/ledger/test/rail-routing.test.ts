import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceSums, publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

// Issue 24 items 1-2 (docs/connectors.md): routing that cannot mix worlds, and the outcomes of the
// rail contract v1 (RETURNED after COMPLETED) as they move the money.
describe("ledger rail routing and the rail contract's outcomes", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  const ACH_CONNECTOR = { connector: "ach-test", environment: "PRODUCTION" };

  async function platform(environment: Environment) {
    const platformId = await h.newPlatform({ environment });
    const { accounts } = await h.ledger.listInternalAccounts({ platformId, owner: "PLATFORM", currency: "USD" });
    const ext = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo() })).account!;
    return { platformId, account: accounts[0]!, ext };
  }
  const fund = async (platformId: string, accountId: string, amount: bigint) => {
    const sandboxFunded = await h.ledger.fundInternalAccount({ platformId, accountId, amount }).then(
      () => true,
      () => false,
    );
    return sandboxFunded;
  };
  const out = (platformId: string, source: string, destination: string, amount: bigint) =>
    h.ledger.transferOut({ transfer: { platformId, sourceAccountId: source, destinationAccountId: destination, amount } });
  const account = async (platformId: string, accountId: string) => (await h.ledger.getInternalAccount({ platformId, accountId })).account!;
  const status = async (platformId: string, id: string) => (await h.ledger.getTransaction({ platformId, transactionId: id })).transaction!;
  const instructionOf = async (transactionId: string) => (await h.railInstructions()).filter((i) => i.transactionId === transactionId);

  /** A production platform with money in its USD account: bound ACH, then funded by a completed pull. */
  async function fundedProduction(amount: bigint) {
    const p = await platform(Environment.PRODUCTION);
    await h.admin.bindPlatformRail({ platformId: p.platformId, currency: "USD", paymentRail: "ACH", connector: "ach-test" });
    const pull = (await h.ledger.transferIn({ transfer: { platformId: p.platformId, sourceAccountId: p.ext.id, destinationAccountId: p.account.id, amount } })).result!.transaction!;
    await h.outcome(p.platformId, pull.id, "COMPLETED", "", undefined, ACH_CONNECTOR);
    expect((await account(p.platformId, p.account.id)).balance).toBe(amount);
    return { ...p, pull };
  }

  describe("bindings (operator only)", () => {
    it("refuses to bind a sandbox platform's rails, or any production rail to the simulator, or a malformed binding", async () => {
      const sandbox = await platform(Environment.SANDBOX);
      const prod = await platform(Environment.PRODUCTION);
      expect(await publicError(h.admin.bindPlatformRail({ platformId: sandbox.platformId, currency: "USD", paymentRail: "ACH", connector: "ach-test" }))).toMatchObject({ code: "INVALID_INPUT" });
      expect(await publicError(h.admin.bindPlatformRail({ platformId: prod.platformId, currency: "USD", paymentRail: "ACH", connector: "sandbox" }))).toMatchObject({ code: "INVALID_INPUT" });
      const bad = await publicError(h.admin.bindPlatformRail({ platformId: prod.platformId, currency: "XXX", paymentRail: "ach", connector: "ACH Bank" }));
      expect((bad.details?.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(["connector", "currency", "paymentRail"]);
      expect((await h.admin.listPlatformRailBindings({ platformId: prod.platformId })).bindings).toEqual([]);
    });

    it("binds, lists, rebinds and unbinds a production platform's (currency, rail)", async () => {
      const prod = await platform(Environment.PRODUCTION);
      await h.admin.bindPlatformRail({ platformId: prod.platformId, currency: "USD", paymentRail: "ACH", connector: "ach-one" });
      const rebound = await h.admin.bindPlatformRail({ platformId: prod.platformId, currency: "USD", paymentRail: "ACH", connector: "ach-two" });
      expect(rebound.binding).toMatchObject({ platformId: prod.platformId, currency: "USD", paymentRail: "ACH", connector: "ach-two", source: "OPERATOR" });
      expect((await h.admin.listPlatformRailBindings({ platformId: prod.platformId })).bindings.map((b) => b.connector)).toEqual(["ach-two"]);
      expect((await h.admin.unbindPlatformRail({ platformId: prod.platformId, currency: "USD", paymentRail: "ACH" })).removed).toBe(true);
      expect((await h.admin.unbindPlatformRail({ platformId: prod.platformId, currency: "USD", paymentRail: "ACH" })).removed).toBe(false);
      expect(await publicError(out(prod.platformId, prod.account.id, prod.ext.id, 1n))).toMatchObject({ code: "PAYMENT_RAIL_NOT_AVAILABLE" });
    });
  });

  describe("routing cannot mix worlds", () => {
    it("sends a sandbox platform's instruction to the simulator's topic addressed to sandbox, even when a production platform binds the same rail", async () => {
      const prod = await fundedProduction(500n);
      const sandbox = await platform(Environment.SANDBOX);
      await fund(sandbox.platformId, sandbox.account.id, 500n);
      const tx = (await out(sandbox.platformId, sandbox.account.id, sandbox.ext.id, 100n)).result!.transaction!;
      expect(await instructionOf(tx.id)).toEqual([expect.objectContaining({ topic: "corridor.rails.v1", connector: "sandbox", environment: "SANDBOX", paymentRail: "ACH" })]);
      const prodTx = (await out(prod.platformId, prod.account.id, prod.ext.id, 100n)).result!.transaction!;
      expect(await instructionOf(prodTx.id)).toEqual([expect.objectContaining({ topic: "corridor.rails.ach-test.v1", connector: "ach-test", environment: "PRODUCTION", paymentRail: "ACH", direction: "PAYOUT" })]);
      expect(await instructionOf(prod.pull.id)).toEqual([expect.objectContaining({ topic: "corridor.rails.ach-test.v1", direction: "PULL", paymentRail: "ACH" })]);
    });

    it("pays a production transfer-out over the rail its caller chose among the external account's (Grid's destination.paymentRail), to that rail's connector", async () => {
      const prod = await fundedProduction(500n);
      await h.admin.bindPlatformRail({ platformId: prod.platformId, currency: "USD", paymentRail: "WIRE", connector: "wire-test" });
      const transfer = { platformId: prod.platformId, sourceAccountId: prod.account.id, destinationAccountId: prod.ext.id, amount: 100n };
      const wire = (await h.ledger.transferOut({ transfer: { ...transfer, paymentRail: "WIRE" } })).result!.transaction!;
      expect(wire.destination?.paymentRail).toBe("WIRE");
      expect(await instructionOf(wire.id)).toEqual([expect.objectContaining({ topic: "corridor.rails.wire-test.v1", connector: "wire-test", paymentRail: "WIRE", direction: "PAYOUT" })]);
      const plain = (await h.ledger.transferOut({ transfer })).result!.transaction!;
      expect(await instructionOf(plain.id)).toEqual([expect.objectContaining({ connector: "ach-test", paymentRail: "ACH" })]);
      // A rail the account does not list is refused before anything is held.
      const before = await account(prod.platformId, prod.account.id);
      const rtp = await publicError(h.ledger.transferOut({ transfer: { ...transfer, paymentRail: "RTP" } }));
      expect(rtp).toMatchObject({ code: "INVALID_INPUT" });
      expect((rtp.details?.errors as { field: string }[]).map((e) => e.field)).toEqual(["destination.paymentRail"]);
      expect(await account(prod.platformId, prod.account.id)).toMatchObject({ balance: before.balance, held: before.held });
    });

    it("applies a transaction's outcomes only from the connector it was routed to: the simulator cannot settle a production payment, nor a real connector a sandbox one", async () => {
      const prod = await fundedProduction(500n);
      const prodTx = (await out(prod.platformId, prod.account.id, prod.ext.id, 100n)).result!.transaction!;
      await h.outcome(prod.platformId, prodTx.id, "COMPLETED"); // the simulator (no connector named)
      await h.outcome(prod.platformId, prodTx.id, "COMPLETED", "", undefined, { connector: "sandbox", environment: "SANDBOX" });
      await h.outcome(prod.platformId, prodTx.id, "COMPLETED", "", undefined, { connector: "sepa-test", environment: "PRODUCTION" });
      await h.outcome(prod.platformId, prodTx.id, "COMPLETED", "", undefined, { connector: "ach-test", environment: "SANDBOX" });
      expect((await status(prod.platformId, prodTx.id)).status).toBe("PENDING");
      await h.outcome(prod.platformId, prodTx.id, "COMPLETED", "", undefined, ACH_CONNECTOR);
      expect((await status(prod.platformId, prodTx.id)).status).toBe("COMPLETED");

      const sandbox = await platform(Environment.SANDBOX);
      await fund(sandbox.platformId, sandbox.account.id, 500n);
      const tx = (await out(sandbox.platformId, sandbox.account.id, sandbox.ext.id, 100n)).result!.transaction!;
      await h.outcome(sandbox.platformId, tx.id, "COMPLETED", "", undefined, ACH_CONNECTOR);
      expect((await status(sandbox.platformId, tx.id)).status).toBe("PENDING");
      await h.outcome(sandbox.platformId, tx.id, "COMPLETED", "", undefined, { connector: "sandbox", environment: "SANDBOX" });
      expect((await status(sandbox.platformId, tx.id)).status).toBe("COMPLETED");
    });
  });

  describe("RETURNED (rail contract v1)", () => {
    it("reverses a completed transfer-out: the money is back with the sender, the transaction FAILED with the bank's reason and OUTGOING_PAYMENT_FAILED", async () => {
      const p = await fundedProduction(1_000n);
      const tx = (await out(p.platformId, p.account.id, p.ext.id, 400n)).result!.transaction!;
      await h.outcome(p.platformId, tx.id, "PROCESSING", "", undefined, ACH_CONNECTOR);
      await h.outcome(p.platformId, tx.id, "COMPLETED", "", undefined, ACH_CONNECTOR);
      expect((await account(p.platformId, p.account.id)).balance).toBe(600n);
      await h.outcome(p.platformId, tx.id, "RETURNED", "R01", undefined, ACH_CONNECTOR);
      await h.outcome(p.platformId, tx.id, "RETURNED", "R01", undefined, ACH_CONNECTOR); // another report of it changes nothing
      expect(await status(p.platformId, tx.id)).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED", failureDetail: "R01" });
      expect(await account(p.platformId, p.account.id)).toMatchObject({ balance: 1_000n, available: 1_000n });
      const events = (await h.ledgerEvents()).filter((e) => e.payload.case === "transactionChanged" && e.payload.value.transaction?.id === tx.id).map((e) => e.eventType);
      expect(events).toEqual(["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_PROCESSING", "OUTGOING_PAYMENT_COMPLETED", "OUTGOING_PAYMENT_FAILED"]);
      expect((await balanceSums(h.db, p.platformId)).get("USD")).toBe(0n);
    });

    it("reaches the same end when the return overtakes the completion: FAILED, hold released, the late COMPLETED ignored", async () => {
      const p = await fundedProduction(1_000n);
      const tx = (await out(p.platformId, p.account.id, p.ext.id, 400n)).result!.transaction!;
      await h.outcome(p.platformId, tx.id, "RETURNED", "R01", undefined, ACH_CONNECTOR);
      await h.outcome(p.platformId, tx.id, "COMPLETED", "", undefined, ACH_CONNECTOR);
      await h.outcome(p.platformId, tx.id, "PROCESSING", "", undefined, ACH_CONNECTOR);
      expect(await status(p.platformId, tx.id)).toMatchObject({ status: "FAILED", failureDetail: "R01" });
      expect(await account(p.platformId, p.account.id)).toMatchObject({ balance: 1_000n, available: 1_000n });
      expect((await balanceSums(h.db, p.platformId)).get("USD")).toBe(0n);
    });

    it("takes a returned pull's credit back, and what the account no longer holds from RETURN_SHORTFALL (owed by the platform), books balanced", async () => {
      const p = await fundedProduction(1_000n);
      // 700 of the pulled 1000 left already; the return finds 300.
      const spent = (await out(p.platformId, p.account.id, p.ext.id, 700n)).result!.transaction!;
      await h.outcome(p.platformId, spent.id, "COMPLETED", "", undefined, ACH_CONNECTOR);
      await h.outcome(p.platformId, p.pull.id, "RETURNED", "R10", undefined, ACH_CONNECTOR);
      expect(await status(p.platformId, p.pull.id)).toMatchObject({ status: "FAILED", failureDetail: "R10" });
      expect(await account(p.platformId, p.account.id)).toMatchObject({ balance: 0n, available: 0n });
      const trial = (await h.admin.getTrialBalance({ platformId: p.platformId })).currencies.find((c) => c.currency === "USD")!;
      expect(trial.balanceSum).toBe(0n);
      expect(trial.groups.find((g) => g.accountType === "RETURN_SHORTFALL")?.balanceSum).toBe(-700n);
    });
  });
});
