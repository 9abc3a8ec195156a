import https from "node:https";
import { rootCertificates } from "node:tls";
import { checkedLookup, checkUrlTarget, systemResolver, targetPolicy, type HostResolver, type TargetPolicy } from "@corridor/kit";

/**
 * The HTTP the OIDC verifier fetches discovery documents and key sets with. The issuers are the
 * operator's configuration, so trusted; still, a name is resolved once and each address checked
 * (a public address, an operator-allowed range, or loopback when CORRIDOR_OIDC_ALLOW_LOOPBACK),
 * so a DNS answer cannot turn the fetch inward. https only, TLS verified against the system's CAs
 * plus the operator's (CORRIDOR_OIDC_CA_FILE), redirects never followed, the body bounded.
 */
export interface OidcHttpSettings {
  allowLoopback: boolean;
  allowedRanges: string[];
  /** PEM of extra CAs (the operator's CA file). */
  caPem?: string;
  resolve?: HostResolver;
}

/** What jose's remote key set calls (its `customFetch`), and discovery too. */
export type OidcFetch = (url: string, options: { headers?: Headers | Record<string, string>; signal: AbortSignal; method?: string; redirect?: string }) => Promise<Response>;

/** A key set or discovery document larger than this is refused (real ones are a few kB). */
const MAX_BODY_BYTES = 1024 * 1024;

export class OidcFetchRefused extends Error {}

export function oidcPolicy(s: Pick<OidcHttpSettings, "allowLoopback" | "allowedRanges">): TargetPolicy {
  return { ...targetPolicy("PRODUCTION", { CORRIDOR_WEBHOOK_ALLOW_LOOPBACK: false, CORRIDOR_WEBHOOK_ALLOWED_RANGES: s.allowedRanges }), allowLoopback: s.allowLoopback };
}

export function createOidcFetch(settings: OidcHttpSettings): { fetch: OidcFetch; close(): void } {
  const policy = oidcPolicy(settings);
  const agent = new https.Agent({
    keepAlive: true,
    lookup: checkedLookup(policy, settings.resolve ?? systemResolver),
    ...(settings.caPem ? { ca: [...rootCertificates, settings.caPem] } : {}),
  });
  const fetch: OidcFetch = (url, options) =>
    new Promise<Response>((resolve, reject) => {
      const checked = checkUrlTarget(url, policy);
      if ("problem" in checked) return reject(new OidcFetchRefused(`${url} may not be fetched: ${checked.problem.reason}`));
      if (checked.url.protocol !== "https:") return reject(new OidcFetchRefused(`${url} may not be fetched: OIDC issuers are reached over https only`));
      const headers = options.headers instanceof Headers ? Object.fromEntries(options.headers.entries()) : (options.headers ?? {});
      const req = https.request(checked.url, { method: "GET", agent, headers: { accept: "application/json", ...headers }, signal: options.signal }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.byteLength;
          if (size > MAX_BODY_BYTES) {
            res.destroy();
            reject(new OidcFetchRefused(`${url} answered more than ${MAX_BODY_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on("error", reject);
        res.on("end", () => {
          // A redirect is an answer (status 3xx), never followed.
          resolve(new Response(res.statusCode === 204 || res.statusCode === 304 ? null : Buffer.concat(chunks), { status: res.statusCode ?? 502 }));
        });
      });
      req.on("error", reject);
      req.end();
    });
  return { fetch, close: () => agent.destroy() };
}
