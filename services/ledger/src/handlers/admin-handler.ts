import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import type { Ledger } from "../domain/ledger.js";
import type { RailBindingRow } from "../domain/model.js";
import type { createTrialBalance } from "../domain/trial-balance.js";

const bindingToPb = (b: RailBindingRow) => ({
  platformId: b.platform_id,
  currency: b.currency,
  paymentRail: b.payment_rail,
  connector: b.connector,
  source: b.source,
  updatedAt: timestampFromDate(b.updated_at),
});

/** LedgerAdminService: the operator's questions about the books and the rail bindings; the gateway routes none of it. */
export function createAdminHandler({
  trialBalance,
  ledger,
}: {
  trialBalance: ReturnType<typeof createTrialBalance>;
  ledger: Pick<Ledger, "bindRail" | "unbindRail" | "listRailBindings">;
}): ServiceImpl<typeof LedgerAdminService> {
  return {
    async getTrialBalance(req) {
      return { currencies: await trialBalance(req.platformId || undefined) };
    },
    async bindPlatformRail(req) {
      const b = await ledger.bindRail({ platformId: req.platformId, currency: req.currency, paymentRail: req.paymentRail, connector: req.connector, source: "OPERATOR" });
      return { binding: bindingToPb(b) };
    },
    async unbindPlatformRail(req) {
      return { removed: await ledger.unbindRail({ platformId: req.platformId, currency: req.currency, paymentRail: req.paymentRail }) };
    },
    async listPlatformRailBindings(req) {
      return { bindings: (await ledger.listRailBindings(req.platformId || undefined)).map(bindingToPb) };
    },
  };
}
