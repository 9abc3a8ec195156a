import { createHash, randomInt, timingSafeEqual } from "node:crypto";
import { AppError, errors, type Clock } from "@corridor/kit";
import { customerDeleted } from "./customers.js";
import type { Customer } from "./types.js";

/**
 * Contact verification (Grid's POST /customers/{id}/verify-email|verify-phone and /confirm): a
 * six-digit code is drawn, stored only as a SHA-256, delivered like EMAIL_OTP codes (auth-sessions'
 * mailer: SMTP; never written to any log), and confirmed within 5 minutes and 5 wrong guesses. The
 * guesses are counted under a row lock, so concurrent wrong guesses can never exceed the limit.
 * Sandbox platforms also accept Grid's sandbox code 123456 (as SCA challenges do; EMAIL_OTP's
 * credential verify keeps the spec's 000000), under the same attempt limit and only after a send. A channel is verified while the contact on file equals the
 * one confirmed: a changed email is PENDING again.
 */

export const CONTACT_CHANNELS = ["EMAIL", "PHONE"] as const;
export type ContactChannel = (typeof CONTACT_CHANNELS)[number];

/**
 * A code lives 5 minutes and takes 5 wrong guesses. A new code may be sent 30 seconds after the
 * last; while the last is still live, the new one inherits its wrong guesses, and once they are
 * used up no new code is sent until the last one has expired. So resending cannot buy guesses: at
 * most 5 wrong ones per 5 minutes per contact (where resetting on each send gave 5 per 30 s).
 */
export const CONTACT_LIMITS = { codeMs: 5 * 60_000, attempts: 5, resendMs: 30_000 } as const;
/** Grid's sandbox code for its verification routes (docs/sca.md uses the same for SCA). */
export const SANDBOX_CONTACT_CODE = "123456";

export interface StoredContactCode {
  platformId: string;
  customerId: string;
  channel: ContactChannel;
  sentTo: string;
  codeSha256: string;
  attempts: number;
  createdAt: Date;
  expiresAt: Date;
}

/** Storage of contact verification, bound to one database transaction. */
export interface ContactStore {
  /** The customer; with `forUpdate`, locked until the transaction ends. */
  customer(platformId: string, customerId: string, opts?: { forUpdate?: boolean }): Promise<Customer | undefined>;
  /** The outstanding code of the channel, locked until the transaction ends. */
  lockCode(platformId: string, customerId: string, channel: ContactChannel): Promise<StoredContactCode | undefined>;
  /** Replaces any earlier code of the channel. */
  putCode(code: StoredContactCode): Promise<void>;
  setAttempts(platformId: string, customerId: string, channel: ContactChannel, attempts: number): Promise<void>;
  removeCode(platformId: string, customerId: string, channel: ContactChannel): Promise<void>;
  /** Records the address confirmed and bumps updatedAt. */
  markVerified(platformId: string, customerId: string, channel: ContactChannel, value: string, at: Date): Promise<void>;
}

export type ContactTransact = <T>(work: (store: ContactStore) => Promise<T>) => Promise<T>;

/**
 * Delivers a code (auth-sessions: SMTP for EMAIL; no SMS gateway ships). Answers false when nothing
 * was sent (a sandbox platform on a deployment without one: the magic code confirms); a production
 * platform without a way to deliver gets 400 *_DELIVERY_NOT_CONFIGURED from it. Never logs the code.
 */
export interface ContactCodeSender {
  send(input: { platformId: string; customerId: string; channel: ContactChannel; to: string; code: string }): Promise<boolean>;
}

export interface ContactVerificationDeps {
  transact: ContactTransact;
  clock: Clock;
  /** The platform's time (its sandbox clock for a sandbox platform): codes expire by it. */
  platformNow: (platformId: string) => Promise<Date>;
  environment: (platformId: string) => Promise<"SANDBOX" | "PRODUCTION">;
  sender: ContactCodeSender;
  /** Tests fix the code; default: six digits from the CSPRNG. */
  newCode?: () => string;
}

export function hashContactCode(customerId: string, channel: ContactChannel, code: string): string {
  return createHash("sha256").update(`${customerId}:${channel}:${code}`, "utf8").digest("hex");
}

function codeMatches(stored: StoredContactCode, code: string): boolean {
  const presented = Buffer.from(hashContactCode(stored.customerId, stored.channel, code), "hex");
  const expected = Buffer.from(stored.codeSha256, "hex");
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** The contact on file for a channel ("" when none: customers carry an email, no phone number). */
export function contactOf(c: Customer, channel: ContactChannel): string {
  return channel === "EMAIL" ? c.email : "";
}

function verifiedValueOf(c: Customer, channel: ContactChannel): string | null {
  return channel === "EMAIL" ? (c.verifiedEmail ?? null) : null;
}

/** Grid's contactVerification: each channel with a contact on file, PENDING or VERIFIED; undefined when none. */
export function contactVerificationOf(c: Customer): { email?: "PENDING" | "VERIFIED"; phone?: "PENDING" | "VERIFIED" } | undefined {
  const out: { email?: "PENDING" | "VERIFIED"; phone?: "PENDING" | "VERIFIED" } = {};
  for (const channel of CONTACT_CHANNELS) {
    const contact = contactOf(c, channel);
    if (!contact) continue;
    out[channel === "EMAIL" ? "email" : "phone"] = verifiedValueOf(c, channel) === contact ? "VERIFIED" : "PENDING";
  }
  return Object.keys(out).length ? out : undefined;
}

const channelName = (channel: ContactChannel) => (channel === "EMAIL" ? "email" : "phone");

function parseChannel(channel: string): ContactChannel {
  if ((CONTACT_CHANNELS as readonly string[]).includes(channel)) return channel as ContactChannel;
  throw errors.invalidInput([{ field: "channel", reason: "must be EMAIL or PHONE" }]);
}

/** The checks both calls share: the customer exists, is live, has the contact and it is not verified yet. */
function requireVerifiable(c: Customer | undefined, customerId: string, channel: ContactChannel): string {
  if (!c) throw errors.notFound("Customer", customerId);
  if (c.deletedAt) throw customerDeleted(customerId);
  const contact = contactOf(c, channel);
  if (!contact) {
    throw errors.conflict(
      "CONTACT_VERIFICATION_NOT_REQUIRED",
      channel === "EMAIL" ? "The customer has no email address on file: there is nothing to verify" : "Customers carry no phone number: there is no phone to verify",
      { channel },
    );
  }
  if (verifiedValueOf(c, channel) === contact) {
    throw errors.conflict("CONTACT_ALREADY_VERIFIED", `The customer's ${channelName(channel)} is already verified`, { channel });
  }
  return contact;
}

export function createContactVerification(deps: ContactVerificationDeps) {
  const newCode = deps.newCode ?? (() => String(randomInt(0, 1_000_000)).padStart(6, "0"));
  return {
    /** Sends (or re-sends) a code; a new send replaces the outstanding one, and inherits its wrong guesses while it is live (CONTACT_LIMITS). */
    async send(platformId: string, customerId: string, channelInput: string): Promise<void> {
      const channel = parseChannel(channelInput);
      const now = await deps.platformNow(platformId);
      const code = newCode();
      const codeSha256 = hashContactCode(customerId, channel, code);
      // Stored and committed first, delivered after: the delivery is an RPC to auth-sessions (and
      // SMTP behind it), which must never run while this transaction holds the customer's row (in
      // embedded mode, on PGlite's one session, auth-sessions' own query would wait on it for good).
      const to = await deps.transact(async (store) => {
        const address = requireVerifiable(await store.customer(platformId, customerId, { forUpdate: true }), customerId, channel);
        const prior = await store.lockCode(platformId, customerId, channel);
        const live = prior && prior.sentTo === address && now.getTime() < prior.expiresAt.getTime() ? prior : undefined;
        if (live) {
          const waitUntil =
            live.attempts >= CONTACT_LIMITS.attempts ? live.expiresAt.getTime() : Math.min(live.expiresAt.getTime(), live.createdAt.getTime() + CONTACT_LIMITS.resendMs);
          const retryAfterSeconds = Math.ceil((waitUntil - now.getTime()) / 1000);
          if (retryAfterSeconds > 0) {
            const why =
              live.attempts >= CONTACT_LIMITS.attempts
                ? `The code sent last took ${CONTACT_LIMITS.attempts} wrong guesses; a new one can be sent once it expires`
                : `One code per ${channelName(channel)} every ${CONTACT_LIMITS.resendMs / 1000} seconds`;
            throw new AppError("RATE_LIMITED", "RATE_LIMITED", `${why}; retry in ${retryAfterSeconds} s`, { channel, retryAfterSeconds });
          }
        }
        await store.putCode({
          platformId,
          customerId,
          channel,
          sentTo: address,
          codeSha256,
          attempts: live?.attempts ?? 0,
          createdAt: now,
          expiresAt: new Date(now.getTime() + CONTACT_LIMITS.codeMs),
        });
        return address;
      });
      try {
        await deps.sender.send({ platformId, customerId, channel, to, code });
      } catch (err) {
        // A code that could not be delivered leaves nothing behind (unless a newer send replaced it).
        await deps.transact(async (store) => {
          if ((await store.lockCode(platformId, customerId, channel))?.codeSha256 === codeSha256) await store.removeCode(platformId, customerId, channel);
        });
        throw err;
      }
    },

    /** Confirms a code; answers the customer (now VERIFIED on that channel). */
    async confirm(platformId: string, customerId: string, channelInput: string, code: string): Promise<Customer> {
      const channel = parseChannel(channelInput);
      if (!/^[0-9]{6}$/.test(code)) throw errors.invalidInput([{ field: "body.code", reason: "must be the 6-digit code that was sent" }]);
      const sandbox = (await deps.environment(platformId)) === "SANDBOX";
      const now = await deps.platformNow(platformId);
      const outcome = await deps.transact(async (store): Promise<{ failed: AppError } | { customer: Customer }> => {
        const to = requireVerifiable(await store.customer(platformId, customerId), customerId, channel);
        // The row lock serializes concurrent guesses: each sees the count the previous one left.
        const stored = await store.lockCode(platformId, customerId, channel);
        if (!stored || stored.sentTo !== to) {
          return { failed: errors.badRequest("VERIFICATION_CODE_NOT_SENT", `No code is outstanding for this ${channelName(channel)}; send one with verify-${channelName(channel)}`, { channel }) };
        }
        if (now.getTime() >= stored.expiresAt.getTime()) {
          return { failed: errors.badRequest("VERIFICATION_CODE_EXPIRED", "The code has expired; send a new one", { channel }) };
        }
        if (stored.attempts >= CONTACT_LIMITS.attempts) {
          return { failed: errors.badRequest("VERIFICATION_ATTEMPTS_EXCEEDED", `Too many wrong codes (${CONTACT_LIMITS.attempts}); a new code can be sent once this one expires (${stored.expiresAt.toISOString()})`, { channel, attempts: stored.attempts }) };
        }
        const magic = sandbox && code === SANDBOX_CONTACT_CODE;
        if (!magic && !codeMatches(stored, code)) {
          // Counted in a transaction that commits; the refusal is answered after it.
          await store.setAttempts(platformId, customerId, channel, stored.attempts + 1);
          return {
            failed: errors.badRequest("INVALID_VERIFICATION_CODE", "The code does not match", { channel, attemptsLeft: CONTACT_LIMITS.attempts - stored.attempts - 1 }),
          };
        }
        await store.removeCode(platformId, customerId, channel);
        await store.markVerified(platformId, customerId, channel, to, deps.clock.now());
        return { customer: (await store.customer(platformId, customerId))! };
      });
      if ("failed" in outcome) throw outcome.failed;
      return outcome.customer;
    },
  };
}

export type ContactVerification = ReturnType<typeof createContactVerification>;
