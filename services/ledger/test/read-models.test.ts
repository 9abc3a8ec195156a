import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { directionOf } from "../src/domain/transactions.js";
import { startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

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
});
