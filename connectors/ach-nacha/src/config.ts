import { parseCutoffs } from "@corridor/connector";
import { env, z } from "@corridor/kit";
import { isRoutingNumber } from "./nacha/fields.js";

const routing = z.string().refine(isRoutingNumber, "a 9-digit ABA routing number with a valid check digit");
/** A comma-separated list with a default. */
const list = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((v) => v.split(",").map((s) => s.trim()).filter(Boolean));
const hhmm = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, "HH:MM");

/**
 * The ACH connector's settings (the connector process's environment; every key also as <KEY>_FILE,
 * which is how the SFTP password and private key should come: from a mounted secret).
 */
export const achConfigSchema = z
  .object({
    /** The ODFI's routing number: the first 8 digits open every trace number and batch header. */
    ACH_ODFI_ROUTING: routing,
    /** The file header's immediate destination (the ODFI or its processor); empty: the ODFI. */
    ACH_IMMEDIATE_DESTINATION: z.string().default(""),
    /** The destination's name as the bank asks for it in the file header. */
    ACH_IMMEDIATE_DESTINATION_NAME: z.string().default(""),
    /** The file header's immediate origin, 10 characters (or 9 digits), as the bank assigned it. */
    ACH_IMMEDIATE_ORIGIN: z.string().regex(/^([0-9A-Za-z ]{10}|[0-9]{9})$/, "10 characters, or a 9-digit routing number"),
    /** The originator's name in the file header. */
    ACH_IMMEDIATE_ORIGIN_NAME: z.string().min(1),
    /** Company name in each batch header (what the receiver's statement shows; cut to 16). */
    ACH_COMPANY_NAME: z.string().min(1),
    /** Company identification the ODFI assigned (10 characters, usually "1" + EIN). */
    ACH_COMPANY_ID: z.string().regex(/^[0-9A-Za-z ]{1,10}$/, "1-10 characters"),
    /** Company entry description of payout (credit) batches, 10 characters. */
    ACH_PAYOUT_DESCRIPTION: z.string().max(10).default("PAYOUT"),
    /** Company entry description of pull (debit) batches, 10 characters. */
    ACH_PULL_DESCRIPTION: z.string().max(10).default("PAYMENT"),
    /** IANA time zone of the cut-offs and banking days (the ODFI's). */
    ACH_CUTOFF_TIMEZONE: z.string().default("America/New_York"),
    /** Cut-off times, HH:MM in ACH_CUTOFF_TIMEZONE; each window's instructions make one file. */
    ACH_CUTOFF_TIMES: list("10:00,13:00,15:30,20:00").pipe(z.array(hhmm).min(1)),
    /** Which cut-offs are same-day windows (their entries settle that day); the others settle the next banking day. */
    ACH_SAME_DAY_CUTOFFS: list("10:00,13:00,15:30").pipe(z.array(hhmm)),
    /** Largest entry (cents) sent same-day (Nacha's per-entry limit); larger ones wait for a next-day window. */
    ACH_SAME_DAY_LIMIT_CENTS: z.coerce.bigint().default(100_000_000n),
    /** ISO weekdays (1 = Monday … 7 = Sunday) that are banking days. */
    ACH_BUSINESS_DAYS: z.string().default("1,2,3,4,5"),
    /** Closing days computed by a payment system's rules: FEDERAL_RESERVE (the Fed's holidays), or NONE (only ACH_HOLIDAYS). */
    ACH_CALENDAR: z.enum(["FEDERAL_RESERVE", "NONE"]).default("FEDERAL_RESERVE"),
    /** Extra non-banking days (YYYY-MM-DD, comma-separated) beyond weekends and Federal Reserve holidays. */
    ACH_HOLIDAYS: list("").pipe(z.array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "YYYY-MM-DD"))),
    /** Time of the settlement day (bank zone) from which its entries count as settled. */
    ACH_SETTLEMENT_TIME: hhmm.default("17:00"),
    /** Banking days after settlement before a pull (debit) completes and its money becomes available (R01/R09 returns come within 2). */
    ACH_DEBIT_AVAILABILITY_DAYS: env.int(2).pipe(z.number().int().min(0).max(60)),
    /** Return reason codes the bank uses beyond Nacha's (comma-separated, e.g. R97). */
    ACH_CUSTOM_RETURN_CODES: list("").pipe(z.array(z.string().regex(/^R[0-9A-Z]{2}$/, "R + 2 characters"))),
    /** First part of uploaded file names: <prefix>-<YYYYMMDD>-<HHMM>-<modifier>.ach. */
    ACH_FILE_PREFIX: z.string().regex(/^[A-Za-z0-9]{1,20}$/).default("CORRIDOR"),
    /** How often the connector builds due files, uploads, completes settled entries and reads the bank's outbox. */
    ACH_POLL_MS: env.int(60_000).pipe(z.number().int().min(10)),
    /** Host of the bank's SFTP server. */
    ACH_SFTP_HOST: z.string().min(1),
    /** Port of the bank's SFTP server. */
    ACH_SFTP_PORT: env.port(22),
    /** SFTP user name. */
    ACH_SFTP_USERNAME: z.string().min(1),
    /** SFTP password (secret: use ACH_SFTP_PASSWORD_FILE); or a private key. */
    ACH_SFTP_PASSWORD: z.string().optional(),
    /** SFTP private key, OpenSSH or PEM (secret: use ACH_SFTP_PRIVATE_KEY_FILE). */
    ACH_SFTP_PRIVATE_KEY: z.string().optional(),
    /** Passphrase of the private key, if it has one (secret). */
    ACH_SFTP_PRIVATE_KEY_PASSPHRASE: z.string().optional(),
    /** The bank server's host key ("ssh-ed25519 AAAA…") or its SHA256 fingerprint: any other server is refused. */
    ACH_SFTP_HOST_KEY: z.string().min(1),
    /** The bank's inbox folder (Corridor uploads here). */
    ACH_SFTP_INBOX_DIR: z.string().default("/inbox"),
    /** The bank's outbox folder (returns, NOCs, incoming entries). */
    ACH_SFTP_OUTBOX_DIR: z.string().default("/outbox"),
    /** Where processed bank files are moved. */
    ACH_SFTP_ARCHIVE_DIR: z.string().default("/archive"),
    /** SFTP connect timeout. */
    ACH_SFTP_TIMEOUT_MS: env.int(20_000),
    /** True when the bank removes files from its inbox as it collects them: an upload interrupted at an unknown point is then held for the operator instead of retried. */
    ACH_SFTP_BANK_COLLECTS_UPLOADS: env.bool(false),
  })
  .superRefine((c, ctx) => {
    if (!c.ACH_SFTP_PASSWORD && !c.ACH_SFTP_PRIVATE_KEY) ctx.addIssue({ code: "custom", path: ["ACH_SFTP_PASSWORD"], message: "set ACH_SFTP_PASSWORD(_FILE) or ACH_SFTP_PRIVATE_KEY(_FILE)" });
    for (const t of c.ACH_SAME_DAY_CUTOFFS) if (!c.ACH_CUTOFF_TIMES.includes(t)) ctx.addIssue({ code: "custom", path: ["ACH_SAME_DAY_CUTOFFS"], message: `${t} is not one of ACH_CUTOFF_TIMES` });
    if (c.ACH_IMMEDIATE_DESTINATION && !isRoutingNumber(c.ACH_IMMEDIATE_DESTINATION)) ctx.addIssue({ code: "custom", path: ["ACH_IMMEDIATE_DESTINATION"], message: "a 9-digit routing number" });
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: c.ACH_CUTOFF_TIMEZONE });
    } catch {
      ctx.addIssue({ code: "custom", path: ["ACH_CUTOFF_TIMEZONE"], message: "not an IANA time zone" });
      return;
    }
    try {
      parseCutoffs({ times: c.ACH_CUTOFF_TIMES.join(","), zone: c.ACH_CUTOFF_TIMEZONE, weekdays: c.ACH_BUSINESS_DAYS, holidays: c.ACH_HOLIDAYS.join(",") });
    } catch (e) {
      ctx.addIssue({ code: "custom", path: ["ACH_BUSINESS_DAYS"], message: (e as Error).message });
    }
  });

export type AchConfig = z.infer<typeof achConfigSchema>;
