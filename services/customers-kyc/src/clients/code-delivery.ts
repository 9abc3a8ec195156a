import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { CodeDeliveryService } from "@corridor/proto/corridor/auth_sessions/v1/code_delivery_service_pb.js";
import type { ContactCodeSender } from "../domain/contact-verification.js";

/** Contact-verification codes go out through auth-sessions' mail server, as EMAIL_OTP codes do (CodeDeliveryService). */
export function codeDelivery(transport: () => Transport): ContactCodeSender {
  // Resolved on first use: a service may call another only at request time, never while starting.
  let client: Client<typeof CodeDeliveryService> | undefined;
  return {
    async send({ platformId, customerId, channel, to, code }) {
      client ??= createClient(CodeDeliveryService, transport());
      return (await client.deliverCode({ platformId, customerId, channel, to, code })).delivered;
    },
  };
}
