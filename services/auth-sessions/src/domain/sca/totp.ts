import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { HOTP, Secret } from "otpauth";

/**
 * Time-based one-time passwords as authenticator apps compute them (RFC 6238 over RFC 4226):
 * HMAC-SHA-1 of the 30-second step counter, dynamically truncated to six digits. The codes and
 * the Base32 secrets come from the otpauth library; this module keeps only the policy (window,
 * a code good once, recovery codes).
 */
export const TOTP = { stepSeconds: 30, digits: 6, secretBytes: 20, /** Steps either side of now a code may come from (clock skew). */ window: 1 } as const;

/** RFC 4648 Base32 of a secret, as authenticator apps take it (the otpauth library's encoding). */
export function base32Encode(bytes: Uint8Array): string {
  return new Secret({ buffer: Uint8Array.from(bytes).buffer }).base32;
}

/** Undefined for anything that is not unpadded (or `=`-padded) RFC 4648 Base32. */
export function base32Decode(text: string): Uint8Array | undefined {
  const s = text.toUpperCase().replace(/=+$/, "");
  if (!/^[A-Z2-7]*$/.test(s)) return undefined;
  try {
    return Secret.fromBase32(s).bytes;
  } catch {
    return undefined;
  }
}

export const newTotpSecret = (): Uint8Array => new Secret({ size: TOTP.secretBytes }).bytes;

/** The code of one 30-second step: HOTP (RFC 4226) of the step counter, computed by the otpauth library. */
export function totpAt(secret: Uint8Array, step: number): string {
  return HOTP.generate({ secret: new Secret({ buffer: Uint8Array.from(secret).buffer }), algorithm: "SHA1", digits: TOTP.digits, counter: step });
}

export const stepOf = (at: Date): number => Math.floor(at.getTime() / 1000 / TOTP.stepSeconds);

/** The step within the window whose code `code` is and which is after `lastStep` (a code is good once). */
export function matchingStep(secret: Uint8Array, code: string, now: Date, lastStep: number): number | undefined {
  const current = stepOf(now);
  const presented = Buffer.from(code.padEnd(TOTP.digits).slice(0, TOTP.digits));
  for (let step = current - TOTP.window; step <= current + TOTP.window; step++) {
    if (step <= lastStep) continue;
    if (timingSafeEqual(Buffer.from(totpAt(secret, step)), presented)) return step;
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
