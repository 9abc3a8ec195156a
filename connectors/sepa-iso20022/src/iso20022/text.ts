import { Iso20022Error } from "./errors.js";

/**
 * The characters every SEPA bank takes in free text (the EPC's basic Latin set): letters, digits,
 * space and / - ? : ( ) . , ' +. Names and remittance text are reduced to it: accents dropped
 * (é → e), ß → ss, anything else becomes a space; runs of spaces collapse. A bank that meets a
 * character outside the set rejects the whole file, so this is applied to every free-text field.
 */
export function sepaText(value: string, maxLength: number): string {
  const folded = value
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .replace(/ß/g, "ss")
    .replace(/[Ææ]/g, (c) => (c === "Æ" ? "AE" : "ae"))
    .replace(/[Øø]/g, (c) => (c === "Ø" ? "O" : "o"))
    .replace(/[^A-Za-z0-9/\-?:().,'+ ]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return folded.slice(0, maxLength).trim();
}

/**
 * An identifier (message, payment-information, end-to-end id): 1 to 35 characters of the SEPA set
 * without spaces, and never starting or containing "//" or starting with "/" (EPC rule). Refused,
 * not rewritten: an identifier the bank echoes back must be the one we stored.
 */
export function sepaId(value: string, what: string): string {
  if (!/^[A-Za-z0-9/\-?:().,'+]{1,35}$/.test(value) || value.startsWith("/") || value.endsWith("/") || value.includes("//")) {
    throw new Iso20022Error(`${what} ${JSON.stringify(value)} is not a SEPA identifier (1-35 characters of A-Z a-z 0-9 / - ? : ( ) . , ' +, no leading, trailing or double '/')`);
  }
  return value;
}
