import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { boardedCopies, configVersion, type ConfigBoard } from "./config-board.js";

export type PlatformEnvironment = "SANDBOX" | "PRODUCTION";

/** One currency a platform supports, as its config says. */
export interface PlatformCurrencyFacts {
  currencyCode: string;
  minAmount: bigint;
  maxAmount: bigint;
  requiredCounterpartyFields: { name: string; mandatory: boolean }[];
  providerRequiredCustomerFields: string[];
  enabledTransactionTypes: string[];
}

/** A platform's config from auth-sessions, as plain values (no proto types past this client). */
export interface PlatformConfigFacts {
  umaDomain: string;
  isRegulated: boolean;
  webhookEndpoint: string;
  /** How its webhook event types are named: CORRIDOR (default) or GRID. */
  webhookEventNaming: "CORRIDOR" | "GRID";
  /** The config's updated_at; undefined when the platform has no config. */
  updatedAt: Date | undefined;
  /** updated_at in nanoseconds since the epoch (strictly increasing per config, for ordering copies). */
  version: bigint | undefined;
  supportedCurrencies: PlatformCurrencyFacts[];
}

export interface PlatformFacts extends PlatformConfigFacts {
  environment: PlatformEnvironment;
}

/** The facts about platforms other services ask auth-sessions for. */
export interface PlatformFactsClient {
  /** The environment a platform runs in; it never changes, so it is remembered. */
  environment(platformId: string): Promise<PlatformEnvironment>;
  /**
   * The platform's config as of now: a change is seen as soon as the request that made it has
   * answered (from a copy the config board vouches for, else from auth-sessions).
   */
  config(platformId: string): Promise<PlatformConfigFacts>;
  /** Environment and config together. */
  facts(platformId: string): Promise<PlatformFacts>;
}

/**
 * The platform-facts client over auth-sessions' Connect API. `transport` is resolved on first use:
 * a service may call another only at request time, never while starting. Refusals propagate as the
 * ConnectError they are (wrap with `appErrorFromConnect` where a service answers them as its own).
 * With a config board (ServiceDeps.configBoard) configs are kept and served while the board says
 * they are current; without one each config() asks auth-sessions.
 */
export function platformFactsClient(transport: () => Transport, opts: { board?: ConfigBoard } = {}): PlatformFactsClient {
  let client: Client<typeof AuthSessionsService> | undefined;
  const auth = () => (client ??= createClient(AuthSessionsService, transport()));
  const environments = new Map<string, PlatformEnvironment>();
  const environment = async (platformId: string): Promise<PlatformEnvironment> => {
    const known = environments.get(platformId);
    if (known) return known;
    const res = await auth().getPlatform({ platformId });
    const env = res.platform?.environment === Environment.PRODUCTION ? "PRODUCTION" : "SANDBOX";
    if (res.platform) environments.set(platformId, env);
    return env;
  };
  const fetchConfig = async (platformId: string): Promise<PlatformConfigFacts> => {
    const { config: c } = await auth().getPlatformConfig({ platformId });
    const updatedAt = c?.updatedAt;
    // Frozen: one copy may answer many callers (boardedCopies).
    return deepFreeze({
      umaDomain: c?.umaDomain ?? "",
      isRegulated: c?.isRegulatedFinancialInstitution ?? false,
      webhookEndpoint: c?.webhookEndpoint ?? "",
      webhookEventNaming: c?.webhookEventNaming === "GRID" ? "GRID" : "CORRIDOR",
      updatedAt: updatedAt ? timestampDate(updatedAt) : undefined,
      version: updatedAt ? configVersion(timestampDate(updatedAt)) : undefined,
      supportedCurrencies: (c?.supportedCurrencies ?? []).map((s) => ({
        currencyCode: s.currencyCode,
        minAmount: s.minAmount,
        maxAmount: s.maxAmount,
        requiredCounterpartyFields: s.requiredCounterpartyFields.map((f) => ({ name: f.name, mandatory: f.mandatory })),
        providerRequiredCustomerFields: [...s.providerRequiredCustomerFields],
        enabledTransactionTypes: [...s.enabledTransactionTypes],
      })),
    });
  };
  const config = boardedCopies({ board: opts.board, fetch: fetchConfig, versionOf: (c) => c.version });
  return {
    environment,
    config,
    async facts(platformId) {
      const [env, cfg] = await Promise.all([environment(platformId), config(platformId)]);
      return { environment: env, ...cfg };
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !(value instanceof Date) && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
