import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { ScaService } from "@corridor/proto/corridor/auth_sessions/v1/sca_service_pb.js";
import type { ScaPort } from "../domain/ports.js";

/** auth-sessions' ScaService for quotes (subject QUOTE); its errors propagate as they are. */
export function scaPort(transport: () => Transport): ScaPort {
  let client: Client<typeof ScaService> | undefined;
  const sca = () => (client ??= createClient(ScaService, transport()));
  return {
    async begin(input) {
      const r = await sca().beginAuthorization({ ...input, subjectType: "QUOTE", subjectId: input.quoteId });
      const c = r.challenge;
      if (!r.required || !c) return undefined;
      return { id: c.id, expiresAt: c.expiresAt ? timestampDate(c.expiresAt) : new Date(0), factor: c.factor, availableFactors: [...c.availableFactors], purpose: c.purpose };
    },
    async authorize(platformId, quoteId, code) {
      await sca().authorize({ platformId, subjectType: "QUOTE", subjectId: quoteId, code });
    },
    async resend(platformId, quoteId) {
      await sca().resendCode({ platformId, subjectType: "QUOTE", subjectId: quoteId });
    },
  };
}
