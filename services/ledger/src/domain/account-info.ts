import type { FieldError } from "@corridor/kit";
import { isValidBic, isValidClabe, isValidCnpj, isValidCpf, isValidIban, isValidRoutingNumber } from "./checksums.js";

/**
 * Validation of an external account's `accountInfo`, one variant per `accountType`. Field errors
 * are named from the request body's point of view (`accountInfo.routingNumber`); the gateway adds
 * the `body.` location.
 */

export const ACCOUNT_TYPES = [
  "USD_ACCOUNT",
  "BRL_ACCOUNT",
  "AED_ACCOUNT",
  "MXN_ACCOUNT",
  "EUR_ACCOUNT",
  "SPARK_WALLET",
  "LIGHTNING",
] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];

/** Currencies each account type can hold. */
const CURRENCIES: Record<AccountType, string[]> = {
  USD_ACCOUNT: ["USD"],
  BRL_ACCOUNT: ["BRL"],
  AED_ACCOUNT: ["AED"],
  MXN_ACCOUNT: ["MXN"],
  EUR_ACCOUNT: ["EUR"],
  SPARK_WALLET: ["BTC", "USDC"],
  LIGHTNING: ["BTC"],
};

/** The currencies an account type holds (external-account validation's table). */
export function accountCurrencies(type: AccountType): readonly string[] {
  return CURRENCIES[type];
}

/** Rails that can debit the account on our request (decisions §9: USD_ACCOUNT, by ACH pull). */
export const PULL_CAPABLE: ReadonlySet<string> = new Set(["USD_ACCOUNT"]);

/**
 * The payment rails an account can be paid by, per account type (Grid's `accountInfo.paymentRails`),
 * and what the account answers when its creator named none: ACH and WIRE reach every US account
 * (RTP and FedNow only those of participating banks); SEPA and SEPA Instant reach every euro
 * account (EU payment service providers must receive instant payments since 2025).
 */
export const PAYMENT_RAILS: Partial<Record<AccountType, { allowed: readonly string[]; fallback: readonly string[] }>> = {
  USD_ACCOUNT: { allowed: ["ACH", "WIRE", "RTP", "FEDNOW"], fallback: ["ACH", "WIRE"] },
  EUR_ACCOUNT: { allowed: ["SEPA", "SEPA_INSTANT"], fallback: ["SEPA", "SEPA_INSTANT"] },
};

/** Bank account types that may name the countries they are held in (`accountInfo.countries`). */
const BANK_ACCOUNT_TYPES: ReadonlySet<string> = new Set(["USD_ACCOUNT", "BRL_ACCOUNT", "AED_ACCOUNT", "MXN_ACCOUNT", "EUR_ACCOUNT"]);

/** The stored accountInfo as answered: with its type's default paymentRails when it names none. */
export function accountInfoForRead(info: Record<string, unknown>): Record<string, unknown> {
  const rails = PAYMENT_RAILS[info.accountType as AccountType];
  if (!rails || Array.isArray(info.paymentRails)) return info;
  return { ...info, paymentRails: [...rails.fallback] };
}

/** A list of distinct strings from `allowed` (or matching `pattern`), 1 to `max` long; undefined after reporting. */
function stringList(raw: unknown, field: string, errors: FieldError[], opts: { allowed?: readonly string[]; pattern?: RegExp; what: string; max: number }): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > opts.max) {
    errors.push({ field, reason: `must be an array of 1 to ${opts.max} ${opts.what}` });
    return undefined;
  }
  const out: string[] = [];
  for (const [i, v] of raw.entries()) {
    const ok = typeof v === "string" && (opts.allowed ? opts.allowed.includes(v) : opts.pattern!.test(v));
    if (!ok) {
      errors.push({ field: `${field}[${i}]`, reason: opts.allowed ? `must be one of ${opts.allowed.join(", ")}` : `must be ${opts.what.replace(/s$/, "")}` });
      return undefined;
    }
    if (out.includes(v)) {
      errors.push({ field: `${field}[${i}]`, reason: "is repeated" });
      return undefined;
    }
    out.push(v);
  }
  return out;
}

export interface ValidAccountInfo {
  accountType: AccountType;
  /** The info as stored and answered (known fields only, normalised). */
  info: Record<string, unknown>;
  /** The identifier whose last characters select sandbox outcomes (account number, IBAN, key, ...). */
  identifier: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

class Checker {
  readonly errors: FieldError[] = [];
  readonly out: Obj = {};
  constructor(
    private readonly src: Obj,
    private readonly prefix: string,
  ) {}

  private fail(field: string, reason: string) {
    this.errors.push({ field: `${this.prefix}.${field}`, reason });
  }

  /** A string field; `test` returns a reason when the value is bad. */
  str(field: string, opts: { required?: boolean; test?: (v: string) => string | undefined; normalise?: (v: string) => string } = {}) {
    const v = this.src[field];
    if (v === undefined || v === null) {
      if (opts.required !== false) this.fail(field, "is required");
      return undefined;
    }
    if (typeof v !== "string" || v.trim() === "") {
      this.fail(field, "must be a non-empty string");
      return undefined;
    }
    const value = opts.normalise ? opts.normalise(v) : v.trim();
    const reason = opts.test?.(value);
    if (reason) {
      this.fail(field, reason);
      return undefined;
    }
    this.out[field] = value;
    return value;
  }

  oneOf(field: string, values: readonly string[], required = true) {
    return this.str(field, { required, test: (v) => (values.includes(v) ? undefined : `must be one of ${values.join(", ")}`) });
  }

  unknownFields(known: string[]) {
    for (const k of Object.keys(this.src)) if (!known.includes(k)) this.fail(k, "is not a known field");
  }
}

const digits = (min: number, max: number) => (v: string) =>
  new RegExp(`^\\d{${min},${max}}$`).test(v) ? undefined : min === max ? `must be ${min} digits` : `must be ${min} to ${max} digits`;
const compact = (v: string) => v.replace(/\s+/g, "").toUpperCase();

const COUNTRY = (s: string) => (/^[A-Z]{2}$/.test(s) ? undefined : "must be an ISO 3166-1 alpha-2 code");
const maxLen = (n: number) => (s: string) => (s.length <= n ? undefined : `must be at most ${n} characters`);

/**
 * The beneficiary, discriminated on beneficiaryType: INDIVIDUAL (fullName required, birthDate,
 * nationality) or BUSINESS (legalName or fullName required, equal if both, registrationNumber, taxId); both may carry email,
 * phoneNumber, countryOfResidence and address. Only the fields of its variant are accepted.
 */
function checkBeneficiary(v: unknown, prefix: string, errors: FieldError[]): Obj | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) {
    errors.push({ field: prefix, reason: "must be an object" });
    return undefined;
  }
  const c = new Checker(v, prefix);
  const type = c.oneOf("beneficiaryType", ["INDIVIDUAL", "BUSINESS"]);
  const known = ["beneficiaryType", "email", "phoneNumber", "countryOfResidence", "address"];
  if (type === "BUSINESS") {
    // The name: Grid's legalName or the spec's fullName (the Beneficiary object names only fullName).
    // Either is enough; both must then say the same. Stored and answered as given.
    const legalName = c.str("legalName", { required: false, test: maxLen(255) });
    const fullName = c.str("fullName", { required: false, test: maxLen(255) });
    if (v.legalName == null && v.fullName == null) c.errors.push({ field: `${prefix}.legalName`, reason: "is required for a BUSINESS beneficiary (legalName, or the spec's fullName)" });
    else if (legalName !== undefined && fullName !== undefined && legalName !== fullName) {
      c.errors.push({ field: `${prefix}.fullName`, reason: "must equal legalName when both are given (they name the same business)" });
    }
    c.str("registrationNumber", { required: false, test: maxLen(64) });
    c.str("taxId", { required: false, test: maxLen(64) });
    known.push("legalName", "fullName", "registrationNumber", "taxId");
  } else if (type === "INDIVIDUAL") {
    c.str("fullName", { test: maxLen(255) });
    c.str("birthDate", { required: false, test: (s) => (/^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)) ? undefined : "must be a date YYYY-MM-DD") });
    c.str("nationality", { required: false, test: COUNTRY });
    known.push("fullName", "birthDate", "nationality");
  } else {
    // An unknown or missing type: no variant's field is required, but each one present is still checked.
    for (const f of ["legalName", "fullName", "registrationNumber", "taxId", "birthDate", "nationality"]) c.str(f, { required: false });
    known.push("legalName", "registrationNumber", "taxId", "fullName", "birthDate", "nationality");
  }
  c.str("email", { required: false, test: (s) => (s.length <= 255 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s) ? undefined : "must be an email address") });
  c.str("phoneNumber", { required: false, test: (s) => (/^\+[1-9]\d{6,14}$/.test(s) ? undefined : "must be in E.164 format, for example +14155550123") });
  c.str("countryOfResidence", { required: false, test: COUNTRY });
  const address = v.address;
  if (address !== undefined && address !== null) {
    if (!isObj(address)) c.errors.push({ field: `${prefix}.address`, reason: "must be an object" });
    else {
      const a = new Checker(address, `${prefix}.address`);
      a.str("line1");
      a.str("line2", { required: false });
      a.str("city", { required: false });
      a.str("state", { required: false });
      a.str("postalCode", { required: false });
      a.str("country", { test: COUNTRY });
      a.unknownFields(["line1", "line2", "city", "state", "postalCode", "country"]);
      c.errors.push(...a.errors);
      c.out.address = a.out;
    }
  }
  c.unknownFields(known);
  errors.push(...c.errors);
  return c.out;
}

/** The name a rail verifies: an individual's fullName, a business's legalName (or its fullName, the same name when both are given). */
export function beneficiaryName(beneficiary: unknown): string | undefined {
  if (!isObj(beneficiary)) return undefined;
  const name = beneficiary.beneficiaryType === "BUSINESS" ? (beneficiary.legalName ?? beneficiary.fullName) : beneficiary.fullName;
  return typeof name === "string" ? name : undefined;
}

function pixKeyReason(type: string | undefined, key: string): string | undefined {
  switch (type) {
    case "CPF":
      return isValidCpf(key) ? undefined : "is not a valid CPF (11 digits with check digits)";
    case "CNPJ":
      return isValidCnpj(key) ? undefined : "is not a valid CNPJ (14 digits with check digits)";
    case "EMAIL":
      return /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/.test(key) ? undefined : "is not an email address";
    case "PHONE":
      return /^\+55\d{10,11}$/.test(key) ? undefined : "must be a Brazilian phone number in E.164 (+55 and 10 or 11 digits)";
    case "RANDOM":
      return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(key) ? undefined : "must be a random key (UUID)";
    default:
      return undefined; // the type itself is reported
  }
}

/** Validates `accountInfo` against `currency`; answers the normalised info or every field error. */
export function validateAccountInfo(currency: string, raw: unknown): { ok: ValidAccountInfo } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (!isObj(raw)) return { errors: [{ field: "accountInfo", reason: "must be an object" }] };
  const type = raw.accountType;
  if (typeof type !== "string" || !(ACCOUNT_TYPES as readonly string[]).includes(type)) {
    return { errors: [{ field: "accountInfo.accountType", reason: `must be one of ${ACCOUNT_TYPES.join(", ")}` }] };
  }
  const accountType = type as AccountType;
  if (!CURRENCIES[accountType].includes(currency)) {
    errors.push({ field: "currency", reason: `must be ${CURRENCIES[accountType].join(" or ")} for a ${accountType}` });
  }
  const c = new Checker(raw, "accountInfo");
  c.out.accountType = accountType;
  let identifier = "";
  const known = ["accountType"];
  switch (accountType) {
    case "USD_ACCOUNT": {
      identifier = c.str("accountNumber", { test: digits(4, 17) }) ?? "";
      c.str("routingNumber", { test: (v) => (isValidRoutingNumber(v) ? undefined : "must be 9 digits with a valid ABA checksum") });
      c.oneOf("bankAccountType", ["CHECKING", "SAVINGS"], false);
      c.str("bankName", { required: false });
      known.push("accountNumber", "routingNumber", "bankAccountType", "bankName", "beneficiary");
      break;
    }
    case "BRL_ACCOUNT": {
      const keyType = c.oneOf("pixKeyType", ["CPF", "CNPJ", "EMAIL", "PHONE", "RANDOM"]);
      identifier = c.str("pixKey", { test: (v) => pixKeyReason(keyType, v) }) ?? "";
      c.str("taxId", { test: (v) => (isValidCpf(v) || isValidCnpj(v) ? undefined : "must be a valid CPF (11 digits) or CNPJ (14 digits)") });
      known.push("pixKey", "pixKeyType", "taxId", "beneficiary");
      break;
    }
    case "AED_ACCOUNT": {
      identifier = c.str("iban", { normalise: compact, test: (v) => (isValidIban(v, "AE") ? undefined : "must be a UAE IBAN (AE, 23 characters) with valid check digits") }) ?? "";
      c.str("swiftCode", { normalise: compact, test: (v) => (isValidBic(v) ? undefined : "must be a SWIFT/BIC code of 8 or 11 characters") });
      known.push("iban", "swiftCode", "bankName", "beneficiary");
      c.str("bankName", { required: false });
      break;
    }
    case "EUR_ACCOUNT": {
      identifier = c.str("iban", { normalise: compact, test: (v) => (isValidIban(v) ? undefined : "must be an IBAN with valid check digits") }) ?? "";
      c.str("swiftCode", { required: false, normalise: compact, test: (v) => (isValidBic(v) ? undefined : "must be a SWIFT/BIC code of 8 or 11 characters") });
      c.str("bankName", { required: false });
      known.push("iban", "swiftCode", "bankName", "beneficiary");
      break;
    }
    case "MXN_ACCOUNT": {
      identifier = c.str("clabe", { test: (v) => (isValidClabe(v) ? undefined : "must be an 18-digit CLABE with a valid check digit") }) ?? "";
      c.str("bankName", { required: false });
      known.push("clabe", "bankName", "beneficiary");
      break;
    }
    case "SPARK_WALLET": {
      identifier =
        c.str("address", { test: (v) => (/^(sp|sprt|spark)1[02-9ac-hj-np-z]{20,120}$/.test(v) ? undefined : "must be a Spark address (sp1… in bech32 characters)") }) ?? "";
      c.oneOf("assetType", ["BTC", "USDC"], false);
      known.push("address", "assetType");
      break;
    }
    case "LIGHTNING": {
      const invoice = c.str("invoice", { required: false, test: (v) => (/^ln(bc|tb|bcrt)[0-9a-z]{20,}$/i.test(v) ? undefined : "must be a BOLT11 invoice (lnbc…)") });
      const address = c.str("lightningAddress", { required: false, test: (v) => (/^[a-z0-9._-]{1,64}@[a-z0-9.-]+\.[a-z]{2,}$/i.test(v) ? undefined : "must be a lightning address user@domain") });
      if (raw.invoice === undefined && raw.lightningAddress === undefined) {
        c.errors.push({ field: "accountInfo.invoice", reason: "invoice or lightningAddress is required" });
      }
      identifier = address ?? invoice ?? "";
      known.push("invoice", "lightningAddress");
      break;
    }
  }
  if (BANK_ACCOUNT_TYPES.has(accountType)) {
    const countries = stringList(raw.countries, "accountInfo.countries", c.errors, { pattern: /^[A-Z]{2}$/, what: "ISO 3166-1 alpha-2 codes", max: 50 });
    if (countries) c.out.countries = countries;
    known.push("countries");
  }
  const rails = PAYMENT_RAILS[accountType];
  if (rails) {
    const paymentRails = stringList(raw.paymentRails, "accountInfo.paymentRails", c.errors, { allowed: rails.allowed, what: "payment rails", max: rails.allowed.length });
    if (paymentRails) c.out.paymentRails = paymentRails;
    known.push("paymentRails");
  }
  if (known.includes("beneficiary")) {
    const b = checkBeneficiary(raw.beneficiary, "accountInfo.beneficiary", c.errors);
    if (b) c.out.beneficiary = b;
  }
  c.unknownFields(known);
  errors.push(...c.errors);
  if (errors.length > 0) return { errors };
  return { ok: { accountType, info: c.out, identifier } };
}

/**
 * The characters sandbox magic values look at: the last three of the identifier, and for an
 * identifier with a domain part (a PIX email key, a lightning address) of the part before it.
 */
export function sandboxSuffix(identifier: string): string {
  const at = identifier.lastIndexOf("@");
  const local = at >= 0 ? identifier.slice(0, at) : identifier;
  return local.slice(-3);
}
