import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Time-based one-time passwords as authenticator apps compute them (RFC 6238 over RFC 4226):
 * HMAC-SHA-1 of the 30-second step counter, dynamically truncated to six digits.
 */
export const TOTP = { stepSeconds: 30, digits: 6, secretBytes: 20, /** Steps either side of now a code may come from (clock skew). */ window: 1 } as const;

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

export function base32Encode(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** Undefined for anything that is not unpadded (or `=`-padded) RFC 4648 Base32. */
export function base32Decode(text: string): Uint8Array | undefined {
  const s = text.toUpperCase().replace(/=+$/, "");
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of s) {
    const i = ALPHABET.indexOf(ch);
    if (i < 0) return undefined;
    value = ((value << 5) | i) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}

export const newTotpSecret = (): Uint8Array => new Uint8Array(randomBytes(TOTP.secretBytes));

export function totpAt(secret: Uint8Array, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac("sha1", secret).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const n = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** TOTP.digits;
  return n.toString().padStart(TOTP.digits, "0");
}

export const stepOf = (at: Date): number => Math.floor(at.getTime() / 1000 / TOTP.stepSeconds);

/** The step within the window whose code `code` is and which is after `lastStep` (a code is good once). */
export function matchingStep(secret: Uint8Array, code: string, now: Date, lastStep: number): number | undefined {
  const current = stepOf(now);
  for (let step = current - TOTP.window; step <= current + TOTP.window; step++) {
    if (step <= lastStep) continue;
    if (timingSafeEqual(Buffer.from(totpAt(secret, step)), Buffer.from(code.padEnd(TOTP.digits).slice(0, TOTP.digits)))) return step;
  }
  return undefined;
}

/** Recovery codes: XXXX-XXXX-XXXX from the Base32 alphabet (60 bits each), shown once, stored hashed. */
export function newRecoveryCodes(count = 8): string[] {
  return Array.from({ length: count }, () => {
    const s = base32Encode(new Uint8Array(randomBytes(8))).slice(0, 12);
    return `${s.slice(0, 4)}-${s.slice(4, 8)}-${s.slice(8, 12)}`;
  });
}

export const hashRecoveryCode = (customerId: string, code: string): string => createHash("sha256").update(`${customerId}:${code.toUpperCase()}`).digest("hex");
