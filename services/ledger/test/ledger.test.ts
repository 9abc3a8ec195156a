import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId } from "@corridor/kit";
import { PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceSums, publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

describe("ledger service", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  const platformAccounts = async (platformId: string, currency = "") =>
    (await h.ledger.listInternalAccounts({ platformId, owner: "PLATFORM", currency })).accounts;

  async function setup(currencies = ["USD"]) {
    const platformId = await h.newPlatform({ currencies });
    const [account] = await platformAccounts(platformId, "USD");
    const ext = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo() })).account!;
    return { platformId, account: account!, ext };
  }

  const out = (platformId: string, source: string, destination: string, amount: bigint, idempotencyKey = "") =>
    h.ledger.transferOut({ transfer: { platformId, sourceAccountId: source, destinationAccountId: destination, amount, idempotencyKey } });

  describe("accounts opened by events", () => {
    it("opens one platform account per supported currency, and only the missing ones on a config update", async () => {
      const platformId = await h.newPlatform({ currencies: ["USD", "USDC"] });
      const accounts = await platformAccounts(platformId);
      expect(accounts.map((a) => [a.currency?.code, a.type]).sort()).toEqual([
        ["USD", "INTERNAL_FIAT"],
        ["USDC", "INTERNAL_CRYPTO"],
      ]);
      const usd = accounts.find((a) => a.currency?.code === "USD")!;
      expect(usd.fundingPaymentInstructions[0]?.accountOrWalletInfo).toMatchObject({ accountType: "USD_ACCOUNT", routingNumber: expect.any(String), reference: expect.any(String) });
      expect(usd.fundingPaymentInstructions[0]?.isPlatformAccount).toBe(true);
      const usdc = accounts.find((a) => a.currency?.code === "USDC")!;
      expect(usdc.fundingPaymentInstructions[0]?.accountOrWalletInfo).toMatchObject({ accountType: "SPARK_WALLET", address: expect.stringMatching(/^sparkrt1/) });

      const update = create(PlatformEventSchema, {
        eventId: newId("Event"),
        occurredAt: timestampFromDate(h.clock.now()),
        platformId,
        payload: { case: "configUpdated", value: { config: { platformId, supportedCurrencies: [{ currencyCode: "USD" }, { currencyCode: "EUR" }] } } },
      });
      await h.deliver("platform-accounts", update);
      await h.deliver("platform-accounts", update); // a redelivery changes nothing
      const after = await platformAccounts(platformId);
      expect(after.map((a) => a.currency?.code).sort()).toEqual(["EUR", "USD", "USDC"]);
      const refs = after.flatMap((a) => a.fundingPaymentInstructions.map((i) => (i.accountOrWalletInfo as any).reference ?? (i.accountOrWalletInfo as any).address));
      expect(new Set(refs).size).toBe(refs.length);
    });

    it("opens a customer's account per enabled currency plus one USDC embedded wallet", async () => {
      const platformId = await h.newPlatform();
      const customerId = await h.newCustomer(platformId, { currencies: ["USD", "USDC"] });
      const { accounts } = await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId });
      expect(accounts.map((a) => `${a.type}:${a.currency?.code}`).sort()).toEqual(["EMBEDDED_WALLET:USDC", "INTERNAL_CRYPTO:USDC", "INTERNAL_FIAT:USD"]);
      expect(accounts.every((a) => a.customerId === customerId && a.fundingPaymentInstructions[0]?.isPlatformAccount === false)).toBe(true);
      const wallets = await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", type: "EMBEDDED_WALLET" });
      expect(wallets.accounts).toHaveLength(1);
    });

    it("never shows one platform's accounts to another", async () => {
      const a = await setup();
      const b = await h.newPlatform();
      const err = await publicError(h.ledger.getInternalAccount({ platformId: b, accountId: a.account.id }));
      expect(err.code).toBe("INTERNAL_ACCOUNT_NOT_FOUND");
      const err2 = await publicError(out(b, a.account.id, a.ext.id, 1n));
      expect(err2.outcome).toBe("NOT_FOUND");
    });
  });

  describe("external accounts", () => {
    it("keeps at most one default UMA deposit account per customer, even when set concurrently", async () => {
      const platformId = await h.newPlatform();
      const customerId = await h.newCustomer(platformId);
      const create = (n: number) =>
        h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "USD", accountInfo: usdInfo(`55500${n}000`), defaultUmaDepositAccount: true });
      const made = await Promise.all([1, 2, 3, 4].map(create));
      const { accounts } = await h.ledger.listExternalAccounts({ platformId, owner: "CUSTOMER", customerId });
      expect(accounts).toHaveLength(4);
      expect(accounts.filter((a) => a.defaultUmaDepositAccount)).toHaveLength(1);
      const last = await create(5);
      const after = await h.ledger.listExternalAccounts({ platformId, owner: "CUSTOMER", customerId });
      expect(after.accounts.filter((a) => a.defaultUmaDepositAccount).map((a) => a.id)).toEqual([last.account!.id]);
      expect(made).toHaveLength(4);
    });

    it("answers 400 INVALID_BANK_ACCOUNT for beneficiary suffix 105 and stores nothing", async () => {
      const platformId = await h.newPlatform();
      const err = await publicError(h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo("123456105") }));
      expect(err).toMatchObject({ outcome: "INVALID", code: "INVALID_BANK_ACCOUNT" });
      expect((await h.ledger.listExternalAccounts({ platformId, owner: "PLATFORM" })).accounts).toEqual([]);
    });

    it("answers 404 for a customer the customers service does not know", async () => {
      const platformId = await h.newPlatform();
      const err = await publicError(h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId: "Customer:nope", currency: "USD", accountInfo: usdInfo() }));
      expect(err.code).toBe("USER_NOT_FOUND");
    });
  });

  describe("sandbox funding", () => {
    it("credits the account against the sandbox funding account so the currency still sums to zero", async () => {
      const { platformId, account } = await setup();
      const res = await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 5000n });
      expect(res.account?.available).toBe(5000n);
      expect((await balanceSums(h.db, platformId)).get("USD")).toBe(0n);
    });

    it("refuses amounts outside 1..100000000000 and production platforms", async () => {
      const { platformId, account } = await setup();
      expect((await publicError(h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 100_000_000_001n }))).code).toBe("INVALID_INPUT");
      expect((await publicError(h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 0n }))).code).toBe("INVALID_INPUT");
      const prod = await h.newPlatform({ environment: Environment.PRODUCTION });
      const [acct] = await platformAccounts(prod);
      expect((await publicError(h.ledger.fundInternalAccount({ platformId: prod, accountId: acct!.id, amount: 1n }))).outcome).toBe("FORBIDDEN");
    });
  });

  describe("transfer-out", () => {
    it("holds the amount at once, then moves it to rail clearing when the rail completes", async () => {
      const { platformId, account, ext } = await setup();
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 10_000n });
      const res = await out(platformId, account.id, ext.id, 4000n);
      const tx = res.result!.transaction!;
      expect(tx).toMatchObject({ status: "PENDING", type: "OUTGOING", amount: 4000n, reference: expect.stringMatching(/^TXN-/) });
      let acct = (await h.ledger.getInternalAccount({ platformId, accountId: account.id })).account!;
      expect([acct.balance, acct.held, acct.available]).toEqual([10_000n, 4000n, 6000n]);
      const instr = (await h.railInstructions()).find((i) => i.transactionId === tx.id)!;
      expect(instr).toMatchObject({ direction: "PAYOUT", amount: 4000n, currency: "USD", externalAccountId: ext.id });

      await h.outcome(platformId, tx.id, "PROCESSING");
      await h.outcome(platformId, tx.id, "COMPLETED");
      await h.outcome(platformId, tx.id, "COMPLETED"); // a second report (new event id) changes nothing
      acct = (await h.ledger.getInternalAccount({ platformId, accountId: account.id })).account!;
      expect([acct.balance, acct.held, acct.available]).toEqual([6000n, 0n, 6000n]);
      const done = (await h.ledger.getTransaction({ platformId, transactionId: tx.id })).transaction!;
      expect(done.status).toBe("COMPLETED");
      expect(done.settledAt).toBeDefined();
      expect((await balanceSums(h.db, platformId)).get("USD")).toBe(0n);
      const types = (await h.ledgerEvents()).filter((e) => e.payload.case === "transactionChanged" && e.payload.value.transaction?.id === tx.id).map((e) => e.eventType);
      expect(types).toEqual(["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_PROCESSING", "OUTGOING_PAYMENT_COMPLETED"]);
    });

    it("releases the hold when the bank rejects it (FAILED, not REJECTED), and ignores outcomes after that", async () => {
      const { platformId, account, ext } = await setup();
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 1000n });
      const tx = (await out(platformId, account.id, ext.id, 1000n)).result!.transaction!;
      await h.outcome(platformId, tx.id, "REJECTED", "BANK_REJECTED");
      await h.outcome(platformId, tx.id, "COMPLETED");
      const acct = (await h.ledger.getInternalAccount({ platformId, accountId: account.id })).account!;
      expect([acct.balance, acct.held]).toEqual([1000n, 0n]);
      const t = (await h.ledger.getTransaction({ platformId, transactionId: tx.id })).transaction!;
      expect(t).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED", failureDetail: "BANK_REJECTED" });
      const types = (await h.ledgerEvents()).filter((e) => e.payload.case === "transactionChanged" && e.payload.value.transaction?.id === tx.id).map((e) => e.eventType);
      expect(types).toEqual(["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_FAILED"]);
    });

    it("names the bank's rejection when the rail gives no cause", async () => {
      const { platformId, account, ext } = await setup();
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 10n });
      const tx = (await out(platformId, account.id, ext.id, 10n)).result!.transaction!;
      await h.outcome(platformId, tx.id, "REJECTED");
      const t = (await h.ledger.getTransaction({ platformId, transactionId: tx.id })).transaction!;
      expect(t).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED", failureDetail: "BANK_REJECTED" });
    });

    it("answers 400 INSUFFICIENT_BALANCE beyond the available balance (holds count)", async () => {
      const { platformId, account, ext } = await setup();
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 1000n });
      await out(platformId, account.id, ext.id, 600n);
      const err = await publicError(out(platformId, account.id, ext.id, 500n));
      expect(err).toMatchObject({ outcome: "INVALID", code: "INSUFFICIENT_BALANCE" });
    });

    it("answers 400 CURRENCY_MISMATCH when the accounts' currencies differ", async () => {
      const { platformId } = await setup(["USD", "EUR"]);
      const [eur] = await platformAccounts(platformId, "EUR");
      const ext = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo("55554444") })).account!;
      expect((await publicError(out(platformId, eur!.id, ext.id, 1n))).code).toBe("CURRENCY_MISMATCH");
    });

    it("answers 403 USER_NOT_READY for a customer that is not APPROVED", async () => {
      const platformId = await h.newPlatform();
      const customerId = await h.newCustomer(platformId, { status: "PENDING" });
      const [acct] = (await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId, currency: "USD" })).accounts;
      await h.ledger.fundInternalAccount({ platformId, accountId: acct!.id, amount: 100n });
      const ext = (await h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "USD", accountInfo: usdInfo() })).account!;
      const err = await publicError(out(platformId, acct!.id, ext.id, 10n));
      expect(err).toMatchObject({ outcome: "FORBIDDEN", code: "USER_NOT_READY" });
      h.customers.get(customerId)!.verificationStatus = "APPROVED";
      const ok = await out(platformId, acct!.id, ext.id, 10n);
      expect(ok.result?.transaction?.platformCustomerId).toBe(h.customers.get(customerId)!.platformCustomerId);
    });

    it("answers 400 TRANSACTION_TYPE_NOT_ENABLED in either direction the platform's config does not enable, holding nothing", async () => {
      const { platformId, account, ext } = await setup();
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 1000n });
      h.transactionTypes.set(platformId, { USD: ["INCOMING"] });
      expect(await publicError(out(platformId, account.id, ext.id, 10n))).toMatchObject({ outcome: "INVALID", code: "TRANSACTION_TYPE_NOT_ENABLED" });
      expect((await h.ledger.getInternalAccount({ platformId, accountId: account.id })).account!.available).toBe(1000n);
      await h.ledger.transferIn({ transfer: { platformId, sourceAccountId: ext.id, destinationAccountId: account.id, amount: 5n } });
      h.transactionTypes.set(platformId, { USD: ["OUTGOING"] });
      const pull = await publicError(h.ledger.transferIn({ transfer: { platformId, sourceAccountId: ext.id, destinationAccountId: account.id, amount: 5n } }));
      expect(pull).toMatchObject({ outcome: "INVALID", code: "TRANSACTION_TYPE_NOT_ENABLED" });
      await out(platformId, account.id, ext.id, 10n);
      h.transactionTypes.delete(platformId);
    });

    it("answers 400 PAYMENT_RAIL_NOT_AVAILABLE naming currency and rail on a production platform whose rail no connector serves, holding nothing", async () => {
      const platformId = await h.newPlatform({ environment: Environment.PRODUCTION });
      const [acct] = await platformAccounts(platformId);
      const ext = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo() })).account!;
      const refusal = await publicError(out(platformId, acct!.id, ext.id, 1n));
      expect(refusal).toMatchObject({ outcome: "INVALID", code: "PAYMENT_RAIL_NOT_AVAILABLE", details: { currency: "USD", paymentRail: "ACH", paymentRails: ["ACH", "WIRE"] } });
      const pull = await publicError(h.ledger.transferIn({ transfer: { platformId, sourceAccountId: ext.id, destinationAccountId: acct!.id, amount: 1n } }));
      expect(pull).toMatchObject({ outcome: "INVALID", code: "PAYMENT_RAIL_NOT_AVAILABLE", details: { currency: "USD", paymentRail: "ACH" } });
      expect((await h.ledger.listTransactions({ platformId })).transactions).toHaveLength(0);
      expect((await h.ledger.getInternalAccount({ platformId, accountId: acct!.id })).account!.available).toBe(0n);
    });
  });

  describe("transfer-in", () => {
    it("credits the internal account only when the pull completes", async () => {
      const { platformId, account, ext } = await setup();
      const tx = (await h.ledger.transferIn({ transfer: { platformId, sourceAccountId: ext.id, destinationAccountId: account.id, amount: 700n } })).result!.transaction!;
      expect(tx).toMatchObject({ type: "INCOMING", status: "PENDING" });
      expect((await h.ledger.getInternalAccount({ platformId, accountId: account.id })).account!.balance).toBe(0n);
      await h.outcome(platformId, tx.id, "COMPLETED");
      expect((await h.ledger.getInternalAccount({ platformId, accountId: account.id })).account!.balance).toBe(700n);
      expect((await balanceSums(h.db, platformId)).get("USD")).toBe(0n);
    });

    it.each([
      ["FAILED", "INSUFFICIENT_FUNDS", "INSUFFICIENT_FUNDS"],
      ["REJECTED", "BANK_REJECTED", "BANK_REJECTED"],
      ["REJECTED", "", "BANK_REJECTED"],
    ])("a pull the rail reports %s (%s) ends FAILED OFFRAMP_FAILED and credits nothing", async (status, reason, detail) => {
      const { platformId, account, ext } = await setup();
      const tx = (await h.ledger.transferIn({ transfer: { platformId, sourceAccountId: ext.id, destinationAccountId: account.id, amount: 700n } })).result!.transaction!;
      await h.outcome(platformId, tx.id, status, reason);
      await h.outcome(platformId, tx.id, "COMPLETED");
      const t = (await h.ledger.getTransaction({ platformId, transactionId: tx.id })).transaction!;
      expect(t).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED", failureDetail: detail });
      expect((await h.ledger.getInternalAccount({ platformId, accountId: account.id })).account!.balance).toBe(0n);
      const types = (await h.ledgerEvents()).filter((e) => e.payload.case === "transactionChanged" && e.payload.value.transaction?.id === tx.id).map((e) => e.eventType);
      expect(types).toEqual(["INCOMING_PAYMENT_PENDING", "INCOMING_PAYMENT_FAILED"]);
    });

    it("refuses sources that cannot be pulled from, pointing at the funding instructions", async () => {
      const { platformId } = await setup(["USD", "EUR"]);
      const [eur] = await platformAccounts(platformId, "EUR");
      const ext = (
        await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: "DE89370400440532013000" } })
      ).account!;
      const err = await publicError(h.ledger.transferIn({ transfer: { platformId, sourceAccountId: ext.id, destinationAccountId: eur!.id, amount: 1n } }));
      expect(err.code).toBe("TRANSFER_IN_NOT_SUPPORTED");
      expect(err.message).toMatch(/fundingPaymentInstructions/);
    });
  });

  describe("Idempotency-Key", () => {
    it("replays the first answer for the same body and moves money once", async () => {
      const { platformId, account, ext } = await setup();
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 1000n });
      const first = await out(platformId, account.id, ext.id, 100n, "k1");
      const again = await out(platformId, account.id, ext.id, 100n, "k1");
      expect(again.result?.replayed).toBe(true);
      expect(again.result?.transaction?.id).toBe(first.result?.transaction?.id);
      expect((await h.ledger.getInternalAccount({ platformId, accountId: account.id })).account!.available).toBe(900n);
    });

    it("answers 422 IDEMPOTENCY_KEY_REUSED for another body", async () => {
      const { platformId, account, ext } = await setup();
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 1000n });
      await out(platformId, account.id, ext.id, 100n, "k2");
      const err = await publicError(out(platformId, account.id, ext.id, 101n, "k2"));
      expect(err).toMatchObject({ outcome: "UNPROCESSABLE", code: "IDEMPOTENCY_KEY_REUSED" });
    });

    it("lets concurrent duplicates create one transaction (the others see 409 IN_USE or the replay)", async () => {
      const { platformId, account, ext } = await setup();
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 1000n });
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => out(platformId, account.id, ext.id, 100n, "k3")));
      const ids = new Set(results.flatMap((r) => (r.status === "fulfilled" ? [r.value.result!.transaction!.id] : [])));
      expect(ids.size).toBe(1);
      for (const r of results) if (r.status === "rejected") expect((await publicError(Promise.reject(r.reason))).code).toBe("IDEMPOTENCY_KEY_IN_USE");
      expect((await h.ledger.getInternalAccount({ platformId, accountId: account.id })).account!.available).toBe(900n);
    });

    it("frees the key when the effect fails, so a retry after funding succeeds", async () => {
      const { platformId, account, ext } = await setup();
      expect((await publicError(out(platformId, account.id, ext.id, 100n, "k4"))).code).toBe("INSUFFICIENT_BALANCE");
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 100n });
      expect((await out(platformId, account.id, ext.id, 100n, "k4")).result?.replayed).toBe(false);
    });
  });

  describe("paging", () => {
    const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const forged = [cursorOf({ k: "x", id: "y" }), cursorOf({ k: "2026", id: "y" }), cursorOf({ k: 5, id: "y" }), "%%%"];

    it("answers 400 INVALID_INPUT on cursor for a forged cursor on every list, never an internal error", async () => {
      const { platformId } = await setup();
      for (const cursor of forged) {
        const page = { limit: 1, cursor };
        for (const call of [
          h.ledger.listTransactions({ platformId, page }),
          h.ledger.listInternalAccounts({ platformId, owner: "PLATFORM", page }),
          h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", page }),
          h.ledger.listExternalAccounts({ platformId, owner: "PLATFORM", page }),
          h.ledger.listExternalAccounts({ platformId, owner: "CUSTOMER", page }),
        ]) {
          const err = await publicError(call);
          expect(err, cursor).toMatchObject({ outcome: "INVALID", code: "INVALID_INPUT" });
          expect((err.details as any)?.errors?.map((e: any) => e.field)).toEqual(["cursor"]);
        }
      }
    });

    it("follows the cursors it issues to the end of each list", async () => {
      const { platformId, account, ext } = await setup(["USD", "EUR"]);
      await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo("223456789000") });
      await h.ledger.fundInternalAccount({ platformId, accountId: account.id, amount: 10n });
      for (let i = 0; i < 3; i++) await out(platformId, account.id, ext.id, 1n);
      const walk = async (list: (cursor: string) => Promise<{ ids: string[]; next: string }>) => {
        const ids: string[] = [];
        let cursor = "";
        do {
          const page = await list(cursor);
          ids.push(...page.ids);
          cursor = page.next;
        } while (cursor);
        return ids;
      };
      const txs = await walk(async (cursor) => {
        const r = await h.ledger.listTransactions({ platformId, page: { limit: 1, cursor } });
        return { ids: r.transactions.map((t) => t.id), next: r.pageInfo!.nextCursor };
      });
      expect(txs).toHaveLength(3);
      expect(new Set(txs).size).toBe(3);
      const internal = await walk(async (cursor) => {
        const r = await h.ledger.listInternalAccounts({ platformId, owner: "PLATFORM", page: { limit: 1, cursor } });
        return { ids: r.accounts.map((a) => a.id), next: r.pageInfo!.nextCursor };
      });
      expect(internal).toHaveLength(2);
      const external = await walk(async (cursor) => {
        const r = await h.ledger.listExternalAccounts({ platformId, owner: "PLATFORM", page: { limit: 1, cursor } });
        return { ids: r.accounts.map((a) => a.id), next: r.pageInfo!.nextCursor };
      });
      expect(external).toHaveLength(2);
    });
  });
});
