import { connectorContractSuite } from "@corridor/connector/testing";
import { afterAll, beforeAll, describe, it, vi } from "vitest";
import { sftpServerRequired, sftpServerUnavailableReason, startSftpServer, type SftpTestServer } from "../../../test/infra/sftp/sshd.js";
import { sepaConnector } from "../src/index.js";
import { testBank } from "./test-bank.js";

// The SEPA connector passes the rail contract's suite over the bank's SFTP server (OpenSSH's sshd,
// test/infra/sftp/sshd.ts), its settings the SEPA_SFTP_* ones; the test bank reads the pain.001
// files the server received and answers in the outbox the server serves.
vi.setConfig({ testTimeout: 90_000 });
const unavailable = sftpServerUnavailableReason();

if (unavailable && !sftpServerRequired) {
  describe(`rail contract v1: connector sepa over SFTP — skipped: ${unavailable}`, () => {
    it.skip("needs OpenSSH's sshd", () => {});
  });
} else {
  let server: SftpTestServer;
  let bank: ReturnType<typeof testBank>;
  const env: NodeJS.ProcessEnv = {};
  beforeAll(async () => {
    server = await startSftpServer();
    bank = testBank({ FR1420041010050500013M02606: { reject: "AC04" }, NL91ABNA0417164300: { settleThenReturn: "MD07" } }, { root: server.localRoot });
    Object.assign(env, {
      SEPA_DEBTOR_NAME: "Corridor Operator GmbH",
      SEPA_DEBTOR_IBAN: "DE89370400440532013000",
      SEPA_POLL_MS: "50",
      SEPA_CUTOFF_TIMES: "09:00,14:00",
      SEPA_CUTOFF_ZONE: "Europe/Berlin",
      SEPA_SFTP_HOST: server.host,
      SEPA_SFTP_PORT: String(server.port),
      SEPA_SFTP_USERNAME: server.username,
      SEPA_SFTP_PRIVATE_KEY: server.privateKey,
      SEPA_SFTP_HOST_KEY: server.hostPublicKey,
      SEPA_SFTP_INBOX_DIR: server.remotePath("inbox"),
      SEPA_SFTP_OUTBOX_DIR: server.remotePath("outbox"),
      SEPA_SFTP_ARCHIVE_DIR: server.remotePath("archive"),
    });
  });
  afterAll(async () => server?.stop());

  const eur = (iban: string) => ({ direction: "PAYOUT" as const, currency: "EUR", paymentRail: "SEPA", accountInfo: { accountType: "EUR_ACCOUNT", iban, beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Jane Doe" } } });

  connectorContractSuite({
    definition: sepaConnector,
    env,
    waitMs: 80_000,
    scenarios: { completes: eur("DE75512108001245126199"), fails: eur("FR1420041010050500013M02606"), returnsAfterCompletion: eur("NL91ABNA0417164300") },
    // Each look: the day moves past the next cut-off (the connector files and uploads), and the bank answers what it got.
    async progress({ clock }) {
      clock.advance(6 * 60 * 60 * 1000);
      bank.answer();
    },
  });
}
