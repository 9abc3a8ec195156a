import { execFileSync } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";
import Provider, { type Configuration } from "oidc-provider";

/**
 * A real OpenID provider for the OAUTH suites: `oidc-provider` (a certified implementation) on
 * loopback HTTPS, its certificate signed by a CA made for the run with openssl. ID tokens come out
 * of the authorization-code flow (PKCE), driven over HTTP by `OidcProviderClient` like a browser
 * would: the interaction (login and consent) is answered by this server at once for the account
 * named by `login_hint`. Test control routes rotate the signing keys and issue one ID token with
 * an `iat` in the past through the provider's own IdToken model (a token held for a while). The
 * provider may run in another process than the test (split mode: test/infra/split-setup.ts); the
 * client needs only the issuer URL and the CA's PEM.
 */

/** The relying party Corridor is configured with (its `aud`). */
export const OIDC_RP_CLIENT = "corridor-e2e-rp";
/** Another client of the same issuer: its ID tokens carry another `aud`. */
export const OIDC_OTHER_CLIENT = "corridor-e2e-other";
/** A client whose ID tokens live one second. */
export const OIDC_SHORT_CLIENT = "corridor-e2e-short";
/**
 * How long the e2e systems keep a fetched key set (CORRIDOR_OIDC_JWKS_CACHE_MS; cooldown 0): a key
 * the provider stopped publishing verifies at most this long.
 */
export const E2E_OIDC_JWKS_CACHE_MS = 2_000;
/** The audiences the e2e systems trust for this provider (CORRIDOR_OIDC_ISSUERS): never OIDC_OTHER_CLIENT. */
export const E2E_OIDC_AUDIENCES = [OIDC_RP_CLIENT, OIDC_SHORT_CLIENT];
const CLIENT_SECRET = "e2e-client-secret-not-a-real-one";
const REDIRECT_URI = "https://rp.e2e.example/callback";

export interface TestCa {
  dir: string;
  caFile: string;
  caPem: string;
  /** A server certificate for 127.0.0.1 and localhost the CA signed. */
  serverKey: string;
  serverCert: string;
  remove(): void;
}

/** A CA for the run and a loopback server certificate it signs (openssl CLI). */
export function makeTestCa(name = "Corridor test OIDC CA"): TestCa {
  const dir = mkdtempSync(join(tmpdir(), "corridor-oidc-ca-"));
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  ssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", `/CN=${name}`);
  ssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1");
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n");
  ssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.ext");
  return {
    dir,
    caFile: join(dir, "ca.pem"),
    caPem: readFileSync(join(dir, "ca.pem"), "utf8"),
    serverKey: readFileSync(join(dir, "server.key"), "utf8"),
    serverCert: readFileSync(join(dir, "server.pem"), "utf8"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface RunningOidcProvider {
  issuer: string;
  caFile: string;
  caPem: string;
  close(): Promise<void>;
}

async function newSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: `k-${randomUUID().slice(0, 8)}`, alg: "RS256", use: "sig" };
}

function readBody(req: import("node:http").IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      try {
        resolve(text ? (JSON.parse(text) as Record<string, unknown>) : {});
      } catch (err) {
        reject(err);
      }
    });
    req.on("error", reject);
  });
}

/** Starts the provider on 127.0.0.1 (a free port) over HTTPS; `ca` defaults to a new one removed on close. */
export async function startOidcProvider(opts: { ca?: TestCa } = {}): Promise<RunningOidcProvider> {
  const ca = opts.ca ?? makeTestCa();
  let keys: JWK[] = [await newSigningKey()];
  let issuer = "";
  let provider: Provider;
  let handler: ReturnType<Provider["callback"]>;

  const build = () => {
    const config: Configuration = {
      clients: [OIDC_RP_CLIENT, OIDC_OTHER_CLIENT, OIDC_SHORT_CLIENT].map((client_id) => ({
        client_id,
        client_secret: CLIENT_SECRET,
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        id_token_signed_response_alg: "RS256",
      })),
      jwks: { keys: keys as never },
      findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, email: `${sub}@oidc.e2e.example`, email_verified: true }) }),
      claims: { openid: ["sub"], email: ["email", "email_verified"] },
      // Scope claims in the ID token too (the relying party reads `email` from it).
      conformIdTokenClaims: false,
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      features: { devInteractions: { enabled: false } },
      ttl: {
        IdToken: (_ctx, _token, client) => (client.clientId === OIDC_SHORT_CLIENT ? 1 : 600),
        AccessToken: 600,
        Grant: 600,
        Interaction: 600,
        Session: 600,
      },
      cookies: { keys: ["e2e-cookie-key-not-a-real-one"] },
    };
    provider = new Provider(issuer, config);
    handler = provider.callback();
  };

  /** The interaction: log in the `login_hint` account and grant the requested scopes, at once. */
  const finishInteraction = async (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => {
    const p = provider;
    const details = await p.interactionDetails(req, res);
    const accountId = String(details.params.login_hint ?? "");
    if (!accountId) throw new Error("the authorization request has no login_hint");
    const grant = new p.Grant({ accountId, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope ?? "openid"));
    const grantId = await grant.save();
    await p.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  };

  const server = https.createServer({ key: ca.serverKey, cert: ca.serverCert }, (req, res) => {
    const path = new URL(req.url ?? "/", "https://127.0.0.1").pathname;
    const fail = (err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(String((err as Error)?.message ?? err));
    };
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (path.startsWith("/interaction/")) {
      finishInteraction(req, res).catch(fail);
    } else if (req.method === "POST" && path === "/test-control/rotate") {
      // add: a new signing key first, the old ones kept (published); replace: only the newest stays.
      readBody(req)
        .then(async (body) => {
          if (body.mode === "add") keys = [await newSigningKey(), ...keys];
          else if (body.mode === "replace") keys = [keys[0]!];
          else throw new Error("mode must be add or replace");
          build();
          json(200, { kids: keys.map((k) => k.kid) });
        })
        .catch(fail);
    } else if (req.method === "POST" && path === "/test-control/held-token") {
      // An ID token issued `ageSeconds` ago (iat back-dated) by the provider's own IdToken model.
      readBody(req)
        .then(async (body) => {
          const client = await provider.Client.find(OIDC_RP_CLIENT);
          const sub = String(body.sub);
          const token = new provider.IdToken({ sub, email: `${sub}@oidc.e2e.example` }, { client });
          (token as unknown as { scope: string }).scope = "openid email";
          const iat = Math.floor(Date.now() / 1000) - Number(body.ageSeconds);
          token.set("iat", iat);
          json(200, { idToken: await token.issue({ use: "idtoken", expiresAt: iat + 3600 }) });
        })
        .catch(fail);
    } else {
      handler(req, res);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  build();
  return {
    issuer,
    caFile: ca.caFile,
    caPem: ca.caPem,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (!opts.ca) ca.remove();
    },
  };
}

/** What a test needs of a provider running anywhere: its issuer and the CA that signed its certificate. */
export interface OidcProviderRef {
  issuer: string;
  caPem: string;
}

interface Answer {
  status: number;
  headers: import("node:http").IncomingHttpHeaders;
  body: string;
}

/** Drives the provider over HTTPS as a browser and a relying party's backend would. */
export class OidcProviderClient {
  constructor(readonly ref: OidcProviderRef) {}

  private request(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = https.request(url, { method: opts.method ?? "GET", headers: opts.headers, ca: this.ref.caPem }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(opts.body);
    });
  }

  /** A real ID token for `sub` through the authorization-code flow with PKCE (client: Corridor's relying party unless named). */
  async idToken(sub: string, clientId = OIDC_RP_CLIENT): Promise<string> {
    const { issuer } = this.ref;
    const discovery = JSON.parse((await this.request(`${issuer}/.well-known/openid-configuration`)).body) as { authorization_endpoint: string; token_endpoint: string };
    const verifier = randomBytes(32).toString("base64url");
    const auth = new URL(discovery.authorization_endpoint);
    for (const [k, v] of Object.entries({
      client_id: clientId,
      response_type: "code",
      scope: "openid email",
      redirect_uri: REDIRECT_URI,
      state: randomBytes(8).toString("hex"),
      nonce: randomBytes(8).toString("hex"),
      login_hint: sub,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    })) {
      auth.searchParams.set(k, v);
    }
    // Follow the redirects (authorize → interaction → resume → redirect_uri) with a cookie jar.
    const jar = new Map<string, string>();
    let url = auth.toString();
    for (let hop = 0; hop < 6; hop++) {
      const res = await this.request(url, { headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } });
      for (const line of res.headers["set-cookie"] ?? []) {
        const [pair] = line.split(";");
        const eq = pair!.indexOf("=");
        jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
      }
      if (res.status < 300 || res.status >= 400 || !res.headers.location) throw new Error(`the authorization flow stopped at ${new URL(url).pathname} with HTTP ${res.status}: ${res.body.slice(0, 300)}`);
      const next = new URL(res.headers.location, url);
      if (next.href.startsWith(REDIRECT_URI)) {
        const code = next.searchParams.get("code");
        if (!code) throw new Error(`the provider redirected without a code: ${next.search}`);
        const token = await this.request(discovery.token_endpoint, {
          method: "POST",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(CLIENT_SECRET)}`).toString("base64")}`,
          },
          body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier }).toString(),
        });
        if (token.status !== 200) throw new Error(`the token endpoint answered HTTP ${token.status}: ${token.body}`);
        return (JSON.parse(token.body) as { id_token: string }).id_token;
      }
      url = next.href;
    }
    throw new Error("the authorization flow did not reach the redirect URI");
  }

  /** Rotates the provider's signing keys: `add` a new first key (old ones still published), or `replace` by the newest alone. */
  async rotate(mode: "add" | "replace"): Promise<string[]> {
    const res = await this.request(`${this.ref.issuer}/test-control/rotate`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ mode }) });
    if (res.status !== 200) throw new Error(`rotate answered HTTP ${res.status}: ${res.body}`);
    return (JSON.parse(res.body) as { kids: string[] }).kids;
  }

  /** An ID token the provider issued `ageSeconds` ago (signed by its current key, not expired). */
  async heldToken(sub: string, ageSeconds: number): Promise<string> {
    const res = await this.request(`${this.ref.issuer}/test-control/held-token`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ sub, ageSeconds }) });
    if (res.status !== 200) throw new Error(`held-token answered HTTP ${res.status}: ${res.body}`);
    return (JSON.parse(res.body) as { idToken: string }).idToken;
  }

  /** A token with the provider's issuer and Corridor's audience, signed by a key the provider never had. */
  async forgedToken(sub: string): Promise<string> {
    const { privateKey } = await generateKeyPair("RS256");
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ sub, email: `${sub}@oidc.e2e.example` })
      .setProtectedHeader({ alg: "RS256", kid: `forged-${randomUUID().slice(0, 8)}` })
      .setIssuer(this.ref.issuer)
      .setAudience(OIDC_RP_CLIENT)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(privateKey);
  }
}

/** The `kid` in a JWT's header. */
export function kidOf(token: string): string | undefined {
  return (JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString("utf8")) as { kid?: string }).kid;
}
