import { principalOf } from "../auth.js";
import { numberFromInt64 } from "@corridor/kit/rest-json";
import { errorResponses } from "../schemas/common.js";
import { WithdrawalFeeBody, WithdrawalFeeEstimateSchema } from "../schemas/quotes-fx.js";
import type { Api, RouteDeps } from "./types.js";

export function cryptoRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/crypto/estimate-withdrawal-fee",
    {
      config: { permission: "VIEW" },
      schema: {
        summary: "Estimate a crypto withdrawal fee",
        description:
          "Network fee in the network's asset (wei, lamports, satoshis), application fee, total fee and net amount in the withdrawal currency. The address is validated for the network (EIP-55 for mixed-case EVM addresses, base58 32-byte keys on Solana, bech32/base58check on Bitcoin, BOLT 11 on Lightning, bech32m Spark addresses). Needs VIEW.",
        tags: ["Crypto"],
        body: WithdrawalFeeBody,
        response: { 200: WithdrawalFeeEstimateSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const b = request.body;
      const e = await clients.quotesFx.estimateWithdrawalFee({ platformId, internalAccountId: b.internalAccountId, currency: b.currency, cryptoNetwork: b.cryptoNetwork, amount: BigInt(b.amount), destinationAddress: b.destinationAddress });
      return {
        networkFee: numberFromInt64(e.networkFee),
        networkFeeAsset: e.networkFeeAsset,
        applicationFee: numberFromInt64(e.applicationFee),
        totalFee: numberFromInt64(e.totalFee),
        netAmount: numberFromInt64(e.netAmount),
      };
    },
  );
}
