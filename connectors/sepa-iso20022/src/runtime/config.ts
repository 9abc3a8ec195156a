import { env, z } from "@corridor/kit";
import { parseCutoffs } from "@corridor/connector";

/** The bank's cut-off calendar from the settings (the package's cutoffs.ts; TARGET2's closing days unless SEPA_CALENDAR=NONE). */
export const sepaSchedule = (v: { SEPA_CUTOFF_TIMES: string; SEPA_CUTOFF_ZONE: string; SEPA_BUSINESS_DAYS: string; SEPA_HOLIDAYS: string; SEPA_CALENDAR: "TARGET2" | "NONE" }) =>
  parseCutoffs({ times: v.SEPA_CUTOFF_TIMES, zone: v.SEPA_CUTOFF_ZONE, weekdays: v.SEPA_BUSINESS_DAYS, holidays: v.SEPA_HOLIDAYS, ...(v.SEPA_CALENDAR === "TARGET2" ? { calendar: "TARGET2" as const } : {}) });

const cutoffCheck = (v: Parameters<typeof sepaSchedule>[0], ctx: z.RefinementCtx) => {
  try {
    sepaSchedule(v);
  } catch (err) {
    ctx.addIssue({ code: "custom", path: ["SEPA_CUTOFF_TIMES"], message: (err as Error).message });
  }
};

/** The SEPA connector's settings (docs/connectors.md, "SEPA (ISO 20022 over SFTP)"); each also as <KEY>_FILE. */
export const sepaConfigSchema = z
  .object({
    /** Name of the account holder the transfers are debited from (the operator's company). */
    SEPA_DEBTOR_NAME: z.string().min(1),
    /** IBAN of that account at the bank. */
    SEPA_DEBTOR_IBAN: z.string().regex(/^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{1,30}$/, "must be an IBAN"),
    /** BIC of the bank; optional in SEPA (written NOTPROVIDED). */
    SEPA_DEBTOR_BIC: z.string().regex(/^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/, "must be a BIC").optional(),
    /** The operator's id at the bank (initiating party), when the bank assigned one. */
    SEPA_INITIATING_PARTY_ID: z.string().optional(),
    /** Cut-off times of day (HH:MM, comma-separated) the bank takes files by, in SEPA_CUTOFF_ZONE. */
    SEPA_CUTOFF_TIMES: z.string().default("09:00,14:00"),
    /** IANA time zone of the cut-offs. */
    SEPA_CUTOFF_ZONE: z.string().default("Europe/Berlin"),
    /** ISO weekdays the bank takes files on (1 = Monday). */
    SEPA_BUSINESS_DAYS: z.string().default("1,2,3,4,5"),
    /** Dates (YYYY-MM-DD) the bank is closed beyond SEPA_CALENDAR's: the bank's own. */
    SEPA_HOLIDAYS: z.string().default(""),
    /** Closing days computed by a payment system's rules: TARGET2 (New Year, Good Friday, Easter Monday, 1 May, 25-26 December), or NONE. */
    SEPA_CALENDAR: z.enum(["TARGET2", "NONE"]).default("TARGET2"),
    /** Send SCT Inst (local instrument INST) instead of standard SEPA credit transfers. */
    SEPA_INSTANT: env.bool(false),
    /** The bank's file drop as a local directory (inbox/, outbox/, archive/ under it): a bank that mounts its drop. Either this or SEPA_SFTP_HOST. */
    SEPA_FILE_DROP_DIR: z.string().min(1).optional(),
    /** Host of the bank's SFTP server: the file drop over SFTP. Either this or SEPA_FILE_DROP_DIR. */
    SEPA_SFTP_HOST: z.string().min(1).optional(),
    /** Port of the bank's SFTP server. */
    SEPA_SFTP_PORT: env.port(22),
    /** SFTP user name. */
    SEPA_SFTP_USERNAME: z.string().min(1).optional(),
    /** SFTP password (secret: use SEPA_SFTP_PASSWORD_FILE); or a private key. */
    SEPA_SFTP_PASSWORD: z.string().optional(),
    /** SFTP private key, OpenSSH or PEM (secret: use SEPA_SFTP_PRIVATE_KEY_FILE). */
    SEPA_SFTP_PRIVATE_KEY: z.string().optional(),
    /** Passphrase of the private key, if it has one (secret). */
    SEPA_SFTP_PRIVATE_KEY_PASSPHRASE: z.string().optional(),
    /** The bank server's host key ("ssh-ed25519 AAAA…") or its SHA256 fingerprint: any other server is refused. */
    SEPA_SFTP_HOST_KEY: z.string().min(1).optional(),
    /** The bank's inbox folder (Corridor uploads its pain.001 files here). */
    SEPA_SFTP_INBOX_DIR: z.string().default("/inbox"),
    /** The bank's outbox folder (pain.002, camt.054, camt.053). */
    SEPA_SFTP_OUTBOX_DIR: z.string().default("/outbox"),
    /** Where the bank's files that have been read are moved. */
    SEPA_SFTP_ARCHIVE_DIR: z.string().default("/archive"),
    /** SFTP connect timeout, ms. */
    SEPA_SFTP_TIMEOUT_MS: env.int(20_000),
    /** How often to close due windows, upload files and read the bank's reports, ms. */
    SEPA_POLL_MS: env.int(5_000).pipe(z.number().int().min(10).max(600_000)),
  })
  .superRefine(cutoffCheck)
  .superRefine((c, ctx) => {
    if (!c.SEPA_FILE_DROP_DIR === !c.SEPA_SFTP_HOST) {
      ctx.addIssue({ code: "custom", path: ["SEPA_SFTP_HOST"], message: "set SEPA_SFTP_HOST (the bank's SFTP server) or SEPA_FILE_DROP_DIR (a mounted directory), exactly one" });
      return;
    }
    if (!c.SEPA_SFTP_HOST) return;
    if (!c.SEPA_SFTP_USERNAME) ctx.addIssue({ code: "custom", path: ["SEPA_SFTP_USERNAME"], message: "required with SEPA_SFTP_HOST" });
    if (!c.SEPA_SFTP_HOST_KEY) ctx.addIssue({ code: "custom", path: ["SEPA_SFTP_HOST_KEY"], message: "required with SEPA_SFTP_HOST: the server's public key line or SHA256: fingerprint" });
    if (!c.SEPA_SFTP_PASSWORD && !c.SEPA_SFTP_PRIVATE_KEY) ctx.addIssue({ code: "custom", path: ["SEPA_SFTP_PASSWORD"], message: "set SEPA_SFTP_PASSWORD(_FILE) or SEPA_SFTP_PRIVATE_KEY(_FILE)" });
  });

export type SepaConfig = z.infer<typeof sepaConfigSchema>;
