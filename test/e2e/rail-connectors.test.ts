import { createClient } from "@connectrpc/connect";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConnector } from "../support/test-connector.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { balanceOf, platformAccount, txStatus, usdAccountInfo } from "./ledger-helpers.js";

/**
 * Issue 24 items 1-2 end to end (docs/connectors.md): a production platform's rail with no
 * connector answers 400 PAYMENT_RAIL_NOT_AVAILABLE before anything is held; once the operator binds
 * it to a connector (here one built on @corridor/connector in test code), the platform's money goes
 * to exactly that connector and settles by its outcomes.
 */
describe.skipIf(skipReason())(`rail connectors (${mode})`, () => {
  let system: TestSystem;
  let prod: Caller;
  let usd: { id: string };
  let ext: { id: string };
  const bank = testConnector("e2e-bank");
  const bystander = testConnector("e2e-other");

  beforeAll(async () => {
    system = await startTestSystem();
    await system.startConnector(bank.definition);
    await system.startConnector(bystander.definition);
    prod = await system.createPlatform({ environment: "PRODUCTION", name: "rails e2e" });
    usd = await platformAccount(prod);
    const created = await prod.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000") });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    ext = created.body;
  });
  afterAll(async () => system?.stop());

  const admin = () => createClient(LedgerAdminService, system.transportFor("ledger"));

  it("answers 400 PAYMENT_RAIL_NOT_AVAILABLE naming currency and rail to a production transfer-out and transfer-in whose rail nobody bound, holding nothing", async () => {
    const payout = await prod.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.id }, amount: 100 }, { "idempotency-key": "rail-none-out" });
    expect(payout.status).toBe(400);
    expect(payout.body).toMatchObject({ status: 400, code: "PAYMENT_RAIL_NOT_AVAILABLE", details: { currency: "USD", paymentRail: "ACH", paymentRails: ["ACH", "WIRE"] } });
    const pull = await prod.call("POST", "/transfer-in", { source: { accountId: ext.id }, destination: { accountId: usd.id }, amount: 100 });
    expect(pull.body).toMatchObject({ status: 400, code: "PAYMENT_RAIL_NOT_AVAILABLE", details: { currency: "USD", paymentRail: "ACH" } });
    expect((await prod.call("GET", "/transactions")).body.data).toEqual([]);
    expect(await balanceOf(prod)).toBe(0);
    expect(bank.received).toEqual([]);
  });

  it("sends a bound production platform's transfers to exactly the bound connector, which settles them by its outcomes", async () => {
    await admin().bindPlatformRail({ platformId: prod.platformId, currency: "USD", paymentRail: "ACH", connector: bank.definition.name });
    const pulled = await prod.call("POST", "/transfer-in", { source: { accountId: ext.id }, destination: { accountId: usd.id }, amount: 5_000 });
    expect(pulled.status, JSON.stringify(pulled.body)).toBe(201);
    await txStatus(prod, pulled.body.id, "COMPLETED");
    expect(await balanceOf(prod)).toBe(5_000);

    const paid = await prod.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.id }, amount: 1_200 }, { "idempotency-key": "rail-bound-out" });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    const done = await txStatus(prod, paid.body.id, "COMPLETED");
    expect(done).toMatchObject({ type: "OUTGOING", status: "COMPLETED" });
    expect(await balanceOf(prod)).toBe(3_800);

    const forPayout = await eventually(async () => (bank.received.some((i) => i.transactionId === paid.body.id) ? bank.received.filter((i) => i.transactionId === paid.body.id) : undefined));
    expect(forPayout).toEqual([
      expect.objectContaining({ platformId: prod.platformId, environment: "PRODUCTION", connector: bank.definition.name, direction: "PAYOUT", kind: "TRANSFER", amount: 1_200n, currency: "USD", paymentRail: "ACH" }),
    ]);
    expect(bank.received.map((i) => i.direction)).toEqual(["PULL", "PAYOUT"]);
    expect(bystander.received).toEqual([]);
  });
});
