import { lookup as dnsLookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { env, z } from "../config.js";

/**
 * Address safety for outbound requests to URLs a platform chose (its webhookEndpoint): which
 * addresses a target may have, checked when the URL is configured (its spelling) and again when
 * a request connects (every address DNS answers). The request then connects to an address that
 * was checked (guarded-http.ts), so DNS cannot answer differently between the check and the
 * connection (rebinding). docs/events.md "Webhook endpoint rules (SSRF)" is the public account.
 *
 * IP parsing and the special-purpose ranges are ipaddr.js's (IANA's IPv4 and IPv6
 * special-purpose registries); on top of them, IPv6 is public only inside 2000::/3 (global
 * unicast), which also catches the deprecated IPv4-compatible ::/96 that no registry lists.
 */

/** What a non-public address is; each names a rule in the public error. */
export type AddressKind =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "carrier-grade NAT"
  | "multicast"
  | "broadcast"
  | "unspecified"
  | "reserved"
  | "IPv4-embedding IPv6";

const V4_KINDS: Record<string, AddressKind> = {
  unicast: "public",
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "link-local",
  loopback: "loopback",
  carrierGradeNat: "carrier-grade NAT",
  private: "private",
  reserved: "reserved",
  as112: "reserved",
  amt: "reserved",
};

const V6_KINDS: Record<string, AddressKind> = {
  unicast: "public",
  unspecified: "unspecified",
  linkLocal: "link-local",
  multicast: "multicast",
  loopback: "loopback",
  uniqueLocal: "private",
  deprecatedSiteLocal: "private",
  // Forms that carry an IPv4 address (mapped, translated, NAT64, 6to4, Teredo): refused whatever
  // the IPv4 address is, so no spelling of an internal IPv4 address gets through.
  ipv4Mapped: "IPv4-embedding IPv6",
  rfc6145: "IPv4-embedding IPv6",
  rfc6052: "IPv4-embedding IPv6",
  "6to4": "IPv4-embedding IPv6",
  teredo: "IPv4-embedding IPv6",
};

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3") as [ipaddr.IPv6, number];
const IPV4_COMPATIBLE_V6 = ipaddr.parseCIDR("::/96") as [ipaddr.IPv6, number];

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** An address in canonical text ("127.0.0.1", "::1"), or undefined when the text is not one. Brackets and a zone are allowed for IPv6. */
export function parseIpAddress(text: string): IpAddress | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  // Only canonical spellings here: other IPv4 spellings (2130706433, 0x7f000001, 0177.0.0.1,
  // 127.1) reach this module already normalised by the WHATWG URL parser (checkUrlTarget), and
  // DNS answers are canonical. Anything else is not an address but a (bad) hostname.
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (bare.includes(":") && ipaddr.IPv6.isValid(bare)) return ipaddr.IPv6.parse(bare);
  return undefined;
}

/** The range an address falls in; "public" only for globally routable unicast. */
export function addressKind(ip: IpAddress): AddressKind {
  if (ip.kind() === "ipv4") return V4_KINDS[ip.range()] ?? "reserved";
  const v6 = ip as ipaddr.IPv6;
  const kind = V6_KINDS[v6.range()] ?? "reserved";
  if (kind !== "public") return kind;
  if (v6.match(IPV4_COMPATIBLE_V6)) return "IPv4-embedding IPv6";
  // Everything outside 2000::/3 is unassigned or special-purpose.
  return v6.match(GLOBAL_UNICAST_V6) ? "public" : "reserved";
}

/** Classifies an address given as text (canonical spellings); undefined when it is not an address. */
export function classifyAddress(text: string): AddressKind | undefined {
  const ip = parseIpAddress(text);
  return ip && addressKind(ip);
}

// ---------------------------------------------------------------------------------------------
// The operator's settings and the policy per platform environment.

/** A comma-separated list of CIDR ranges (e.g. "10.20.0.0/16,fd00:1::/64"). */
const cidrList = () =>
  env.list().superRefine((list, ctx) => {
    for (const c of list) if (!ipaddr.isValidCIDR(c)) ctx.addIssue({ code: "custom", message: `${c} is not a CIDR range such as 10.20.0.0/16` });
  });

/**
 * The operator's settings for webhook targets, spread into the zod config of every process that
 * checks them (gateway, auth-sessions, notifications): one default each, here.
 */
export const webhookTargetEnv = {
  /**
   * Sandbox platforms may use loopback webhook endpoints (localhost, 127.0.0.0/8, ::1; plain http
   * allowed for these only). On for local development; the Helm chart turns it off. Never applies
   * to production platforms.
   */
  CORRIDOR_WEBHOOK_ALLOW_LOOPBACK: env.bool(true),
  /**
   * CIDR ranges every platform's webhooks may reach although they are not public (e.g. a peered
   * network); production platforms still need https. Empty: public addresses only.
   */
  CORRIDOR_WEBHOOK_ALLOWED_RANGES: cidrList(),
};

export const webhookTargetSettingsSchema = z.object(webhookTargetEnv);
export type WebhookTargetSettings = z.infer<typeof webhookTargetSettingsSchema>;
/** The settings at their defaults (what a process uses that is not given any). */
export const WEBHOOK_TARGET_DEFAULTS: WebhookTargetSettings = Object.freeze(webhookTargetSettingsSchema.parse({}));

export type TargetEnvironment = "SANDBOX" | "PRODUCTION";

/** What one platform's outbound targets may be. */
export interface TargetPolicy {
  environment: TargetEnvironment;
  /** Loopback addresses and names allowed (plain http allowed for these only). Sandbox only. */
  allowLoopback: boolean;
  /** Operator-allowed ranges, whatever their kind. */
  allowedRanges: readonly (readonly [IpAddress, number])[];
}

export function targetPolicy(environment: TargetEnvironment, settings: WebhookTargetSettings = WEBHOOK_TARGET_DEFAULTS): TargetPolicy {
  return {
    environment,
    allowLoopback: environment === "SANDBOX" && settings.CORRIDOR_WEBHOOK_ALLOW_LOOPBACK,
    allowedRanges: settings.CORRIDOR_WEBHOOK_ALLOWED_RANGES.map((c) => ipaddr.parseCIDR(c)),
  };
}

function inAllowedRange(ip: IpAddress, policy: TargetPolicy): boolean {
  return policy.allowedRanges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net as never, bits));
}

/** Why the policy refuses an address, or undefined when it may be reached. */
export function addressProblem(ip: IpAddress, policy: TargetPolicy): { kind: AddressKind } | undefined {
  const kind = addressKind(ip);
  if (kind === "public" || inAllowedRange(ip, policy)) return undefined;
  if (kind === "loopback" && policy.allowLoopback) return undefined;
  return { kind };
}

// ---------------------------------------------------------------------------------------------
// URLs (configuration time, and again before each request).

/** The rule a refused webhook URL breaks: a stable name, quoted in the public error's reason. */
export type TargetRule =
  | "URL_INVALID"
  | "SCHEME_NOT_ALLOWED"
  | "CREDENTIALS_NOT_ALLOWED"
  | "HTTPS_REQUIRED"
  | "INTERNAL_HOSTNAME"
  | "NON_PUBLIC_ADDRESS";

export interface TargetProblem {
  rule: TargetRule;
  /** Says what is wrong and names the rule, e.g. "… (rule NON_PUBLIC_ADDRESS)". */
  reason: string;
}

const problem = (rule: TargetRule, text: string): TargetProblem => ({ rule, reason: `${text} (rule ${rule})` });

/**
 * Names that lead to a private network's hosts, never a public receiver: single labels (a
 * search-domain or cluster name such as `metadata` or `redis`), ICANN's private-use `.internal`
 * (which covers `metadata.google.internal`), mDNS `.local` (RFC 6762, and Kubernetes'
 * `cluster.local`), `.home.arpa` (RFC 8375) and the rest of `.arpa`, Kubernetes' short `.svc`, and
 * the customary private suffixes `.localdomain`, `.lan`, `.intranet`, `.corp`. `localhost` and
 * `*.localhost` are loopback names (RFC 6761), allowed where loopback is. Names that merely do not
 * exist publicly (`.test`, `.example`, `.invalid`) are not refused here: they resolve to nothing,
 * or, on a resolver that makes them resolve, to addresses the connection-time check judges.
 */
const INTERNAL_SUFFIXES = ["internal", "local", "localdomain", "home.arpa", "arpa", "svc", "lan", "intranet", "corp"];

function isLoopbackName(host: string): boolean {
  return host === "localhost" || host.endsWith(".localhost");
}

function isInternalName(host: string): boolean {
  if (!host.includes(".")) return true;
  return INTERNAL_SUFFIXES.some((s) => host === s || host.endsWith(`.${s}`));
}

/** The URL's host as the request will use it: IP literals canonical, a hostname lower case without its trailing dot. */
export function targetHost(url: URL): { ip: IpAddress; name?: undefined } | { ip?: undefined; name: string } {
  const ip = parseIpAddress(url.hostname);
  if (ip) return { ip };
  return { name: url.hostname.toLowerCase().replace(/\.$/, "") };
}

const describeKind = (kind: AddressKind) => (kind === "reserved" ? "reserved (special-purpose, documentation or benchmarking)" : kind);

/**
 * Checks a webhook URL's spelling against a policy. The WHATWG URL parser normalises every IPv4
 * spelling (2130706433, 0x7f000001, 0177.0.0.1, 127.1) and IPv6 literal first, so each is judged
 * as the address it is. Hostnames are not resolved here (checkedAddresses does that per request).
 */
export function checkUrlTarget(value: string, policy: TargetPolicy): { url: URL } | { problem: TargetProblem } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: problem("URL_INVALID", "must be an absolute URL such as https://hooks.example.com/corridor") };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { problem: problem("SCHEME_NOT_ALLOWED", "must use https") };
  if (url.username || url.password) return { problem: problem("CREDENTIALS_NOT_ALLOWED", "must not carry credentials") };
  const host = targetHost(url);
  let loopback: boolean;
  if (host.ip) {
    const refused = addressProblem(host.ip, policy);
    if (refused) {
      return { problem: problem("NON_PUBLIC_ADDRESS", `must be a public address: ${host.ip.toString()} is ${describeKind(refused.kind)}`) };
    }
    loopback = addressKind(host.ip) === "loopback";
  } else {
    loopback = isLoopbackName(host.name);
    if (loopback ? !policy.allowLoopback : isInternalName(host.name)) {
      return { problem: problem("INTERNAL_HOSTNAME", `must be a public DNS name: ${host.name} names an internal or special-use host`) };
    }
  }
  if (url.protocol === "http:" && !(loopback && policy.allowLoopback)) {
    return {
      problem: problem(
        "HTTPS_REQUIRED",
        policy.allowLoopback ? "must use https (plain http only to localhost, 127.0.0.1 or [::1])" : "must use https",
      ),
    };
  }
  return { url };
}

// ---------------------------------------------------------------------------------------------
// Resolution (each request).

/** One address a name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to every address it has (injected in tests; the default asks the system resolver once). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) => {
  const all = await dnsLookup(hostname, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** A request refused because its target is not allowed; `reason` is safe to show the platform. */
export class TargetRefusedError extends Error {
  readonly code = "ERR_TARGET_REFUSED";
  constructor(readonly problem: TargetProblem) {
    super(problem.reason);
    this.name = "TargetRefusedError";
  }
}

/** A name that resolved to nothing. */
export class TargetUnresolvedError extends Error {
  readonly code = "ENOTFOUND";
  constructor(hostname: string) {
    super(`${hostname} has no address`);
    this.name = "TargetUnresolvedError";
  }
}

/**
 * Resolves a hostname once and checks every address it answers: one address the policy refuses
 * refuses the whole name (a mixed answer is how rebinding and split-horizon tricks look). Answers
 * the addresses to connect to.
 */
export async function checkedAddresses(hostname: string, policy: TargetPolicy, resolve: HostResolver = systemResolver): Promise<ResolvedAddress[]> {
  const literal = parseIpAddress(hostname);
  const answers = literal ? [{ address: literal.toString(), family: literal.kind() === "ipv4" ? 4 : 6 } as const] : await resolve(hostname);
  if (answers.length === 0) throw new TargetUnresolvedError(hostname);
  for (const a of answers) {
    const ip = parseIpAddress(a.address);
    const refused = ip ? addressProblem(ip, policy) : { kind: "reserved" as const };
    if (refused) {
      throw new TargetRefusedError(
        problem("NON_PUBLIC_ADDRESS", `must resolve to public addresses only: ${hostname} resolves to a${/^[aeiou]/i.test(refused.kind) ? "n" : ""} ${describeKind(refused.kind)} address`),
      );
    }
  }
  return answers.map((a) => ({ address: a.address, family: a.family }));
}
