import type { ServiceImpl } from "@connectrpc/connect";
import type { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import type { createTrialBalance } from "../domain/trial-balance.js";

/** LedgerAdminService: read-only operator questions; the gateway routes none of them. */
export function createAdminHandler({ trialBalance }: { trialBalance: ReturnType<typeof createTrialBalance> }): ServiceImpl<typeof LedgerAdminService> {
  return {
    async getTrialBalance(req) {
      return { currencies: await trialBalance(req.platformId || undefined) };
    },
  };
}
