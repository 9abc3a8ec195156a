import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceSums, publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

describe("incoming UMA payments (CreateIncomingUmaPayment, ResolveIncomingPayment)", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  async function setup() {
    const platformId = await h.newPlatform();
    const customerId = await h.newCustomer(platformId, { currencies: ["USD"] });
    const { accounts } = await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId, currency: "USD" });
    const usd = accounts.find((a) => a.type === "INTERNAL_FIAT")!;
    return { platformId, customerId, usd };
  }

  const create = (platformId: string, customerId: string, amount = 1_000n, idempotencyKey = "") =>
    h.ledger.createIncomingUmaPayment({ platformId, customerId, senderUmaAddress: "$bob@other.example", receiverUmaAddress: "$alice@sandbox.uma.money", currency: "USD", amount, idempotencyKey });

  const balance = async (platformId: string, accountId: string) => (await h.ledger.getInternalAccount({ platformId, accountId })).account!.available;
  const eventsOf = async (id: string) => (await h.ledgerEvents()).filter((e) => e.payload.case === "transactionChanged" && e.payload.value.transaction?.id === id).map((e) => e.eventType);

  it("opens a PENDING INCOMING transaction to the customer's USD account that moves no money yet", async () => {
    const { platformId, customerId, usd } = await setup();
    const { transaction: tx } = await create(platformId, customerId);
    expect(tx).toMatchObject({ type: "INCOMING", status: "PENDING", customerId, amount: 1_000n, source: { type: "UMA_ADDRESS" }, destination: { type: "ACCOUNT", accountId: usd.id } });
    expect(tx!.counterpartyInformation).toEqual({ senderUmaAddress: "$bob@other.example", receiverUmaAddress: "$alice@sandbox.uma.money" });
    expect(await balance(platformId, usd.id)).toBe(0n);
    expect(await eventsOf(tx!.id)).toEqual(["INCOMING_PAYMENT_PENDING"]);
  });

  it("APPROVE credits the account from rail clearing in one balanced entry, COMPLETED; a second decision changes nothing", async () => {
    const { platformId, customerId, usd } = await setup();
    const { transaction: tx } = await create(platformId, customerId, 2_500n);
    const approved = await h.ledger.resolveIncomingPayment({ platformId, transactionId: tx!.id, decision: "APPROVE" });
    expect(approved.changed).toBe(true);
    expect(approved.transaction).toMatchObject({ status: "COMPLETED" });
    expect(approved.transaction!.settledAt).toBeDefined();
    expect(await balance(platformId, usd.id)).toBe(2_500n);
    expect((await balanceSums(h.db, platformId)).get("USD")).toBe(0n);
    const again = await h.ledger.resolveIncomingPayment({ platformId, transactionId: tx!.id, decision: "FAIL", failureReason: "PAYMENT_APPROVAL_TIMED_OUT" });
    expect(again).toMatchObject({ changed: false, transaction: { status: "COMPLETED" } });
    expect(await balance(platformId, usd.id)).toBe(2_500n);
    expect(await eventsOf(tx!.id)).toEqual(["INCOMING_PAYMENT_PENDING", "INCOMING_PAYMENT_COMPLETED"]);
  });

  it("REJECT → REJECTED with the reason as failureDetail; FAIL → FAILED with the approval failure reason; nothing credited", async () => {
    const { platformId, customerId, usd } = await setup();
    const a = (await create(platformId, customerId)).transaction!;
    const rejected = await h.ledger.resolveIncomingPayment({ platformId, transactionId: a.id, decision: "REJECT", detail: "not our customer" });
    expect(rejected.transaction).toMatchObject({ status: "REJECTED", failureReason: "", failureDetail: "not our customer" });
    const b = (await create(platformId, customerId)).transaction!;
    const failed = await h.ledger.resolveIncomingPayment({ platformId, transactionId: b.id, decision: "FAIL", failureReason: "PAYMENT_APPROVAL_WEBHOOK_ERROR" });
    expect(failed.transaction).toMatchObject({ status: "FAILED", failureReason: "PAYMENT_APPROVAL_WEBHOOK_ERROR" });
    expect(await balance(platformId, usd.id)).toBe(0n);
    expect(await eventsOf(b.id)).toEqual(["INCOMING_PAYMENT_PENDING", "INCOMING_PAYMENT_FAILED"]);
  });

  it("refuses other failure reasons, another platform's transaction and production platforms; replays an Idempotency-Key", async () => {
    const { platformId, customerId } = await setup();
    const tx = (await create(platformId, customerId)).transaction!;
    expect((await publicError(h.ledger.resolveIncomingPayment({ platformId, transactionId: tx.id, decision: "FAIL", failureReason: "OFFRAMP_FAILED" }))).code).toBe("INVALID_INPUT");
    const other = await h.newPlatform();
    expect((await publicError(h.ledger.resolveIncomingPayment({ platformId: other, transactionId: tx.id, decision: "APPROVE" }))).code).toBe("TRANSACTION_NOT_FOUND");
    const first = await create(platformId, customerId, 10n, "k-1");
    const second = await create(platformId, customerId, 10n, "k-1");
    expect(second).toMatchObject({ replayed: true, transaction: { id: first.transaction!.id } });
    const prod = await h.newPlatform({ environment: Environment.PRODUCTION });
    const prodCustomer = await h.newCustomer(prod, { currencies: ["USD"] });
    expect((await publicError(create(prod, prodCustomer))).outcome).toBe("FORBIDDEN");
  });

  it("answers 400 INVALID_CURRENCY when the customer has no account in the receiving currency", async () => {
    const { platformId, customerId } = await setup();
    const err = await publicError(h.ledger.createIncomingUmaPayment({ platformId, customerId, senderUmaAddress: "$b@x.example", receiverUmaAddress: "$a@y.example", currency: "EUR", amount: 5n }));
    expect(err.code).toBe("INVALID_CURRENCY");
  });

  it("with a default USD deposit account: destination is it; APPROVE credits the internal account and holds the same amount for an onward PAYOUT that the rail completes", async () => {
    const { platformId, customerId, usd } = await setup();
    const ext = (await h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "USD", accountInfo: usdInfo("777000111"), defaultUmaDepositAccount: true })).account!;
    const tx = (await create(platformId, customerId, 3_000n)).transaction!;
    expect(tx.destination).toMatchObject({ type: "ACCOUNT", accountId: ext.id });
    const approved = await h.ledger.resolveIncomingPayment({ platformId, transactionId: tx.id, decision: "APPROVE", receiverCustomerInfo: { FULL_NAME: "Ada Lovelace" } });
    expect(approved.transaction).toMatchObject({ status: "COMPLETED", destination: { accountId: ext.id }, receiverCustomerInfo: { FULL_NAME: "Ada Lovelace" } });
    const { transactions } = await h.ledger.listTransactions({ platformId, customerId, type: "OUTGOING" });
    const payout = transactions.find((t) => t.description.endsWith(tx.id))!;
    expect(payout).toMatchObject({ status: "PENDING", amount: 3_000n, source: { accountId: usd.id }, destination: { accountId: ext.id } });
    const instr = (await h.railInstructions()).find((r) => r.transactionId === payout.id)!;
    expect(instr).toMatchObject({ direction: "PAYOUT", amount: 3_000n, externalAccountId: ext.id });
    const acct = async () => (await h.ledger.getInternalAccount({ platformId, accountId: usd.id })).account!;
    expect(await acct()).toMatchObject({ balance: 3_000n, available: 0n });
    await h.outcome(platformId, payout.id, "COMPLETED");
    expect((await h.ledger.getTransaction({ platformId, transactionId: payout.id })).transaction!.status).toBe("COMPLETED");
    expect(await acct()).toMatchObject({ balance: 0n, available: 0n });
    expect((await balanceSums(h.db, platformId)).get("USD")).toBe(0n);
  });

  it("without a default in the receiving currency the money stays in the internal account and no payout starts", async () => {
    const { platformId, customerId, usd } = await setup();
    const tx = (await create(platformId, customerId, 700n)).transaction!;
    await h.ledger.resolveIncomingPayment({ platformId, transactionId: tx.id, decision: "APPROVE" });
    expect((await h.ledger.listTransactions({ platformId, customerId, type: "OUTGOING" })).transactions).toEqual([]);
    expect(await balance(platformId, usd.id)).toBe(700n);
  });
});
