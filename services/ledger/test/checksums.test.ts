import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isValidClabe, isValidCnpj, isValidCpf } from "../src/domain/checksums.js";

// The hand-written check-digit functions these replaced: accountInfo must accept exactly what it
// accepted before.
function formerClabe(s: string): boolean {
  if (!/^\d{18}$/.test(s)) return false;
  const w = [3, 7, 1];
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += (Number(s[i]) * w[i % 3]!) % 10;
  return (10 - (sum % 10)) % 10 === Number(s[17]);
}

function formerCpf(s: string): boolean {
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

function formerCnpj(s: string): boolean {
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

/** Digit strings of about `n` characters, with their last one or two digits made right half the time. */
const digits = (n: number, fix: (s: string) => string) =>
  fc.tuple(fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: n - 1, maxLength: n + 1 }), fc.boolean()).map(([s, f]) => (f && s.length === n ? fix(s) : s));
const other = fc.oneof(fc.string(), fc.constantFrom("", " 002010077777777771", "529.982.247-25", "11.222.333/0001-81", "1122233300018A", "11111111111", "00000000000000", "１２３"));

const withCheckDigits = (valid: (s: string) => boolean, checkDigits: number) => (s: string) => {
  // The first candidate ending that the former function accepts, if any.
  const head = s.slice(0, s.length - checkDigits);
  for (let i = 0; i < 10 ** checkDigits; i++) {
    const candidate = head + String(i).padStart(checkDigits, "0");
    if (valid(candidate)) return candidate;
  }
  return s;
};

describe("check digits from libraries accept exactly what the former functions accepted", () => {
  const runs = { seed: 21, numRuns: 3000 };
  it("CLABE", () => {
    fc.assert(fc.property(fc.oneof(digits(18, withCheckDigits(formerClabe, 1)), other), (s) => {
      expect(isValidClabe(s)).toBe(formerClabe(s));
    }), runs);
  });
  it("CPF", () => {
    fc.assert(fc.property(fc.oneof(digits(11, withCheckDigits(formerCpf, 2)), other), (s) => {
      expect(isValidCpf(s)).toBe(formerCpf(s));
    }), runs);
  });
  it("CNPJ", () => {
    fc.assert(fc.property(fc.oneof(digits(14, withCheckDigits(formerCnpj, 2)), other), (s) => {
      expect(isValidCnpj(s)).toBe(formerCnpj(s));
    }), runs);
  });
  it("finds valid identifiers among the generated ones (the comparison is not only of refusals)", () => {
    const sample = fc.sample(digits(11, withCheckDigits(formerCpf, 2)), { seed: 21, numRuns: 200 });
    expect(sample.filter(isValidCpf).length).toBeGreaterThan(20);
  });
});
