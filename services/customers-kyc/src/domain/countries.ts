import countries from "i18n-iso-countries/index.js";

/**
 * ISO 3166-1 alpha-2 codes officially assigned (249), from i18n-iso-countries. Its list also holds
 * XK (Kosovo), a user-assigned code outside the standard, which stays refused as before. A pattern
 * alone would accept XX or ZZ.
 */
export const ISO_COUNTRIES: ReadonlySet<string> = new Set(Object.keys(countries.getAlpha2Codes()).filter((code) => code !== "XK"));

export function isCountryCode(value: string): boolean {
  return ISO_COUNTRIES.has(value);
}
