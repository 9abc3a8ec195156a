import { env, z } from "@corridor/kit";
import { parseCutoffs } from "@corridor/connector";

const cutoffCheck = (v: { SEPA_CUTOFF_TIMES: string; SEPA_CUTOFF_ZONE: string; SEPA_BUSINESS_DAYS: string; SEPA_HOLIDAYS: string }, ctx: z.RefinementCtx) => {
  try {
    parseCutoffs({ times: v.SEPA_CUTOFF_TIMES, zone: v.SEPA_CUTOFF_ZONE, weekdays: v.SEPA_BUSINESS_DAYS, holidays: v.SEPA_HOLIDAYS });
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
    /** Dates (YYYY-MM-DD) the bank is closed: TARGET2 holidays, the bank's own. */
    SEPA_HOLIDAYS: z.string().default(""),
    /** Send SCT Inst (local instrument INST) instead of standard SEPA credit transfers. */
    SEPA_INSTANT: env.bool(false),
    /** The bank's file drop as a directory (inbox/, outbox/, archive/ under it). */
    SEPA_FILE_DROP_DIR: z.string().min(1),
    /** How often to close due windows, upload files and read the bank's reports, ms. */
    SEPA_POLL_MS: env.int(5_000).pipe(z.number().int().min(10).max(600_000)),
  })
  .superRefine(cutoffCheck);

export type SepaConfig = z.infer<typeof sepaConfigSchema>;
