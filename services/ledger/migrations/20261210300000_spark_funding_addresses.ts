import { sandboxSparkAddress } from "@corridor/kit";
import { type Kysely } from "kysely";

// Crypto internal accounts were opened with a placeholder Spark address ("sp1…xxxx"): rewrite it to
// the account's well-formed address, derived from its reference as domain/funding.ts now does
// (issue 10). Fiat instructions are untouched.

export async function up(db: Kysely<any>): Promise<void> {
  const rows: { id: string; reference: string; funding_instructions: unknown }[] = await db.selectFrom("accounts").select(["id", "reference", "funding_instructions"]).execute();
  for (const row of rows) {
    const list = (typeof row.funding_instructions === "string" ? JSON.parse(row.funding_instructions) : row.funding_instructions) as Record<string, any>[];
    if (!Array.isArray(list) || !list.some((i) => i?.accountOrWalletInfo?.accountType === "SPARK_WALLET")) continue;
    const fixed = list.map((i) =>
      i?.accountOrWalletInfo?.accountType === "SPARK_WALLET" ? { ...i, accountOrWalletInfo: { ...i.accountOrWalletInfo, address: sandboxSparkAddress(row.reference) } } : i,
    );
    await db.updateTable("accounts").set({ funding_instructions: JSON.stringify(fixed) }).where("id", "=", row.id).execute();
  }
}

export async function down(): Promise<void> {
  // The placeholders are not worth restoring.
}
