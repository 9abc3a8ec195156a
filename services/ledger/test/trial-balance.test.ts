import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId } from "@corridor/kit";
import type { CurrencyTrialBalance } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { service } from "../src/server.js";
import { publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

/** LedgerAdminService.GetTrialBalance: per currency sums over every account, system ones included. */
describe("ledger trial balance", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  const trial = async (platformId = "") => new Map((await h.admin.getTrialBalance({ platformId })).currencies.map((c) => [c.currency, c]));
  const group = (c: CurrencyTrialBalance | undefined, ownerKind: string, accountType: string) =>
    c?.groups.find((g) => g.ownerKind === ownerKind && g.accountType === accountType);
  const expectBalanced = (byCurrency: Map<string, CurrencyTrialBalance>) => {
    for (const c of byCurrency.values()) {
      expect(c.balanceSum, `balances of ${c.currency}`).toBe(0n);
      expect(c.postingSum, `postings of ${c.currency}`).toBe(0n);
      expect(c.mismatchedAccountCount, `mismatched accounts of ${c.currency}`).toBe(0n);
    }
  };

  /** A USD/EUR platform whose customer paid 10.00 USD (0.50 fee) for 8.50 EUR and sent 3.00 USD out. */
  async function booked() {
    const platformId = await h.newPlatform({ currencies: ["USD", "EUR"] });
    const customerId = await h.newCustomer(platformId, { currencies: ["USD", "EUR"] });
    const accounts = (await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId })).accounts;
    const usd = accounts.find((a) => a.type === "INTERNAL_FIAT" && a.currency?.code === "USD")!;
    await h.ledger.fundInternalAccount({ platformId, accountId: usd.id, amount: 5000n });
    const eurExt = (
      await h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: "DE89370400440532013000" } })
    ).account!;
    const tx = (
      await h.ledger.createQuoteTransaction({
        platformId,
        quoteId: newId("Quote"),
        customerId,
        source: { type: "INTERNAL_ACCOUNT", accountId: usd.id },
        destination: { type: "EXTERNAL_ACCOUNT", accountId: eurExt.id, paymentRail: "SEPA" },
        sendingCurrency: "USD",
        totalSendingAmount: 1000n,
        receivingCurrency: "EUR",
        totalReceivingAmount: 850n,
        feesIncluded: 50n,
        exchangeRate: "1.11764705",
        expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + 5 * 60_000)),
      })
    ).transaction!;
    await h.ledger.executeQuoteTransaction({ platformId, transactionId: tx.id });
    const usdExt = (await h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "USD", accountInfo: usdInfo() })).account!;
    const out = (await h.ledger.transferOut({ transfer: { platformId, sourceAccountId: usd.id, destinationAccountId: usdExt.id, amount: 300n } })).result!.transaction!;
    await h.outcome(platformId, out.id, "COMPLETED");
    return { platformId, usd };
  }

  it("sums every account of the platform per currency to zero, and shows where the money is", async () => {
    const { platformId } = await booked();
    const tb = await trial(platformId);
    expectBalanced(tb);
    const usd = tb.get("USD")!;
    const eur = tb.get("EUR")!;
    expect(group(usd, "CUSTOMER", "INTERNAL_FIAT")).toMatchObject({ balanceSum: 5000n - 1000n - 300n, accountCount: 1n });
    expect(group(usd, "PLATFORM", "INTERNAL_FIAT")).toMatchObject({ balanceSum: 0n, accountCount: 1n });
    expect(group(usd, "SYSTEM", "SANDBOX_FUNDING")?.balanceSum).toBe(-5000n);
    expect(group(usd, "SYSTEM", "FEE_REVENUE")?.balanceSum).toBe(50n);
    expect(group(usd, "SYSTEM", "FX_POOL")?.balanceSum).toBe(950n);
    expect(group(usd, "SYSTEM", "RAIL_CLEARING")?.balanceSum).toBe(300n);
    expect(group(eur, "SYSTEM", "FX_POOL")?.balanceSum).toBe(-850n);
    expect(group(eur, "SYSTEM", "RAIL_CLEARING")?.balanceSum).toBe(850n);
    expect(group(eur, "CUSTOMER", "INTERNAL_FIAT")).toMatchObject({ balanceSum: 0n, accountCount: 1n });
    // Accounts are counted, not only those with money: the customer's USDC embedded wallet too.
    expect(tb.get("USDC")).toMatchObject({ accountCount: 1n, balanceSum: 0n });
    expect(usd.accountCount).toBe(usd.groups.reduce((n, g) => n + g.accountCount, 0n));
    expect(usd.accountCount).toBe(6n); // customer, platform, sandbox funding, fee revenue, FX pool, rail clearing
  });

  it("keeps platforms apart, and sums the whole ledger when no platform is named", async () => {
    const a = await booked();
    const b = await h.newPlatform({ currencies: ["USD"] });
    const onlyB = await trial(b);
    expect([...onlyB.keys()]).toEqual(["USD"]);
    expect(onlyB.get("USD")).toMatchObject({ accountCount: 1n, balanceSum: 0n, groups: [{ ownerKind: "PLATFORM", accountType: "INTERNAL_FIAT", balanceSum: 0n, accountCount: 1n }] });
    const all = await trial();
    expectBalanced(all);
    expect(all.get("USD")!.accountCount).toBeGreaterThan((await trial(a.platformId)).get("USD")!.accountCount);
    expect(group(all.get("USD"), "SYSTEM", "SANDBOX_FUNDING")!.balanceSum).toBeLessThanOrEqual(-10000n); // two booked platforms at least
  });

  it("shows a balance that no journal entry explains", async () => {
    const { platformId, usd } = await booked();
    const accounts = h.db.forSchema<any>(service.schema);
    const [before] = (await accounts.selectFrom("accounts").select("balance").where("id", "=", usd.id).execute()) as { balance: bigint }[];
    await accounts.updateTable("accounts").set({ balance: BigInt(before!.balance) + 7n }).where("id", "=", usd.id).execute();
    try {
      const tb = (await trial(platformId)).get("USD")!;
      expect(tb).toMatchObject({ balanceSum: 7n, postingSum: 0n, mismatchedAccountCount: 1n });
    } finally {
      await accounts.updateTable("accounts").set({ balance: before!.balance }).where("id", "=", usd.id).execute();
    }
    expectBalanced(await trial(platformId));
  });

  it("answers 404 PLATFORM_NOT_FOUND for a platform the ledger never heard of", async () => {
    expect((await publicError(h.admin.getTrialBalance({ platformId: newId("Platform") }))).code).toBe("PLATFORM_NOT_FOUND");
  });
});
