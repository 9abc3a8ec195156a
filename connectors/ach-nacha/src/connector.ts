import { defineConnector } from "@corridor/connector";
import { pollingWorker } from "@corridor/kit";
import { fileURLToPath } from "node:url";
import { achConfigSchema } from "./config.js";
import { acceptInstruction, buildDueFiles, completeSettled, readBankFiles, uploadFiles, type EngineDeps } from "./engine.js";
import { SftpTransport } from "@corridor/connector/bank-files";
import { achAdmin } from "./admin.js";

export const ACH_CONNECTOR = "ach-nacha";
export const SCHEMA = "connector_ach_nacha";
export const MIGRATIONS_DIR = fileURLToPath(new URL("../migrations", import.meta.url));

/** Makes the transport from the settings (tests may pass another). */
export type TransportFactory = (c: EngineDeps["config"]) => EngineDeps["transport"];

const sftpFromConfig: TransportFactory = (c) =>
  new SftpTransport({
    host: c.ACH_SFTP_HOST,
    port: c.ACH_SFTP_PORT,
    username: c.ACH_SFTP_USERNAME,
    password: c.ACH_SFTP_PASSWORD,
    privateKey: c.ACH_SFTP_PRIVATE_KEY,
    passphrase: c.ACH_SFTP_PRIVATE_KEY_PASSPHRASE,
    hostKey: c.ACH_SFTP_HOST_KEY,
    inboxDir: c.ACH_SFTP_INBOX_DIR,
    outboxDir: c.ACH_SFTP_OUTBOX_DIR,
    archiveDir: c.ACH_SFTP_ARCHIVE_DIR,
    timeoutMs: c.ACH_SFTP_TIMEOUT_MS,
    hostKeySetting: "ACH_SFTP_HOST_KEY",
  });

/** The ACH connector (docs/connectors.md, "ACH (NACHA over SFTP)"): named `ach-nacha`, PRODUCTION only. */
export function achConnectorDefinition(opts: { transport?: TransportFactory } = {}) {
  return defineConnector({
    name: ACH_CONNECTOR,
    schema: SCHEMA,
    migrationsDir: MIGRATIONS_DIR,
    config: achConfigSchema,
    build(ctx) {
      const deps: EngineDeps = { db: ctx.db, clock: ctx.clock, log: ctx.log, config: ctx.config, outcomes: ctx.outcomes, notices: ctx.notices, statements: ctx.statements, transport: (opts.transport ?? sftpFromConfig)(ctx.config) };
      // One loop, in the order a day runs: build due files, upload them, complete what settled, read the bank.
      const worker = pollingWorker({
        name: "ach-files",
        pollMs: ctx.config.ACH_POLL_MS,
        log: ctx.log,
        pass: async () => {
          const built = await buildDueFiles(deps);
          const uploaded = await uploadFiles(deps);
          const completed = await completeSettled(deps);
          const read = await readBankFiles(deps);
          return { built: built.length, uploaded: uploaded.length, completed, read: read.length };
        },
      });
      // RETURN instructions (contract 1.3) become return entries in the next window's file.
      return { onInstruction: (i, trx) => acceptInstruction(deps, i, trx), returns: true, workers: [worker], admin: achAdmin(deps) };
    },
  });
}

export const achConnector = achConnectorDefinition();
