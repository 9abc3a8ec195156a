import { randomBytes } from "node:crypto";
import { AppError, MAX_AMOUNT, errors, type Clock, type PlatformTime } from "@corridor/kit";
import { changeTime } from "./customers.js";
import type { Transact } from "./ports.js";
import type { Invitation, InvitationStatus, InvitationView } from "./types.js";

export type { InvitationView } from "./types.js";
import { Problems, isUmaAddress, normalizeUma } from "./validation.js";

export interface InvitationsDeps {
  transact: Transact;
  /** Stamps records (createdAt, updatedAt, claimedAt). */
  clock: Clock;
  /** What an invitation expires by: a sandbox platform's sandbox clock, else the service clock. */
  time: PlatformTime;
  /** Links are this prefix followed by the code. */
  baseUrl: string;
  /** Random, URL-safe codes; tests may fix them. */
  newCode?: () => string;
}

export interface NewInvitation {
  inviterUma: string;
  firstName?: string;
  amountToSend?: bigint;
  amountCurrency?: string;
  expiresAt?: Date;
}

/** 16 characters of base64url: 96 random bits, unguessable and safe in a URL path. */
export const randomCode = () => randomBytes(12).toString("base64url");

export function effectiveStatus(i: Invitation, now: Date): InvitationStatus {
  if (i.status === "PENDING" && i.expiresAt && i.expiresAt.getTime() <= now.getTime()) return "EXPIRED";
  return i.status;
}

/** Acting on an invitation that is no longer PENDING is a bad request (400), as on Grid. */
function notPending(i: Invitation, status: InvitationStatus): AppError {
  const code = status === "CLAIMED" ? "INVITATION_ALREADY_CLAIMED" : status === "EXPIRED" ? "INVITATION_EXPIRED" : "INVITATION_CANCELLED";
  return errors.badRequest(code, `Invitation ${i.code} is ${status}, not PENDING`, { code: i.code, status });
}

/**
 * UMA invitations: PENDING → CLAIMED | CANCELLED, and EXPIRED once past expiresAt (derived when
 * read or claimed, so no sweeper is needed). Claiming emits INVITATION_CLAIMED to the platform.
 */
export function createInvitations({ transact, clock, time, baseUrl, newCode = randomCode }: InvitationsDeps) {
  const view = (i: Invitation, now: Date): InvitationView => ({ ...i, status: effectiveStatus(i, now), url: `${baseUrl}${i.code}` });

  return {
    async create(platformId: string, input: NewInvitation): Promise<InvitationView> {
      // expiresAt is on the platform's time (its sandbox clock in the sandbox), like every expiry it sees.
      const platformNow = await time.now(platformId);
      const now = clock.now();
      const p = new Problems();
      const inviterUma = normalizeUma(input.inviterUma);
      if (!isUmaAddress(inviterUma)) p.add("inviterUma", "must be an UMA address like $alice@example.com");
      if (input.firstName !== undefined && input.firstName.length > 255) p.add("firstName", "must be at most 255 characters");
      if (input.amountToSend !== undefined && (input.amountToSend < 1n || input.amountToSend > MAX_AMOUNT)) {
        p.add("amountToSend", `must be an integer from 1 to ${MAX_AMOUNT}`);
      }
      if (input.expiresAt && input.expiresAt.getTime() <= platformNow.getTime()) p.add("expiresAt", "must be in the future");
      if (!p.empty) throw errors.invalidInput(p.list);
      return transact(async (store) => {
        const inviter = await store.customers.findLiveByUma(platformId, inviterUma);
        if (!inviter) throw errors.invalidInput([{ field: "inviterUma", reason: "is not the UMA address of a customer of this platform" }]);
        let currency = "";
        if (input.amountToSend !== undefined) {
          currency = input.amountCurrency || inviter.currencies[0] || "";
          if (!inviter.currencies.includes(currency)) {
            throw errors.invalidInput([{ field: input.amountCurrency ? "currency" : "amountToSend", reason: `the inviter has no ${currency || "enabled"} currency` }]);
          }
        }
        const base = {
          platformId,
          inviterCustomerId: inviter.id,
          inviterUma,
          status: "PENDING" as const,
          firstName: input.firstName ?? "",
          amountToSend: input.amountToSend ?? null,
          amountCurrency: currency,
          inviteeUma: "",
          expiresAt: input.expiresAt ?? null,
          claimedAt: null,
          createdAt: now,
          updatedAt: now,
        };
        for (let attempt = 0; attempt < 5; attempt++) {
          const invitation: Invitation = { ...base, code: newCode() };
          if (await store.invitations.insert(invitation)) {
            const shown = view(invitation, platformNow);
            await store.events.invitationChanged(shown, now);
            return shown;
          }
        }
        throw new Error("could not draw an unused invitation code");
      });
    },

    async get(platformId: string, code: string): Promise<InvitationView> {
      const platformNow = await time.now(platformId);
      return transact(async (store) => {
        const i = await store.invitations.get(platformId, code);
        if (!i) throw errors.notFound("Invitation", code);
        return view(i, platformNow);
      });
    },

    async claim(platformId: string, code: string, inviteeUmaRaw: string): Promise<InvitationView> {
      const inviteeUma = normalizeUma(inviteeUmaRaw);
      if (!isUmaAddress(inviteeUma)) throw errors.invalidInput([{ field: "inviteeUma", reason: "must be an UMA address like $bob@example.com" }]);
      const platformNow = await time.now(platformId);
      return transact(async (store) => {
        const i = await store.invitations.get(platformId, code, { forUpdate: true });
        if (!i) throw errors.notFound("Invitation", code);
        const status = effectiveStatus(i, platformNow);
        if (status !== "PENDING") throw notPending(i, status);
        const now = changeTime(clock, i.updatedAt);
        const next: Invitation = { ...i, status: "CLAIMED", inviteeUma, claimedAt: now, updatedAt: now };
        await store.invitations.update(next);
        const shown = view(next, platformNow);
        await store.events.invitationChanged(shown, now);
        return shown;
      });
    },

    async cancel(platformId: string, code: string): Promise<InvitationView> {
      const platformNow = await time.now(platformId);
      return transact(async (store) => {
        const i = await store.invitations.get(platformId, code, { forUpdate: true });
        if (!i) throw errors.notFound("Invitation", code);
        const status = effectiveStatus(i, platformNow);
        if (status !== "PENDING") throw notPending(i, status);
        const now = changeTime(clock, i.updatedAt);
        const next: Invitation = { ...i, status: "CANCELLED", updatedAt: now };
        await store.invitations.update(next);
        const shown = view(next, platformNow);
        await store.events.invitationChanged(shown, now);
        return shown;
      });
    },
  };
}

export type Invitations = ReturnType<typeof createInvitations>;
