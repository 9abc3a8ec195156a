import { errors } from "@corridor/kit";
import { describe, expect, it } from "vitest";
import { loadLedgerConfig } from "../src/config.js";
import { configuredBindingsWorker } from "../src/workers/rail-bindings.js";

const binding = { platformId: "Platform:0190f0f0-0000-7000-8000-000000000001", currency: "USD", paymentRail: "ACH", connector: "ach-nacha" };

describe("LEDGER_RAIL_BINDINGS (the Helm chart's railBindings)", () => {
  it("reads a JSON list of bindings, none by default, and refuses anything else at startup", () => {
    expect(loadLedgerConfig({}).LEDGER_RAIL_BINDINGS).toEqual([]);
    expect(loadLedgerConfig({ LEDGER_RAIL_BINDINGS: JSON.stringify([binding]) }).LEDGER_RAIL_BINDINGS).toEqual([binding]);
    expect(() => loadLedgerConfig({ LEDGER_RAIL_BINDINGS: "ACH=ach-nacha" })).toThrow(/LEDGER_RAIL_BINDINGS/);
    expect(() => loadLedgerConfig({ LEDGER_RAIL_BINDINGS: JSON.stringify([{ ...binding, connector: undefined }]) })).toThrow(/LEDGER_RAIL_BINDINGS/);
  });

  it("sets each binding as CONFIG once the deployment answers, retrying what failed for a while and skipping what is refused", async () => {
    const calls: string[] = [];
    let auth = false; // auth-sessions not up yet on the first pass
    const worker = configuredBindingsWorker({
      bindings: [binding, { ...binding, currency: "EUR", paymentRail: "SEPA", connector: "sandbox" }],
      pollMs: 5,
      ledger: {
        async bindRail(b) {
          calls.push(`${b.currency}:${b.source}`);
          if (b.connector === "sandbox") throw errors.invalidInput([{ field: "connector", reason: "is the simulator" }]);
          if (!auth) {
            auth = true;
            throw new Error("auth-sessions unavailable");
          }
          return { platform_id: b.platformId, currency: b.currency, payment_rail: b.paymentRail, connector: b.connector, source: b.source, created_at: new Date(), updated_at: new Date() };
        },
      },
    });
    worker.start();
    try {
      await expect.poll(() => calls.filter((c) => c === "USD:CONFIG").length, { timeout: 5_000 }).toBe(2);
    } finally {
      await worker.stop();
    }
    // The refused one was tried once and never again; the USD one failed once, then was set.
    expect(calls.filter((c) => c.startsWith("EUR"))).toEqual(["EUR:CONFIG"]);
  });
});
