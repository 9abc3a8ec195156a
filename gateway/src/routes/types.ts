import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from "fastify";
import type { WebhookTargetSettings } from "@corridor/kit";
import type { PlatformConfig } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import type { Authenticator } from "../auth.js";
import type { ServiceClients } from "../clients.js";
import type { GuessThrottle } from "../rate-limit.js";

/** The Fastify instance routes are declared on: TypeBox schemas give typed params, query and body. */
export type Api = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What route modules need: service clients and the authenticator (for cache eviction). */
export interface RouteDeps {
  clients: ServiceClients;
  auth: Authenticator;
  /** Throttles guessing of codes that need no credentials (device codes). */
  guesses: GuessThrottle;
  /** The platform's config as of now (a copy the config board vouches for, else auth-sessions'). */
  platformConfig(platformId: string): Promise<PlatformConfig | undefined>;
  /** The operator's webhook-target settings (kit net/address-safety.ts). */
  webhookTargets: WebhookTargetSettings;
  /** The operator's end-user terms (CORRIDOR_END_USER_TERMS_URL / _VERSION), when it publishes some. */
  endUserTerms?: { url: string; version: string };
  /** The operator's VASP directory (CORRIDOR_VASP_DIRECTORY), sorted by name; empty when it configures none. */
  vasps: readonly { vaspName: string; url: string }[];
}
