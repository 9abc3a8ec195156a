/** Check-digit algorithms of bank identifiers. Pure functions of the digits. */

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

/** CLABE (Mexico): 18 digits, last is (10 - sum(d_i * w_i mod 10) mod 10) mod 10 with weights 3,7,1. */
export function isValidClabe(s: string): boolean {
  if (!/^\d{18}$/.test(s)) return false;
  const w = [3, 7, 1];
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += (Number(s[i]) * w[i % 3]!) % 10;
  return (10 - (sum % 10)) % 10 === Number(s[17]);
}

/** CPF (Brazil, individuals): 11 digits, two mod-11 check digits, not all equal. */
export function isValidCpf(s: string): boolean {
  if (!/^\d{11}$/.test(s) || /^(\d)\1{10}$/.test(s)) return false;
  const d = [...s].map(Number);
  const check = (n: number) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += d[i]! * (n + 1 - i);
    const r = (sum * 10) % 11;
    return r === 10 ? 0 : r;
  };
  return check(9) === d[9] && check(10) === d[10];
}

/** CNPJ (Brazil, companies): 14 digits, two mod-11 check digits. */
export function isValidCnpj(s: string): boolean {
  if (!/^\d{14}$/.test(s) || /^(\d)\1{13}$/.test(s)) return false;
  const d = [...s].map(Number);
  const check = (n: number) => {
    const weights = n === 12 ? [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] : [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
    let sum = 0;
    for (let i = 0; i < n; i++) sum += d[i]! * weights[i]!;
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  return check(12) === d[12] && check(13) === d[13];
}

/** SWIFT/BIC: 4 bank letters, 2 country letters, 2 location characters, optional 3-character branch. */
export function isValidBic(s: string, country?: string): boolean {
  if (!/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(s)) return false;
  return !country || s.slice(4, 6) === country;
}
