import { randomBytes } from "node:crypto";
import { defineConnector, type RailInstruction } from "@corridor/connector";
import { z } from "@corridor/kit";

/**
 * A rail connector for tests, on @corridor/connector as a real one is: every instruction addressed
 * to it is accepted (PROCESSING) and settled (COMPLETED) in the same transaction, through the
 * package's outbox. `received` lists what reached it, in order.
 */
export function testConnector(prefix = "e2e-bank") {
  const id = randomBytes(4).toString("hex");
  const received: RailInstruction[] = [];
  const definition = defineConnector({
    name: `${prefix}-${id}`,
    schema: `connector_${prefix.replace(/-/g, "_")}_${id}`,
    config: z.object({}),
    build: (ctx) => ({
      async onInstruction(i, trx) {
        received.push(i);
        await ctx.outcomes.report(trx, { platformId: i.platformId, transactionId: i.transactionId, status: "PROCESSING", at: ctx.clock.now() });
        await ctx.outcomes.report(trx, { platformId: i.platformId, transactionId: i.transactionId, status: "COMPLETED", at: ctx.clock.now() });
      },
    }),
  });
  return { definition, received };
}
