import { connectorContractSuite } from "@corridor/connector/testing";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, it, vi } from "vitest";
import { sftpServerRequired, sftpServerUnavailableReason, startSftpServer, type SftpTestServer } from "../../../test/infra/sftp/sshd.js";
import { achConnector } from "../src/connector.js";
import { sftpBank, type SftpBank } from "./bank/sftp-bank.js";

// The ACH connector passes the rail contract's suite (docs/connectors.md) against a real SFTP
// server (OpenSSH) and a bank that reads its files with another NACHA implementation.
const ODFI = "121042882";
// Every pass of the connector opens SFTP sessions (an SSH handshake each): a scenario walks a
// simulated day in a few seconds, three of them in one test take longer on a busy machine.
vi.setConfig({ testTimeout: 90_000 });
const unavailable = sftpServerUnavailableReason();

if (unavailable && !sftpServerRequired) {
  describe(`rail contract v1: connector ach-nacha — skipped: ${unavailable}`, () => {
    it.skip("needs OpenSSH's sshd", () => {});
  });
} else {
  let server: SftpTestServer;
  let bank: SftpBank;
  const env: NodeJS.ProcessEnv = {};
  beforeAll(async () => {
    server = await startSftpServer();
    bank = sftpBank({ root: server.localRoot, bankRouting: "231380104", odfiRouting: ODFI });
    Object.assign(env, {
      ACH_ODFI_ROUTING: ODFI,
      ACH_IMMEDIATE_ORIGIN: "1234567890",
      ACH_IMMEDIATE_ORIGIN_NAME: "Corridor Test",
      ACH_COMPANY_NAME: "Corridor",
      ACH_COMPANY_ID: "1234567890",
      ACH_POLL_MS: "20",
      ACH_SFTP_HOST: server.host,
      ACH_SFTP_PORT: String(server.port),
      ACH_SFTP_USERNAME: server.username,
      ACH_SFTP_PRIVATE_KEY: server.privateKey,
      ACH_SFTP_HOST_KEY: server.hostPublicKey,
      ACH_SFTP_INBOX_DIR: server.remotePath("inbox"),
      ACH_SFTP_OUTBOX_DIR: server.remotePath("outbox"),
      ACH_SFTP_ARCHIVE_DIR: server.remotePath("archive"),
    });
  });
  afterAll(async () => server?.stop());

  const account = (accountNumber: string) => ({
    accountType: "USD_ACCOUNT",
    accountNumber,
    routingNumber: "231380104",
    bankAccountType: "CHECKING",
    beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Jane Doe" },
  });

  connectorContractSuite({
    definition: achConnector,
    env,
    waitMs: 80_000,
    scenarios: {
      completes: { direction: "PAYOUT", currency: "USD", paymentRail: "ACH", accountInfo: account("11110000") },
      fails: { direction: "PAYOUT", currency: "USD", paymentRail: "ACH", accountInfo: account("11110003") },
      returnsAfterCompletion: { direction: "PAYOUT", currency: "USD", paymentRail: "ACH", accountInfo: account("11110001") },
    },
    // The bank answers what it received; the clock moves on only once the connector has read
    // everything the bank wrote (so a return sent before settlement is read before settlement).
    async progress({ clock, db }: { clock: { now(): Date; advance(ms: number): void }; db: Kysely<any> }) {
      const completed = async (trace: string) =>
        !!(await db.selectFrom("ach_entries").select("status").where("trace_number", "=", trace).where("status", "=", "COMPLETED").executeTakeFirst());
      const { wrote } = await bank.step(completed, clock.now().toISOString().slice(2, 10).replaceAll("-", ""));
      // The connector has caught up with its clock: nothing due to build, upload or complete.
      const now = clock.now();
      const due = await db
        .selectFrom("ach_entries")
        .select("transaction_id")
        .where((eb) =>
          eb.or([
            eb.and([eb("status", "=", "QUEUED"), eb("cutoff_at", "<=", now)]),
            eb("status", "=", "FILED"),
            eb.and([eb("status", "=", "SUBMITTED"), eb("completes_at", "<=", now)]),
          ]),
        )
        .executeTakeFirst();
      if (!wrote && !bank.outboxBusy() && !due) clock.advance(20 * 60_000);
    },
  });
}
