/** IBAN with valid check digits (ISO 13616, mod 97) for a country and BBAN: test data for EUR payees. */
export function iban(country: string, bban: string): string {
  const numeric = (s: string) => [...s].map((ch) => (/[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch)).join("");
  const rem = (s: string) => [...s].reduce((r, d) => (r * 10 + Number(d)) % 97, 0);
  const check = 98 - rem(numeric(`${bban}${country}00`));
  return `${country}${String(check).padStart(2, "0")}${bban}`;
}
