import { createHash, randomBytes } from "node:crypto";
import { AppError, errors, newId, type Clock, type PlatformTime } from "@corridor/kit";
import { liveCustomer } from "./customers.js";
import type { PlatformDirectory, Store, Transact } from "./ports.js";
import type { DocumentInput, Documents } from "./documents.js";
import type { Customer, KycDocument, KycLink, KycStatus, Verification } from "./types.js";
import type { KycProvider } from "./kyc-provider.js";
import { kycManagedByPlatform, runVerification } from "./verifications.js";

export interface KycLinksDeps {
  transact: Transact;
  clock: Clock;
  /** What a link expires by: a sandbox platform's sandbox clock, else the service clock. */
  time: PlatformTime;
  platforms: PlatformDirectory;
  /** Where production pages go (the operator's review queue ships). */
  provider: KycProvider;
  /** Where the page's uploads go. */
  documents: Documents;
  /** How long a link stays open (ms). */
  ttlMs: number;
}

/** What the hosted page shows. */
export interface KycLinkPage {
  customerId: string;
  customerType: Customer["customerType"];
  displayName: string;
  verificationStatus: KycStatus;
  expiresAt: Date;
  redirectUrl: string;
  /** The customer's documents uploaded so far. */
  documents: KycDocument[];
}

/** The token its URL carries: 256 random bits, base64url. Only its SHA-256 is stored. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");

function redirectProblem(url: string): string | undefined {
  if (url.length > 2048) return "must be at most 2048 characters";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute URL";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "must be an http(s) URL";
  return undefined;
}

const displayName = (c: Customer) => (c.customerType === "BUSINESS" ? (c.businessInfo?.legalName ?? "") : c.fullName);

/**
 * Hosted verification links (Grid's POST /customers/{id}/kyc-link, the operator's KYC link flow):
 * a single-use URL the platform hands its customer. Creating one changes nothing about the
 * customer; completing the page runs the customer's verification (sandbox: the suffix rule, as
 * POST /verifications) and uses the link up. A link whose customer still lacks data stays open
 * (the page lists what is missing). A new link voids the customer's older open ones.
 */
export function createKycLinks({ transact, clock, time, platforms, provider, documents, ttlMs }: KycLinksDeps) {
  /**
   * The time the link of `token` expires by (its platform's), asked before a transaction opens;
   * an unknown token gets the service clock (openLink then answers 404).
   */
  async function linkNow(token: string): Promise<Date> {
    const link = TOKEN_PATTERN.test(token) ? await transact((store) => store.kycLinks.getByToken(hashOf(token), { forUpdate: false })) : undefined;
    return link ? time.now(link.platformId) : clock.now();
  }

  /** The open link of a token at `now` (its platform's time), or the page's refusal: 404 unknown, 410 used or expired. */
  async function openLink(store: Store, token: string, forUpdate: boolean, now: Date): Promise<KycLink> {
    const link = TOKEN_PATTERN.test(token) ? await store.kycLinks.getByToken(hashOf(token), { forUpdate }) : undefined;
    if (!link) throw new AppError("NOT_FOUND", "KYC_LINK_NOT_FOUND", "This verification link does not exist");
    if (link.completedAt) throw new AppError("GONE", "KYC_LINK_USED", "This verification link was already used", { customerId: link.customerId });
    if (link.expiresAt.getTime() <= now.getTime()) {
      throw new AppError("GONE", "KYC_LINK_EXPIRED", "This verification link has expired; ask for a new one", { customerId: link.customerId });
    }
    return link;
  }

  const pageOf = async (store: Store, link: KycLink, c: Customer): Promise<KycLinkPage> => ({
    customerId: c.id,
    customerType: c.customerType,
    displayName: displayName(c),
    verificationStatus: c.verificationStatus,
    expiresAt: link.expiresAt,
    redirectUrl: link.redirectUrl,
    documents: await store.documents.list({ platformId: link.platformId, holder: c.id }, { limit: 50 }),
  });

  return {
    async create(platformId: string, customerId: string, redirectUrl: string): Promise<{ token: string; expiresAt: Date; customerId: string }> {
      if (redirectUrl) {
        const reason = redirectProblem(redirectUrl);
        if (reason) throw errors.invalidInput([{ field: "redirectUrl", reason }]);
      }
      const platform = await platforms.settings(platformId);
      const now = await time.now(platformId);
      return transact(async (store) => {
        const customer = await liveCustomer(store, platformId, customerId, { forUpdate: true });
        if (customer.verificationStatus === "APPROVED" || customer.verificationStatus === "REJECTED") {
          throw errors.badRequest(
            `CUSTOMER_ALREADY_${customer.verificationStatus}`,
            `Customer ${customerId} is already ${customer.verificationStatus}; it needs no verification link`,
            { customerId, verificationStatus: customer.verificationStatus },
          );
        }
        // As POST /verifications: a regulated production platform runs its own KYC.
        if (platform.environment !== "SANDBOX" && platform.isRegulated) throw kycManagedByPlatform(customerId);
        await store.kycLinks.expireOpen(platformId, customerId, now);
        const token = randomBytes(32).toString("base64url");
        const expiresAt = new Date(now.getTime() + ttlMs);
        await store.kycLinks.insert({ id: newId("KycLink"), platformId, customerId, tokenSha256: hashOf(token), redirectUrl, createdAt: now, expiresAt, completedAt: null });
        return { token, expiresAt, customerId };
      });
    },

    /** The page of an open link (reading it uses nothing up). */
    async page(token: string): Promise<KycLinkPage> {
      const now = await linkNow(token);
      return transact(async (store) => {
        const link = await openLink(store, token, false, now);
        return pageOf(store, link, await liveCustomer(store, link.platformId, link.customerId));
      });
    },

    /** A document the customer uploads on the open page (the link's customer is the holder; nothing is used up). */
    async uploadDocument(token: string, input: DocumentInput): Promise<KycDocument> {
      const now = await linkNow(token);
      const link = await transact((store) => openLink(store, token, false, now));
      return documents.upload(link.platformId, { ...input, documentHolder: link.customerId });
    },

    /**
     * Completes the page: the customer's verification runs now, and only now does its status
     * change. The link is used up unless the verification found data missing (RESOLVE_ERRORS).
     */
    async complete(token: string): Promise<{ page: KycLinkPage; verification: Verification }> {
      const now = await linkNow(token);
      const first = await transact((store) => openLink(store, token, false, now));
      const platform = await platforms.settings(first.platformId);
      return transact(async (store) => {
        const link = await openLink(store, token, true, now);
        const verification = await runVerification(store, clock, platform.environment, link.platformId, link.customerId, { provider, regulated: platform.isRegulated });
        if (verification.verificationStatus !== "RESOLVE_ERRORS") await store.kycLinks.complete(link.id, clock.now());
        return { page: await pageOf(store, link, await liveCustomer(store, link.platformId, link.customerId)), verification };
      });
    },
  };
}

export type KycLinks = ReturnType<typeof createKycLinks>;
