import { isValid as cnpjCheckDigitsValid } from "@fnando/cnpj";
import { isValid as cpfCheckDigitsValid } from "@fnando/cpf";
import { clabe } from "clabe-validator";

/**
 * Check-digit algorithms of bank identifiers. Pure functions of the digits: the CLABE, CPF and CNPJ
 * check digits come from libraries; each function first fixes the shape it accepts (the libraries
 * also take formatted or alphanumeric input that accountInfo does not).
 *
 * The ABA routing number and IBAN checks stay written here. The ABA libraries are unmaintained
 * (abavalidator: last release 2021) or add rules of their own (refusing 000000000, or routing
 * numbers outside some prefix ranges). IBAN libraries (ibantools, iban) check each country's BBAN
 * format and length from their registry, which refuses IBANs accountInfo accepts today (and
 * ibantools does not export its mod-97 check alone); the mod-97 rule is ISO 13616's, a few lines.
 * SWIFT/BIC has no check digit: its format is one pattern.
 */

/** ABA routing number: 9 digits, 3-7-1 weighted sum divisible by 10. */
export function isValidRoutingNumber(s: string): boolean {
  if (!/^\d{9}$/.test(s)) return false;
  const d = [...s].map(Number);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0;
}

/** IBAN: country code, 2 check digits, BBAN; mod 97 of the rearranged number is 1. */
export function isValidIban(raw: string, country?: string): boolean {
  const s = raw.replace(/\s+/g, "").toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(s)) return false;
  if (country && !s.startsWith(country)) return false;
  if (country === "AE" && s.length !== 23) return false;
  const rearranged = s.slice(4) + s.slice(0, 4);
  let rem = 0;
  for (const ch of rearranged) {
    const v = ch >= "A" && ch <= "Z" ? String(ch.charCodeAt(0) - 55) : ch;
    for (const digit of v) rem = (rem * 10 + Number(digit)) % 97;
  }
  return rem === 1;
}

/** CLABE (Mexico): 18 digits, the last one its check digit (weights 3, 7, 1). */
export function isValidClabe(s: string): boolean {
  return /^\d{18}$/.test(s) && clabe.computeChecksum(s) === Number(s[17]);
}

/** CPF (Brazil, individuals): 11 digits, two mod-11 check digits, not all equal. */
export function isValidCpf(s: string): boolean {
  return /^\d{11}$/.test(s) && cpfCheckDigitsValid(s, true);
}

/** CNPJ (Brazil, companies): 14 digits, two mod-11 check digits, not all equal. */
export function isValidCnpj(s: string): boolean {
  return /^\d{14}$/.test(s) && cnpjCheckDigitsValid(s, true);
}

/** SWIFT/BIC: 4 bank letters, 2 country letters, 2 location characters, optional 3-character branch. */
export function isValidBic(s: string, country?: string): boolean {
  if (!/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(s)) return false;
  return !country || s.slice(4, 6) === country;
}
