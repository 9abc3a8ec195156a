import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, errors } from "@corridor/kit";
import { CodeDeliveryService } from "@corridor/proto/corridor/auth_sessions/v1/code_delivery_service_pb.js";
import type { Mailer } from "../domain/wallet/ports.js";

/**
 * CodeDeliveryService: other services' one-time codes, delivered by the deployment's mail server
 * (EMAIL). No SMS gateway ships: a PHONE code reaches nobody, so a production platform gets 400
 * SMS_DELIVERY_NOT_CONFIGURED and a sandbox platform's goes nowhere (its magic code confirms).
 */
export function createCodeDeliveryHandler(deps: {
  mailer: Mailer;
  environment: (platformId: string) => Promise<"SANDBOX" | "PRODUCTION" | undefined>;
}): ServiceImpl<typeof CodeDeliveryService> {
  return {
    async deliverCode(req) {
      const environment = await deps.environment(req.platformId);
      if (!environment) throw errors.notFound("Platform", req.platformId || undefined);
      if (!/^[0-9]{4,10}$/.test(req.code)) throw errors.invalidInput([{ field: "code", reason: "must be 4 to 10 digits" }]);
      if (req.channel === "EMAIL") {
        return { delivered: await deps.mailer.sendContactCode(req.to, req.code, { platformId: req.platformId, customerId: req.customerId, environment }) };
      }
      if (req.channel === "PHONE") {
        if (environment === "SANDBOX") return { delivered: false };
        throw new AppError("INVALID", "SMS_DELIVERY_NOT_CONFIGURED", "This deployment has no SMS gateway, so phone verification codes cannot reach production customers", { channel: "PHONE" });
      }
      throw errors.invalidInput([{ field: "channel", reason: "must be EMAIL or PHONE" }]);
    },
  };
}
