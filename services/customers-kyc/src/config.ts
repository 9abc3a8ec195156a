import { loadConfig, z } from "@corridor/kit";

const schema = z.object({
  /** Invitation links are this prefix followed by the code; point it at the page that opens them. */
  CORRIDOR_INVITATION_BASE_URL: z.string().url().default("https://uma.me/i/"),
});

export type CustomersKycConfig = z.infer<typeof schema>;

export function loadCustomersKycConfig(source: NodeJS.ProcessEnv): CustomersKycConfig {
  return loadConfig(schema, source);
}
