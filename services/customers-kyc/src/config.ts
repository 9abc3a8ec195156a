import { loadConfig, z } from "@corridor/kit";

const schema = z.object({
  /** Invitation links are this prefix followed by the code; point it at the page that opens them. */
  CORRIDOR_INVITATION_BASE_URL: z.string().url().default("https://uma.me/i/"),
  /** How long a hosted verification link (POST /customers/{id}/kyc-link) stays open, in seconds (default 24 h). */
  CORRIDOR_KYC_LINK_TTL_SECONDS: z.coerce.number().int().min(60).max(30 * 86_400).default(86_400),
});

export type CustomersKycConfig = z.infer<typeof schema>;

export function loadCustomersKycConfig(source: NodeJS.ProcessEnv): CustomersKycConfig {
  return loadConfig(schema, source);
}
