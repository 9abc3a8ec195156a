import { sandboxSparkAddress, sandboxSparkInvoice } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { up as addSparkInvoices } from "../migrations/20261216100000_spark_funding_invoices.js";
import { fundingInstructions } from "../src/domain/funding.js";
import { service } from "../src/server.js";
import { startLedgerHarness, type LedgerHarness } from "./harness.js";

describe("SPARK_WALLET funding instructions carry the account's invoice (issue 29)", () => {
  it("gives a crypto account's instruction assetType, its address and its Spark invoice, all from its reference", () => {
    const [item] = fundingInstructions({ currency: "USDC", reference: "CRD-ABCDEFGHJK", isPlatformAccount: false });
    expect(item).toMatchObject({
      accountOrWalletInfo: {
        accountType: "SPARK_WALLET",
        assetType: "USDC",
        address: sandboxSparkAddress("CRD-ABCDEFGHJK"),
        invoice: sandboxSparkInvoice("CRD-ABCDEFGHJK", { assetType: "USDC", memo: "CRD-ABCDEFGHJK" }),
      },
      instructionsNotes: expect.stringContaining("invoice"),
      isPlatformAccount: false,
    });
    const [fiat] = fundingInstructions({ currency: "USD", reference: "CRD-ABCDEFGHJK", isPlatformAccount: false });
    expect((fiat as { accountOrWalletInfo: Record<string, unknown> }).accountOrWalletInfo.invoice).toBeUndefined();
  });

  describe("the backfill migration", () => {
    let h: LedgerHarness;
    beforeAll(async () => {
      h = await startLedgerHarness();
    });
    afterAll(async () => h?.close());

    it("adds the invoice to accounts opened without one, leaves the rest as they are, and is idempotent", async () => {
      const platformId = await h.newPlatform({ currencies: ["USD", "USDC"] });
      const db = h.db.forSchema<any>(service.schema);
      const rows = await db.selectFrom("accounts").select(["id", "currency", "reference", "funding_instructions"]).where("platform_id", "=", platformId).execute();
      const usdc = rows.find((r: { currency: string }) => r.currency === "USDC")!;
      const usd = rows.find((r: { currency: string }) => r.currency === "USD")!;
      // As an account opened before the change was stored: the SPARK_WALLET item without invoice.
      const [item] = usdc.funding_instructions as Record<string, any>[];
      const { invoice: _dropped, ...oldInfo } = item!.accountOrWalletInfo;
      const old = [{ ...item, accountOrWalletInfo: oldInfo, instructionsNotes: "Send USDC on Spark to this address." }];
      await db.updateTable("accounts").set({ funding_instructions: JSON.stringify(old) }).where("id", "=", usdc.id).execute();

      await addSparkInvoices(db);
      await addSparkInvoices(db);
      const after = await db.selectFrom("accounts").select(["id", "funding_instructions"]).where("platform_id", "=", platformId).execute();
      const byId = new Map(after.map((r: { id: string; funding_instructions: unknown }) => [r.id, r.funding_instructions]));
      expect(byId.get(usdc.id)).toEqual(fundingInstructions({ currency: "USDC", reference: usdc.reference, isPlatformAccount: true }));
      expect(byId.get(usd.id)).toEqual(usd.funding_instructions);
    });
  });
});
