import { sandboxSparkInvoice } from "@corridor/kit";
import { type Kysely } from "kysely";

// Crypto internal accounts were opened with a SPARK_WALLET funding instruction without `invoice`
// (the spec's item has assetType, address, invoice; issue 29): add the account's Spark invoice,
// derived from its reference as domain/funding.ts now does, and the notes that mention it. The
// address and fiat instructions are untouched. Idempotent: an item that has an invoice is kept.

export async function up(db: Kysely<any>): Promise<void> {
  const rows: { id: string; reference: string; currency: string; funding_instructions: unknown }[] = await db
    .selectFrom("accounts")
    .select(["id", "reference", "currency", "funding_instructions"])
    .execute();
  for (const row of rows) {
    const list = (typeof row.funding_instructions === "string" ? JSON.parse(row.funding_instructions) : row.funding_instructions) as Record<string, any>[];
    const needs = (i: Record<string, any>) => i?.accountOrWalletInfo?.accountType === "SPARK_WALLET" && !i.accountOrWalletInfo.invoice;
    if (!Array.isArray(list) || !list.some(needs)) continue;
    const fixed = list.map((i) => {
      if (!needs(i)) return i;
      const assetType = String(i.accountOrWalletInfo.assetType || row.currency);
      return {
        ...i,
        accountOrWalletInfo: { ...i.accountOrWalletInfo, invoice: sandboxSparkInvoice(row.reference, { assetType, memo: row.reference }) },
        instructionsNotes: `Send ${row.currency} on Spark to this address, or pay the invoice (any amount); both are this account's own (sandbox: not spendable, simulate deposits with the sandbox fund endpoint).`,
      };
    });
    await db.updateTable("accounts").set({ funding_instructions: JSON.stringify(fixed) }).where("id", "=", row.id).execute();
  }
}

export async function down(): Promise<void> {
  // Dropping the invoices again would only bring the gap back.
}
