import { allCurrencies, checkUrlTarget, errors, findCurrency, MAX_AMOUNT, type FieldError, type TargetPolicy } from "@corridor/kit";
import {
  ENVIRONMENTS,
  PERMISSIONS,
  TRANSACTION_TYPES,
  type Environment,
  type Permission,
  type SupportedCurrency,
} from "./types.js";

/**
 * Input checks of the service. Each collects every problem it finds, so one 400 INVALID_INPUT
 * lists all of them; field names are the public (REST) names so the gateway can pass them on.
 */

const NAME_MAX = 255;

function throwIfAny(errs: FieldError[]): void {
  if (errs.length > 0) throw errors.invalidInput(errs);
}

function checkName(value: string, field: string, errs: FieldError[]): void {
  if (value.trim().length === 0) errs.push({ field, reason: "is required" });
  else if ([...value].length > NAME_MAX) errs.push({ field, reason: `must be at most ${NAME_MAX} characters` });
}

/**
 * Permissions arrive as strings (the handler maps proto enums to their names, anything else to
 * what it was); they must be a non-empty set of VIEW, TRANSACT, MANAGE.
 */
function checkPermissions(values: string[], errs: FieldError[]): Permission[] {
  if (values.length === 0) {
    errs.push({ field: "permissions", reason: "must list at least one of VIEW, TRANSACT, MANAGE" });
    return [];
  }
  const seen = new Set<string>();
  for (const v of values) {
    if (!(PERMISSIONS as readonly string[]).includes(v)) {
      errs.push({ field: "permissions", reason: `${v} is not one of VIEW, TRANSACT, MANAGE` });
    } else if (seen.has(v)) {
      errs.push({ field: "permissions", reason: `${v} is listed twice` });
    }
    seen.add(v);
  }
  return values as Permission[];
}

export function validateNewToken(input: { name: string; permissions: string[] }): { name: string; permissions: Permission[] } {
  const errs: FieldError[] = [];
  checkName(input.name, "name", errs);
  const permissions = checkPermissions(input.permissions, errs);
  throwIfAny(errs);
  return { name: input.name, permissions };
}

// Printable ASCII without ':' (the Basic separator) or spaces.
const FIXED_CLIENT_ID = /^[\x21-\x39\x3b-\x7e]{1,255}$/;
// Printable ASCII; the secret follows the ':' so it may contain one.
const FIXED_SECRET = /^[\x21-\x7e]{1,255}$/;

export interface NewPlatformInput {
  name: string;
  environment: string;
  isRegulated: boolean;
  clientId?: string;
  clientSecret?: string;
}

export function validateNewPlatform(input: NewPlatformInput): NewPlatformInput & { environment: Environment } {
  const errs: FieldError[] = [];
  checkName(input.name, "name", errs);
  if (!(ENVIRONMENTS as readonly string[]).includes(input.environment)) {
    errs.push({ field: "environment", reason: "must be SANDBOX or PRODUCTION" });
  }
  if (input.clientId !== undefined && !FIXED_CLIENT_ID.test(input.clientId)) {
    errs.push({ field: "clientId", reason: "must be 1 to 255 printable ASCII characters without ':' or spaces" });
  }
  if (input.clientSecret !== undefined && !FIXED_SECRET.test(input.clientSecret)) {
    errs.push({ field: "clientSecret", reason: "must be 1 to 255 printable ASCII characters without spaces" });
  }
  throwIfAny(errs);
  return input as NewPlatformInput & { environment: Environment };
}

/** What PATCH /config may change; undefined means "leave as it is". */
export interface ConfigPatch {
  umaDomain?: string;
  webhookEndpoint?: string;
  supportedCurrencies?: SupportedCurrency[];
  /** "" clears it (with the origins): the deployment's default relying party applies again. */
  passkeyRelyingPartyId?: string;
  /** The whole list is replaced. */
  passkeyOrigins?: string[];
  /** CORRIDOR or GRID (checked); a string as it arrives. */
  webhookEventNaming?: string;
}

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const CURRENCY_CODE = /^[A-Z][A-Z0-9]{2,9}$/;
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_.]{0,63}$/;
const URL_MAX = 2048;

/** A DNS hostname of at least two labels, compared in lower case. */
export function isHostname(value: string): boolean {
  if (value.length > 253) return false;
  const labels = value.toLowerCase().split(".");
  return labels.length >= 2 && labels.every((l) => HOST_LABEL.test(l)) && !/^[0-9]+$/.test(labels[labels.length - 1]!);
}

/**
 * The platform's policy decides (kit net/address-safety.ts, docs/events.md "Webhook endpoint rules
 * (SSRF)"): production, https to a public address or name; sandbox, loopback too while the operator
 * allows it. Each refusal names its rule. Names are not resolved here: notifications checks every
 * address a name resolves to when it sends.
 */
function checkWebhookEndpoint(value: string, policy: TargetPolicy, errs: FieldError[]): void {
  const field = "webhookEndpoint";
  if (value === "") return; // clears it
  if (value.length > URL_MAX) {
    errs.push({ field, reason: `must be at most ${URL_MAX} characters` });
    return;
  }
  const checked = checkUrlTarget(value, policy);
  if ("problem" in checked) errs.push({ field, reason: checked.problem.reason });
}

function checkCurrencies(list: SupportedCurrency[], errs: FieldError[]): void {
  const codes = new Set<string>();
  list.forEach((c, i) => {
    const at = (f: string) => `supportedCurrencies[${i}].${f}`;
    if (!CURRENCY_CODE.test(c.currencyCode)) {
      errs.push({ field: at("currencyCode"), reason: "must be 3 to 10 upper-case letters or digits, starting with a letter" });
    } else if (!findCurrency(c.currencyCode)) {
      // Accounts, quotes and rates exist only for registered currencies: an unknown code would
      // open accounts nothing can price or pay out.
      errs.push({ field: at("currencyCode"), reason: `${c.currencyCode} is not a supported currency (one of ${allCurrencies().map((k) => k.code).join(", ")})` });
    } else if (codes.has(c.currencyCode)) {
      errs.push({ field: at("currencyCode"), reason: `${c.currencyCode} is listed twice` });
    }
    codes.add(c.currencyCode);
    if (c.minAmount < 0n) errs.push({ field: at("minAmount"), reason: "must not be negative" });
    if (c.maxAmount > MAX_AMOUNT) errs.push({ field: at("maxAmount"), reason: `must be at most ${MAX_AMOUNT}` });
    if (c.minAmount > c.maxAmount) errs.push({ field: at("minAmount"), reason: "must not exceed maxAmount" });
    const types = new Set<string>();
    for (const t of c.enabledTransactionTypes) {
      if (!(TRANSACTION_TYPES as readonly string[]).includes(t)) {
        errs.push({ field: at("enabledTransactionTypes"), reason: `${t} is not one of OUTGOING, INCOMING` });
      } else if (types.has(t)) {
        errs.push({ field: at("enabledTransactionTypes"), reason: `${t} is listed twice` });
      }
      types.add(t);
    }
    c.requiredCounterpartyFields.forEach((f, j) => {
      if (!FIELD_NAME.test(f.name)) errs.push({ field: `${at("requiredCounterpartyFields")}[${j}].name`, reason: "must be a field name" });
    });
    for (const key of ["providerRequiredCustomerFields", "providerRequiredCounterpartyCustomerFields"] as const) {
      c[key].forEach((name, j) => {
        if (!FIELD_NAME.test(name)) errs.push({ field: `${at(key)}[${j}]`, reason: "must be a field name" });
      });
    }
  });
}

const ORIGINS_MAX = 20;
/** Development relying parties: browsers treat these hosts as secure contexts over plain http. */
const LOCAL_RP_IDS = new Set(["localhost", "127.0.0.1"]);

/** A WebAuthn relying-party id: a DNS hostname, or localhost / 127.0.0.1 for development. */
function isRelyingPartyId(value: string): boolean {
  return LOCAL_RP_IDS.has(value) || isHostname(value);
}

/**
 * One origin: https://host[:port], or http only on localhost / 127.0.0.1. Answers the normalised
 * origin (what a browser puts in clientDataJSON) or a reason.
 */
function parseOrigin(value: string): { origin: string; host: string } | { reason: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { reason: "must be an origin such as https://wallet.example.com" };
  }
  if (url.username || url.password || url.pathname !== "/" || url.search || url.hash || value.endsWith("/")) {
    return { reason: "must be an origin (scheme, host and optional port) without path, query or credentials" };
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOCAL_RP_IDS.has(url.hostname))) {
    return { reason: "must use https (plain http is allowed only for localhost and 127.0.0.1)" };
  }
  return { origin: url.origin, host: url.hostname };
}

/**
 * The platform's relying party as it will be after a patch (WebAuthn's rule: every origin's host
 * is the RP id or a subdomain of it). Both empty means the deployment default; a set RP id needs at
 * least one origin, and origins need an RP id. Answers the origins normalised.
 */
export function validatePasskeyRelyingParty(rpId: string, origins: string[]): string[] {
  const errs: FieldError[] = [];
  if (rpId === "" && origins.length > 0) {
    errs.push({ field: "passkeyOrigins", reason: "must be empty while passkeyRelyingPartyId is unset (the deployment's relying party applies)" });
  }
  if (rpId !== "" && origins.length === 0) {
    errs.push({ field: "passkeyOrigins", reason: "must list at least one origin when passkeyRelyingPartyId is set" });
  }
  if (origins.length > ORIGINS_MAX) errs.push({ field: "passkeyOrigins", reason: `must list at most ${ORIGINS_MAX} origins` });
  const seen = new Set<string>();
  const normalised = origins.map((value, i) => {
    const field = `passkeyOrigins[${i}]`;
    const parsed = parseOrigin(value);
    if ("reason" in parsed) {
      errs.push({ field, reason: parsed.reason });
      return value;
    }
    if (rpId !== "" && parsed.host !== rpId && !parsed.host.endsWith(`.${rpId}`)) {
      errs.push({ field, reason: `host must be ${rpId} or a subdomain of it (the passkeyRelyingPartyId)` });
    }
    if (seen.has(parsed.origin)) errs.push({ field, reason: `${parsed.origin} is listed twice` });
    seen.add(parsed.origin);
    return parsed.origin;
  });
  throwIfAny(errs);
  return normalised;
}

/** Checks a config patch and answers it normalised (domains in lower case); `webhookPolicy` is the platform's. */
export function validateConfigPatch(patch: ConfigPatch, webhookPolicy: TargetPolicy): ConfigPatch {
  const errs: FieldError[] = [];
  let umaDomain = patch.umaDomain;
  if (umaDomain !== undefined && umaDomain !== "") {
    if (!isHostname(umaDomain)) errs.push({ field: "umaDomain", reason: "must be a hostname such as pay.example.com" });
    umaDomain = umaDomain.toLowerCase();
  }
  if (patch.webhookEndpoint !== undefined) checkWebhookEndpoint(patch.webhookEndpoint, webhookPolicy, errs);
  if (patch.supportedCurrencies !== undefined) checkCurrencies(patch.supportedCurrencies, errs);
  let passkeyRelyingPartyId = patch.passkeyRelyingPartyId;
  if (passkeyRelyingPartyId !== undefined && passkeyRelyingPartyId !== "") {
    passkeyRelyingPartyId = passkeyRelyingPartyId.toLowerCase();
    if (!isRelyingPartyId(passkeyRelyingPartyId)) {
      errs.push({ field: "passkeyRelyingPartyId", reason: "must be a hostname such as wallet.example.com (localhost or 127.0.0.1 for development)" });
    }
  }
  if (patch.webhookEventNaming !== undefined && patch.webhookEventNaming !== "CORRIDOR" && patch.webhookEventNaming !== "GRID") {
    errs.push({ field: "webhookEventNaming", reason: "must be CORRIDOR or GRID" });
  }
  throwIfAny(errs);
  return { ...patch, umaDomain, passkeyRelyingPartyId };
}
