import { connectorContractSuite } from "@corridor/connector/testing";
import { sandboxConnector } from "../src/connector.js";
import { TRANSFER_RETURN_SECONDS } from "../src/domain/rail-simulator.js";

// The sandbox simulator passes the rail contract's suite, as every connector does (docs/connectors.md).
connectorContractSuite({
  definition: sandboxConnector,
  // The schedule worker looks often, so a return due on the (manual) clock fires within the suite's wait.
  env: { SANDBOX_SCHEDULE_POLL_MS: "10", SANDBOX_SCHEDULE_IDLE_POLL_MS: "10" },
  scenarios: {
    completes: { direction: "PAYOUT", currency: "USD", paymentRail: "ACH", accountInfo: { accountType: "USD_ACCOUNT", accountNumber: "123456789", routingNumber: "021000021" } },
    fails: { direction: "PAYOUT", currency: "USD", paymentRail: "ACH", accountInfo: { accountType: "USD_ACCOUNT", accountNumber: "123456003", routingNumber: "021000021" } },
    returnsAfterCompletion: { direction: "PAYOUT", currency: "USD", paymentRail: "ACH", accountInfo: { accountType: "USD_ACCOUNT", accountNumber: "123456006", routingNumber: "021000021" } },
  },
  // The simulator's delays run on the sandbox clock: move it past the return.
  async progress({ clock }) {
    clock.advance(TRANSFER_RETURN_SECONDS * 1000);
  },
});
