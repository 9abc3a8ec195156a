import { randomBytes } from "node:crypto";
import { AbstractStartedContainer, GenericContainer, getContainerRuntimeClient, type BoundPorts, type StartedTestContainer } from "testcontainers";
import { ownerLabels, removeOrphanedContainers } from "./cleanup.js";
import { freePort } from "./ports.js";
import { CorridorReadyWaitStrategy } from "./wait-strategy.js";

/** The image `npm run image` builds (the Helm chart's repository and appVersion); CORRIDOR_IMAGE overrides it. */
export const CORRIDOR_IMAGE = "corridor:0.1.0";
/** The port the image's embedded system serves the REST API on, unless host networking picks another. */
export const CORRIDOR_HTTP_PORT = 8080;
/** The REST API's version segment. */
export const API_VERSION = "2025-10-13";

/**
 * Corridor's all-in-one system (the gateway and every service, PGlite inside the container) as a
 * Testcontainers module:
 *
 *   const corridor = await new CorridorContainer().withCredentials(id, secret).start();
 *   fetch(`${corridor.getApiUrl()}/config`, { headers: { authorization: basic(id, secret) } });
 *
 * The container's first start creates a sandbox platform whose first token has exactly the
 * credentials given (random ones otherwise; both are readable from the started container). It is
 * ready when `/readyz` answers 200 and those credentials authenticate.
 *
 * `.withNetworkMode("host")` runs it in the host's network namespace: nothing is mapped, the API
 * listens on 127.0.0.1 on a free port picked at start (so parallel containers do not clash), and
 * the container reaches services on the host's loopback (a webhook receiver, Postgres) as
 * 127.0.0.1. Otherwise the API's port 8080 is mapped to a random host port as usual.
 *
 * Everything else is GenericContainer's: `.withEnvironment({ DATABASE_URL, KAFKA_BROKERS, ... })`
 * configures the system (see the root README's environment table), `.withLogConsumer(...)`,
 * `.withStartupTimeout(ms)`, and so on.
 */
export class CorridorContainer extends GenericContainer {
  private clientId = `corridor_tc_${randomBytes(6).toString("hex")}`;
  private clientSecret = randomBytes(24).toString("hex");
  /** Environment keys start() set (not the user's). */
  private readonly injected = new Set<string>();

  constructor(image: string = process.env.CORRIDOR_IMAGE || CORRIDOR_IMAGE) {
    super(image);
    this.withLabels(ownerLabels());
  }

  /** The sandbox platform's first token: created with these on the first start, used after. */
  withCredentials(clientId: string, clientSecret: string): this {
    if (!clientId) throw new Error("withCredentials: clientId is empty");
    if (clientSecret.length < 16) throw new Error("withCredentials: clientSecret must be at least 16 characters");
    this.clientId = clientId;
    this.clientSecret = clientSecret;
    return this;
  }

  private get hostNetwork(): boolean {
    return this.networkMode === "host";
  }

  override async start(): Promise<StartedCorridorContainer> {
    if (process.env.TESTCONTAINERS_RYUK_DISABLED === "true") await removeOrphanedContainers();

    // What the user set (a second start must not take the first start's ports for theirs).
    const user = Object.fromEntries(Object.entries(this.environment).filter(([k]) => !this.injected.has(k)));
    let baseUrlOf: (bound: BoundPorts) => Promise<string>;
    const own: Record<string, string> = {
      CORRIDOR_BOOTSTRAP_CLIENT_ID: this.clientId,
      CORRIDOR_BOOTSTRAP_CLIENT_SECRET: this.clientSecret,
    };
    if (this.hostNetwork) {
      // The host's loopback, on ports of our choosing (the user's CORRIDOR_HTTP_PORT wins).
      const port = Number(user.CORRIDOR_HTTP_PORT ?? (await freePort()));
      own.CORRIDOR_HTTP_HOST = user.CORRIDOR_HTTP_HOST ?? "127.0.0.1";
      own.CORRIDOR_HTTP_PORT = String(port);
      own.CORRIDOR_INTERNAL_PORT = user.CORRIDOR_INTERNAL_PORT ?? String(await freePort());
      const url = `http://127.0.0.1:${port}`;
      baseUrlOf = async () => url;
    } else {
      own.CORRIDOR_HTTP_HOST = "0.0.0.0";
      own.CORRIDOR_HTTP_PORT = String(CORRIDOR_HTTP_PORT);
      this.withExposedPorts(CORRIDOR_HTTP_PORT);
      baseUrlOf = async (bound) => {
        const client = await getContainerRuntimeClient();
        return `http://${client.info.containerRuntime.host}:${bound.getBinding(CORRIDOR_HTTP_PORT)}`;
      };
    }
    for (const key of Object.keys(own)) if (!(key in user) || key.startsWith("CORRIDOR_BOOTSTRAP_")) this.injected.add(key);
    this.environment = { ...own, ...user, ...pick(own, ["CORRIDOR_BOOTSTRAP_CLIENT_ID", "CORRIDOR_BOOTSTRAP_CLIENT_SECRET"]) };
    this.createOpts.Env = Object.entries(this.environment).map(([key, value]) => `${key}=${value}`);

    const wait = new CorridorReadyWaitStrategy(baseUrlOf, { clientId: this.clientId, clientSecret: this.clientSecret }, API_VERSION);
    if (this.startupTimeoutMs !== undefined) wait.withStartupTimeout(this.startupTimeoutMs);
    this.withWaitStrategy(wait);

    const started = await super.start();
    const baseUrl = this.hostNetwork ? `http://127.0.0.1:${this.environment.CORRIDOR_HTTP_PORT}` : `http://${started.getHost()}:${started.getMappedPort(CORRIDOR_HTTP_PORT)}`;
    return new StartedCorridorContainer(started, baseUrl, this.clientId, this.clientSecret);
  }
}

/** A running Corridor: where to call it, and as whom. */
export class StartedCorridorContainer extends AbstractStartedContainer {
  constructor(
    startedTestContainer: StartedTestContainer,
    private readonly baseUrl: string,
    private readonly clientId: string,
    private readonly clientSecret: string,
  ) {
    super(startedTestContainer);
  }

  /** http://host:port, without the API version (`/readyz`, `/healthz` live here). */
  getBaseUrl(): string {
    return this.baseUrl;
  }

  /** The versioned REST API: `${getBaseUrl()}/2025-10-13`. */
  getApiUrl(): string {
    return `${this.baseUrl}/${API_VERSION}`;
  }

  /** The sandbox console the gateway serves (sign in with getClientId() and getClientSecret()). */
  getConsoleUrl(): string {
    return `${this.baseUrl}/console/`;
  }

  getClientId(): string {
    return this.clientId;
  }

  getClientSecret(): string {
    return this.clientSecret;
  }

  /** `Basic …` for the sandbox platform's credentials. */
  getAuthorizationHeader(): string {
    return `Basic ${Buffer.from(`${this.clientId}:${this.clientSecret}`).toString("base64")}`;
  }
}

function pick(from: Record<string, string>, keys: string[]): Record<string, string> {
  return Object.fromEntries(keys.map((k) => [k, from[k]!]));
}
