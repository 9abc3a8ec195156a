import type { FieldError } from "@corridor/kit";
import { isCountryCode } from "./countries.js";
import { ID_TYPES, KYC_STATUSES, OWNER_ROLES, type Address, type PersonalInfo } from "./types.js";

/**
 * Field checks shared by the use cases. Field names carry no location (`region`,
 * `address.country`): the gateway adds `body.` since every such value comes from a body.
 */

const UMA_ADDRESS = /^\$[a-z0-9._+-]{1,64}@[a-z0-9-]+(\.[a-z0-9-]+)+$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;
const E164 = /^\+[1-9][0-9]{1,14}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export class Problems {
  readonly list: FieldError[] = [];
  add(field: string, reason: string): void {
    this.list.push({ field, reason });
  }
  get empty(): boolean {
    return this.list.length === 0;
  }
}

export function isUmaAddress(value: string): boolean {
  return UMA_ADDRESS.test(value);
}

/** UMA addresses compare case-insensitively; they are stored lower-case. */
export function normalizeUma(value: string): string {
  return value.trim().toLowerCase();
}

/** A real calendar date (YYYY-MM-DD), not after `today` and not before 1900. */
export function datePastProblem(value: string, today: Date): string | undefined {
  const m = DATE.exec(value);
  if (!m) return "must be a date as YYYY-MM-DD";
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return "is not a calendar date";
  if (y < 1900) return "must not be before 1900";
  if (value > today.toISOString().slice(0, 10)) return "must not be in the future";
  return undefined;
}

export function checkCountry(p: Problems, field: string, value: string | undefined): void {
  if (value !== undefined && value !== "" && !isCountryCode(value)) p.add(field, "must be an ISO 3166-1 alpha-2 country code");
}

export function checkText(p: Problems, field: string, value: string | undefined, opts: { required?: boolean; max?: number } = {}): void {
  if (value === undefined || value.trim() === "") {
    if (opts.required) p.add(field, "is required");
    return;
  }
  if (value.length > (opts.max ?? 255)) p.add(field, `must be at most ${opts.max ?? 255} characters`);
}

export function checkEmail(p: Problems, field: string, value: string | undefined): void {
  if (value !== undefined && value !== "" && !EMAIL.test(value)) p.add(field, "must be an email address");
}

export function checkDate(p: Problems, field: string, value: string | undefined, today: Date): void {
  if (value === undefined || value === "") return;
  const reason = datePastProblem(value, today);
  if (reason) p.add(field, reason);
}

export function checkAddress(p: Problems, field: string, a: Partial<Address> | undefined): void {
  if (a === undefined) return;
  checkText(p, `${field}.line1`, a.line1, { required: true });
  checkText(p, `${field}.line2`, a.line2);
  checkText(p, `${field}.city`, a.city);
  checkText(p, `${field}.state`, a.state);
  checkText(p, `${field}.postalCode`, a.postalCode, { required: true, max: 32 });
  if (!a.country) p.add(`${field}.country`, "is required");
  else checkCountry(p, `${field}.country`, a.country);
}

export function checkKycStatus(p: Problems, field: string, value: string | undefined): void {
  if (value !== undefined && !(KYC_STATUSES as readonly string[]).includes(value)) p.add(field, `must be one of ${KYC_STATUSES.join(", ")}`);
}

export function checkRoles(p: Problems, field: string, roles: string[]): void {
  if (roles.length === 0) p.add(field, "must name at least one role");
  roles.forEach((r, i) => {
    if (!(OWNER_ROLES as readonly string[]).includes(r)) p.add(`${field}[${i}]`, `must be one of ${OWNER_ROLES.join(", ")}`);
  });
  if (new Set(roles).size !== roles.length) p.add(field, "must not repeat a role");
}

export function checkPercentage(p: Problems, field: string, value: number): void {
  if (!Number.isFinite(value) || value < 0 || value > 100) p.add(field, "must be a number from 0 to 100");
}

/** Every required field of a beneficial owner's personal info, as a whole (create) or merged (patch). */
export function checkPersonalInfo(p: Problems, field: string, info: Partial<PersonalInfo>, today: Date): void {
  checkText(p, `${field}.firstName`, info.firstName, { required: true });
  checkText(p, `${field}.lastName`, info.lastName, { required: true });
  checkText(p, `${field}.middleName`, info.middleName);
  if (!info.birthDate) p.add(`${field}.birthDate`, "is required");
  else checkDate(p, `${field}.birthDate`, info.birthDate, today);
  if (!info.nationality) p.add(`${field}.nationality`, "is required");
  else checkCountry(p, `${field}.nationality`, info.nationality);
  if (!info.address) p.add(`${field}.address`, "is required");
  else checkAddress(p, `${field}.address`, info.address);
  if (!info.idType) p.add(`${field}.idType`, "is required");
  else if (!(ID_TYPES as readonly string[]).includes(info.idType)) p.add(`${field}.idType`, `must be one of ${ID_TYPES.join(", ")}`);
  checkText(p, `${field}.identifier`, info.identifier, { required: true, max: 64 });
  checkEmail(p, `${field}.email`, info.email);
  if (info.phoneNumber && !E164.test(info.phoneNumber)) p.add(`${field}.phoneNumber`, "must be an E.164 phone number, for example +14155550100");
  checkCountry(p, `${field}.countryOfIssuance`, info.countryOfIssuance);
}
