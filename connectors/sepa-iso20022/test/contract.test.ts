import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { connectorContractSuite } from "@corridor/connector/testing";
import { sepaConnector } from "../src/index.js";
import { testBank } from "./test-bank.js";

// The SEPA connector passes the rail contract's suite (docs/connectors.md), as every connector does,
// against a bank behind a directory file drop that answers its pain.001 files.

const bank = testBank({ FR1420041010050500013M02606: { reject: "AC04" }, NL91ABNA0417164300: { settleThenReturn: "MD07" } });
for (const d of ["inbox", "outbox", "archive"]) mkdirSync(join(bank.root, d), { recursive: true });
const eur = (iban: string) => ({ direction: "PAYOUT" as const, currency: "EUR", paymentRail: "SEPA", accountInfo: { accountType: "EUR_ACCOUNT", iban, beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Jane Doe" } } });

connectorContractSuite({
  definition: sepaConnector,
  env: { SEPA_DEBTOR_NAME: "Corridor Operator GmbH", SEPA_DEBTOR_IBAN: "DE89370400440532013000", SEPA_FILE_DROP_DIR: bank.root, SEPA_POLL_MS: "10", SEPA_CUTOFF_TIMES: "09:00,14:00", SEPA_CUTOFF_ZONE: "Europe/Berlin" },
  scenarios: { completes: eur("DE75512108001245126199"), fails: eur("FR1420041010050500013M02606"), returnsAfterCompletion: eur("NL91ABNA0417164300") },
  // Each look: the day moves past the next cut-off (the connector files and uploads), and the bank answers what it got.
  async progress({ clock }) {
    clock.advance(6 * 60 * 60 * 1000);
    bank.answer();
  },
});
