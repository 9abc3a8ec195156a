import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import type { RunningConnector } from "@corridor/connector";
import { sepaConnector } from "@corridor/connector-sepa-iso20022";
import { ManualClock } from "@corridor/kit";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeNotification } from "../../connectors/sepa-iso20022/test/bank-simulator.js";
import { testBank } from "../../connectors/sepa-iso20022/test/test-bank.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { balanceOf, iban, platformAccount } from "./ledger-helpers.js";

/**
 * Issue 24 item 4 through the public API: a PRODUCTION platform whose (EUR, SEPA) is bound to the
 * SEPA connector pays out by pain.001 files a test bank reads with its own parser. One payout the
 * bank refuses in its pain.002 (RJCT AC01) and one it settles (ACSC) then returns in a camt.054
 * (RRTN, AC04): the first FAILED without ever completing, the second COMPLETED then FAILED with the
 * money back; each with its OUTGOING_PAYMENT_FAILED webhook, once. The platform's euros arrive as a
 * camt.054 credit the operator assigns from suspense.
 */
const skip = skipReason();

describe.skipIf(skip)(`SEPA returns end to end (${mode})${skip ? ` — skipped: ${skip}` : ""}`, () => {
  const REJECTED_IBAN = iban("DE", "370400440532013111");
  const RETURNED_IBAN = iban("DE", "370400440532013222");
  const SETTLED_IBAN = iban("DE", "370400440532013333");
  const OPERATOR_IBAN = "DE89370400440532013000";
  const bank = testBank({ [REJECTED_IBAN]: { reject: "AC01" }, [RETURNED_IBAN]: { settleThenReturn: "AC04" }, [SETTLED_IBAN]: "settle" });
  for (const d of ["inbox", "outbox", "archive"]) mkdirSync(join(bank.root, d), { recursive: true });
  const clock = new ManualClock(new Date());
  let system: TestSystem;
  let sepa: RunningConnector;
  let prod: Caller;
  let eur: { id: string };
  let admin: ReturnType<typeof createClient<typeof LedgerAdminService>>;

  beforeAll(async () => {
    system = await startTestSystem();
    sepa = await system.startConnector({ ...sepaConnector, build: (ctx) => sepaConnector.build({ ...ctx, clock }) }, {
      SEPA_DEBTOR_NAME: "Corridor Operator GmbH",
      SEPA_DEBTOR_IBAN: OPERATOR_IBAN,
      SEPA_FILE_DROP_DIR: bank.root,
      SEPA_POLL_MS: "25",
    });
    prod = await system.createPlatform({ environment: "PRODUCTION", name: "sepa returns e2e" });
    // The platform supports EUR: its own EUR account is opened by the config event.
    const base = (await prod.call("GET", "/config")).body.supportedCurrencies[0];
    const patched = await prod.call("PATCH", "/config", { supportedCurrencies: ["USD", "EUR"].map((currencyCode) => ({ ...base, currencyCode })) });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    eur = await platformAccount(prod, "EUR");
    admin = createClient(LedgerAdminService, system.transportFor("ledger"));
    await admin.bindPlatformRail({ platformId: prod.platformId, currency: "EUR", paymentRail: "SEPA", connector: sepaConnector.name });
  }, 180_000);
  afterAll(async () => {
    await system?.stop();
  });

  const events = async (type: string, id: string) => ((await prod.call("GET", `/events?type=${type}&limit=100`)).body.data as { payload: { data: { id: string } } }[]).filter((e) => e.payload.data.id === id);
  const payee = async (ibanOf: string, name: string) => {
    const res = await prod.call("POST", "/platform/external-accounts", { currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: ibanOf, beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: name } } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string };
  };
  /** Moves the connector's clock past cut-offs and lets the bank answer until the transaction is `status`. */
  const until = async (id: string, status: string) =>
    eventually(
      async () => {
        clock.advance(6 * 3600_000);
        bank.answer(clock.now().toISOString().slice(0, 19));
        const tx = (await prod.call("GET", `/transactions/${id}`)).body;
        return tx?.status === status ? tx : undefined;
      },
      60_000,
    );

  it("a payout refused in a pain.002 and one returned by a camt.054 after settlement both end FAILED with the money back and one OUTGOING_PAYMENT_FAILED each", { timeout: 240_000 }, async () => {
    // Funding: the bank notifies a credit of 100.00 EUR on the operator's account; it waits in
    // suspense (no funding reference) until the operator assigns it to the platform's account.
    writeFileSync(
      join(bank.root, "outbox", "0000-camt054-funding.xml"),
      writeNotification({
        messageId: "BANK-NTF-FUND",
        createdAt: clock.now().toISOString().slice(0, 19),
        iban: OPERATOR_IBAN,
        entries: [{ amount: "100.00", direction: "CRDT", bookingDate: clock.now().toISOString().slice(0, 10), accountServicerReference: "FUND-1", family: "RCDT", subFamily: "ESCT", endToEndId: "FUNDING-E2E", debtor: { name: "Treasury", iban: iban("DE", "370400440532019999") }, remittance: "treasury top-up" }],
      }),
    );
    const item = await eventually(async () => (await admin.listSuspenseItems({ status: "SUSPENSE", connector: sepaConnector.name })).items.find((i) => i.amount === 10_000n), 60_000);
    await admin.assignSuspenseItem({ id: item.id, internalAccountId: eur.id, note: "sepa returns e2e funding" });
    await eventually(async () => ((await balanceOf(prod, "EUR")) === 10_000 ? true : undefined), 30_000);

    const refused = await prod.call("POST", "/transfer-out", { source: { accountId: eur.id }, destination: { accountId: (await payee(REJECTED_IBAN, "Rita Refused")).id }, amount: 1_500 }, { "idempotency-key": "sepa-e2e-rjct" });
    expect(refused.status, JSON.stringify(refused.body)).toBe(201);
    const bounced = await prod.call("POST", "/transfer-out", { source: { accountId: eur.id }, destination: { accountId: (await payee(RETURNED_IBAN, "Rolf Returned")).id }, amount: 2_500 }, { "idempotency-key": "sepa-e2e-rtrn" });
    expect(bounced.status, JSON.stringify(bounced.body)).toBe(201);
    const paid = await prod.call("POST", "/transfer-out", { source: { accountId: eur.id }, destination: { accountId: (await payee(SETTLED_IBAN, "Sara Settled")).id }, amount: 1_000 }, { "idempotency-key": "sepa-e2e-acsc" });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    expect(await balanceOf(prod, "EUR")).toBe(10_000 - 1_500 - 2_500 - 1_000);

    expect(await until(paid.body.id, "COMPLETED")).toMatchObject({ status: "COMPLETED" });
    const failedRefused = await until(refused.body.id, "FAILED");
    const failedReturned = await until(bounced.body.id, "FAILED");
    expect(failedRefused).toMatchObject({ status: "FAILED" });
    expect(failedReturned).toMatchObject({ status: "FAILED" });
    expect(await balanceOf(prod, "EUR")).toBe(10_000 - 1_000);

    // What the connector reported: the refusal never completed; the return came after completion.
    const outcomes = async (id: string) => ((await sepa.db.selectFrom("connector_outcomes").select(["status", "reason"]).where("transaction_id", "=", id).orderBy("sequence").execute()) as { status: string; reason: string }[]).map((o) => `${o.status}${o.reason ? ` ${o.reason}` : ""}`);
    expect(await outcomes(refused.body.id)).toEqual(["PROCESSING", "REJECTED AC01"]);
    expect(await outcomes(bounced.body.id)).toEqual(["PROCESSING", "COMPLETED", "RETURNED AC04"]);
    await eventually(async () => ((await events("OUTGOING_PAYMENT_FAILED", refused.body.id)).length === 1 ? true : undefined), 30_000);
    await eventually(async () => ((await events("OUTGOING_PAYMENT_FAILED", bounced.body.id)).length === 1 ? true : undefined), 30_000);
    expect(await events("OUTGOING_PAYMENT_COMPLETED", refused.body.id)).toEqual([]);
    expect(await events("OUTGOING_PAYMENT_COMPLETED", bounced.body.id)).toHaveLength(1);

    // The bank read each transfer once, in pain.001 files of its own parser.
    const transfers = bank.received.flatMap((f) => f.transfers);
    expect(transfers.map((t) => [t.creditorIban, t.amount]).sort()).toEqual([[REJECTED_IBAN, "15.00"], [RETURNED_IBAN, "25.00"], [SETTLED_IBAN, "10.00"]].sort());
  });
});
