import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId } from "@corridor/kit";
import { CustomerEventSchema } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountInfoForRead, validateAccountInfo } from "../src/domain/account-info.js";
import { customerAccountStatus } from "../src/domain/account-status.js";
import { RailOutcomeSchema } from "@corridor/proto/corridor/ledger/v1/rails_pb.js";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { directionOf, settledAtOf } from "../src/domain/transactions.js";
import { publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

/** The ledger's read models as Grid's schema needs them (issue 10): direction, account status and totals, rails. */
describe("ledger read models", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  async function setup() {
    const platformId = await h.newPlatform({ currencies: ["USD"] });
    const [account] = (await h.ledger.listInternalAccounts({ platformId, owner: "PLATFORM", currency: "USD" })).accounts;
    const ext = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo() })).account!;
    return { platformId, account: account!, ext };
  }

  describe("transaction direction", () => {
    it("follows the money, not the type", () => {
      expect(directionOf({ internal_account_id: "InternalAccount:a", source_account_id: "InternalAccount:a" })).toBe("DEBIT");
      expect(directionOf({ internal_account_id: "InternalAccount:a", source_account_id: "ExternalAccount:e" })).toBe("CREDIT");
      // Incoming UMA: no source account, the internal account is credited (even when paid onward).
      expect(directionOf({ internal_account_id: "InternalAccount:a", source_account_id: "" })).toBe("CREDIT");
      // A real-time-funded quote touches no internal account: the customer pays out from outside.
      expect(directionOf({ internal_account_id: null, source_account_id: "" })).toBe("DEBIT");
    });

    it("is DEBIT on a transfer-out and CREDIT on a transfer-in, in GET and list", async () => {
      const { platformId, account, ext } = await setup();
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 10_000n });
      const out = await h.ledger.transferOut({ transfer: { platformId, sourceAccountId: account.id, destinationAccountId: ext.id, amount: 100n, idempotencyKey: "" } });
      const into = await h.ledger.transferIn({ transfer: { platformId, sourceAccountId: ext.id, destinationAccountId: account.id, amount: 200n, idempotencyKey: "" } });
      expect(out.result?.transaction?.direction).toBe("DEBIT");
      expect(into.result?.transaction?.direction).toBe("CREDIT");
      const got = await h.ledger.getTransaction({ platformId, transactionId: into.result!.transaction!.id });
      expect(got.transaction?.direction).toBe("CREDIT");
      const { transactions } = await h.ledger.listTransactions({ platformId });
      expect(Object.fromEntries(transactions.map((t) => [t.type, t.direction]))).toMatchObject({ OUTGOING: "DEBIT", INCOMING: "CREDIT" });
    });
  });

  describe("internal account status and totalBalance", () => {
    it("derives a customer account's status from the customer", () => {
      expect(customerAccountStatus(undefined)).toBe("PENDING");
      expect(customerAccountStatus({ closed: false, isDeleted: false, verificationStatus: null })).toBe("PENDING");
      expect(customerAccountStatus({ closed: false, isDeleted: false, verificationStatus: "PENDING" })).toBe("PENDING");
      expect(customerAccountStatus({ closed: false, isDeleted: false, verificationStatus: "APPROVED" })).toBe("ACTIVE");
      expect(customerAccountStatus({ closed: false, isDeleted: false, verificationStatus: "REJECTED" })).toBe("FROZEN");
      expect(customerAccountStatus({ closed: true, isDeleted: false, verificationStatus: "APPROVED" })).toBe("CLOSED");
      expect(customerAccountStatus({ closed: false, isDeleted: true, verificationStatus: "APPROVED" })).toBe("CLOSED");
    });

    it("keeps platform accounts ACTIVE and moves a customer's accounts with its verification and deletion", async () => {
      const { platformId, account } = await setup();
      expect(account.status).toBe("ACTIVE");
      const customerId = await h.newCustomer(platformId, { status: "PENDING" });
      const statuses = async () => (await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId })).accounts.map((a) => a.status);
      expect(new Set(await statuses())).toEqual(new Set(["PENDING"]));
      const update = (verificationStatus: string, isDeleted = false) =>
        h.deliver(
          "customer-accounts",
          create(CustomerEventSchema, {
            eventId: newId("Event"),
            occurredAt: timestampFromDate(h.clock.now()),
            platformId,
            payload: { case: "customerUpdated", value: { customer: { customerId, platformId, platformCustomerId: "pc-x", currencies: ["USD"], verificationStatus, isDeleted } } },
          }),
        );
      await update("APPROVED");
      expect(new Set(await statuses())).toEqual(new Set(["ACTIVE"]));
      await update("REJECTED");
      expect(new Set(await statuses())).toEqual(new Set(["FROZEN"]));
      await update("APPROVED");
      expect((await h.ledger.getCustomerHoldings({ platformId, customerId, close: true })).closed).toBe(true);
      expect(new Set(await statuses())).toEqual(new Set(["CLOSED"]));
    });

    it("answers the posted balance (available plus held) beside the available one", async () => {
      const { platformId, account, ext } = await setup();
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 10_000n });
      await h.ledger.transferOut({ transfer: { platformId, sourceAccountId: account.id, destinationAccountId: ext.id, amount: 2_500n, idempotencyKey: "" } });
      const got = (await h.ledger.getInternalAccount({ platformId, accountId: account.id })).account!;
      expect(got.available).toBe(7_500n);
      expect(got.held).toBe(2_500n);
      expect(got.balance).toBe(10_000n);
    });
  });

  describe("accountInfo countries and paymentRails", () => {
    const eur = { accountType: "EUR_ACCOUNT", iban: "DE89370400440532013000", beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace" } };
    const fieldsOf = (r: ReturnType<typeof validateAccountInfo>) => ("errors" in r ? r.errors.map((e) => `${e.field}: ${e.reason}`) : []);

    it("accepts and keeps them, and rejects rails of another currency, unknown countries and repeats", () => {
      const ok = validateAccountInfo("USD", usdInfo("123456789000", { countries: ["US"], paymentRails: ["RTP", "ACH"] }));
      expect("ok" in ok && ok.ok.info).toMatchObject({ countries: ["US"], paymentRails: ["RTP", "ACH"] });
      expect(fieldsOf(validateAccountInfo("USD", usdInfo("123456789000", { paymentRails: ["SEPA"] })))).toEqual(["accountInfo.paymentRails[0]: must be one of ACH, WIRE, RTP, FEDNOW"]);
      expect(fieldsOf(validateAccountInfo("USD", usdInfo("123456789000", { paymentRails: ["ACH", "ACH"] })))).toEqual(["accountInfo.paymentRails[1]: is repeated"]);
      expect(fieldsOf(validateAccountInfo("USD", usdInfo("123456789000", { paymentRails: [] })))[0]).toMatch(/^accountInfo.paymentRails: must be an array/);
      expect(fieldsOf(validateAccountInfo("USD", usdInfo("123456789000", { countries: ["usa"] })))).toEqual(["accountInfo.countries[0]: must be ISO 3166-1 alpha-2 code"]);
      expect(fieldsOf(validateAccountInfo("EUR", { ...eur, paymentRails: ["ACH"] }))).toEqual(["accountInfo.paymentRails[0]: must be one of SEPA, SEPA_INSTANT"]);
      // Wallets have no rails or countries to name.
      expect(fieldsOf(validateAccountInfo("BTC", { accountType: "LIGHTNING", invoice: "lnbc1" + "q".repeat(30), paymentRails: ["ACH"] }))).toEqual([
        "accountInfo.paymentRails: is not a known field",
      ]);
    });

    it("answers a default per currency when none was given", () => {
      expect(accountInfoForRead({ accountType: "USD_ACCOUNT" }).paymentRails).toEqual(["ACH", "WIRE"]);
      expect(accountInfoForRead({ accountType: "EUR_ACCOUNT" }).paymentRails).toEqual(["SEPA", "SEPA_INSTANT"]);
      expect(accountInfoForRead({ accountType: "USD_ACCOUNT", paymentRails: ["FEDNOW"] }).paymentRails).toEqual(["FEDNOW"]);
      expect(accountInfoForRead({ accountType: "BRL_ACCOUNT" })).not.toHaveProperty("paymentRails");
    });

    it("stores them and answers them through the RPCs; a bad value changes nothing", async () => {
      const platformId = await h.newPlatform({ currencies: ["USD"] });
      const given = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo("123456789001", { countries: ["US"], paymentRails: ["RTP"] }) })).account!;
      expect(given.accountInfo).toMatchObject({ countries: ["US"], paymentRails: ["RTP"] });
      const plain = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "EUR", accountInfo: eur })).account!;
      expect((await h.ledger.getExternalAccount({ platformId, owner: "PLATFORM", accountId: plain.id })).account?.accountInfo).toMatchObject({ paymentRails: ["SEPA", "SEPA_INSTANT"] });
      const err = await publicError(h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo("123456789002", { paymentRails: ["SEPA"] }) }));
      expect(err.code).toBe("INVALID_INPUT");
      expect((await h.ledger.listExternalAccounts({ platformId, owner: "PLATFORM" })).accounts).toHaveLength(2);
    });
  });

  describe("settledAt while in flight", () => {
    const at = new Date("2026-01-01T00:06:00Z");
    it("is the settlement, else the rail's estimate while PENDING or PROCESSING, else nothing", () => {
      const settled = new Date("2026-01-01T00:01:00Z");
      expect(settledAtOf({ status: "COMPLETED", settled_at: settled, expected_settlement_at: at })).toBe(settled);
      expect(settledAtOf({ status: "PROCESSING", settled_at: null, expected_settlement_at: at })).toBe(at);
      expect(settledAtOf({ status: "PENDING", settled_at: null, expected_settlement_at: at })).toBe(at);
      expect(settledAtOf({ status: "PROCESSING", settled_at: null, expected_settlement_at: null })).toBeNull();
      for (const status of ["FAILED", "REJECTED", "EXPIRED", "REFUNDED"]) expect(settledAtOf({ status, settled_at: null, expected_settlement_at: at })).toBeNull();
    });

    it("answers the estimate a rail outcome carried, and drops it when the payment fails", async () => {
      const { platformId, account, ext } = await setup();
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 10_000n });
      const out = await h.ledger.transferOut({ transfer: { platformId, sourceAccountId: account.id, destinationAccountId: ext.id, amount: 100n, idempotencyKey: "" } });
      const id = out.result!.transaction!.id;
      expect(out.result!.transaction!.settledAt).toBeUndefined();
      const outcome = (status: string, reason = "") =>
        h.deliver(
          "rail-outcomes",
          create(RailOutcomeSchema, { eventId: newId("Event"), occurredAt: timestampFromDate(h.clock.now()), platformId, transactionId: id, status, reason, expectedSettlementAt: timestampFromDate(at) }),
        );
      await outcome("PROCESSING");
      const inFlight = (await h.ledger.getTransaction({ platformId, transactionId: id })).transaction!;
      expect(inFlight.status).toBe("PROCESSING");
      expect(timestampDate(inFlight.settledAt!).toISOString()).toBe(at.toISOString());
      await outcome("FAILED", "TIMED_OUT");
      const failed = (await h.ledger.getTransaction({ platformId, transactionId: id })).transaction!;
      expect(failed.status).toBe("FAILED");
      expect(failed.settledAt).toBeUndefined();
    });
  });
});
