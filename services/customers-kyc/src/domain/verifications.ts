import { errors, newId, type Clock } from "@corridor/kit";
import { changeTime, liveCustomer } from "./customers.js";
import type { KycProvider } from "./kyc-provider.js";
import { pageOf, pageStart } from "./paging.js";
import type { PlatformDirectory, Store, Transact } from "./ports.js";
import { sandboxOutcome } from "./sandbox.js";
import type { BeneficialOwner, Customer, Page, PageRequest, Verification, VerificationError, VerificationFilter } from "./types.js";

export interface VerificationsDeps {
  transact: Transact;
  clock: Clock;
  platforms: PlatformDirectory;
  /** Where production verifications go (the operator's review queue ships). */
  provider: KycProvider;
}

/** How production verifications are decided: by the KYC provider, unless the platform is a regulated institution. */
export interface ProductionKyc {
  provider: KycProvider;
  regulated: boolean;
}

const missing = (field: string): VerificationError => ({ type: "MISSING_FIELD", field, reason: `${field} is required for verification` });

/** What a customer still lacks before it can be verified: every missing field, and for a business a missing owner. */
export function verificationErrors(c: Customer, owners: BeneficialOwner[]): VerificationError[] {
  const out: VerificationError[] = [];
  const addressFields = () => {
    if (!c.address) out.push(missing("address"));
    else for (const f of ["line1", "postalCode", "country"] as const) if (!c.address[f]) out.push(missing(`address.${f}`));
  };
  if (c.customerType === "INDIVIDUAL") {
    if (!c.fullName.trim()) out.push(missing("fullName"));
    if (!c.birthDate) out.push(missing("birthDate"));
    if (!c.nationality) out.push(missing("nationality"));
    addressFields();
    return out;
  }
  const b = c.businessInfo;
  if (!b?.legalName?.trim()) out.push(missing("businessInfo.legalName"));
  if (!b?.registrationNumber?.trim()) out.push(missing("businessInfo.registrationNumber"));
  if (!b?.taxId?.trim()) out.push(missing("businessInfo.taxId"));
  addressFields();
  if (owners.length === 0) {
    out.push({ type: "MISSING_BENEFICIAL_OWNER", field: "beneficialOwners", reason: "a business needs at least one beneficial owner" });
  }
  owners
    .filter((o) => o.kycStatus === "REJECTED")
    .forEach((o) => out.push({ type: "INVALID_FIELD", field: `beneficialOwners.${o.id}`, reason: "this beneficial owner failed KYC" }));
  return out;
}

const openKyc = (o: BeneficialOwner) => o.kycStatus === "UNVERIFIED" || o.kycStatus === "PENDING";

/** The identifier whose suffix decides the sandbox outcome. */
function sandboxIdentifier(c: Customer): string {
  return c.customerType === "BUSINESS" ? (c.businessInfo?.registrationNumber ?? "") : c.fullName;
}

/** 400 KYC_MANAGED_BY_PLATFORM: a regulated production platform runs its own KYC. */
export const kycManagedByPlatform = (customerId: string) =>
  errors.badRequest(
    "KYC_MANAGED_BY_PLATFORM",
    "This platform is a regulated financial institution: it runs its own KYC and sets kycStatus / kybStatus with PATCH /customers/{customerId}; Corridor's KYC provider does not verify its customers",
    { customerId },
  );

/**
 * One verification of a live customer, inside the caller's transaction (POST /verifications, and
 * the hosted KYC link page when completed): records it and, when the data is complete, applies the
 * outcome to the customer. APPROVED or REJECTED customers are 400 CUSTOMER_ALREADY_<status>.
 * Production: complete data goes to the KYC provider (the operator's review queue) and the
 * verification answers PENDING until it decides; a customer already waiting for a decision gets
 * its pending verification back (owners added since are sent along).
 */
export async function runVerification(
  store: Store,
  clock: Clock,
  environment: "SANDBOX" | "PRODUCTION",
  platformId: string,
  customerId: string,
  production?: ProductionKyc,
): Promise<Verification> {
  const customer = await liveCustomer(store, platformId, customerId, { forUpdate: true });
  if (customer.verificationStatus === "APPROVED" || customer.verificationStatus === "REJECTED") {
    throw errors.badRequest(
      `CUSTOMER_ALREADY_${customer.verificationStatus}`,
      `Customer ${customerId} is already ${customer.verificationStatus}; it cannot be verified again`,
      { customerId, verificationStatus: customer.verificationStatus },
    );
  }
  const owners = customer.customerType === "BUSINESS" ? await store.owners.allOf(platformId, customerId) : [];
  const problems = verificationErrors(customer, owners);
  // Data problems are reported first, in every environment.
  const toProvider = environment !== "SANDBOX" && !problems.length;
  if (toProvider) {
    if (!production) throw new Error("runVerification: a production verification needs the KYC provider");
    if (production.regulated) throw kycManagedByPlatform(customerId);
    const waiting = await store.reviews.openOf(platformId, customerId);
    const pending = waiting?.status === "SUBMITTED" && waiting.verificationId ? await store.verifications.get(platformId, waiting.verificationId) : undefined;
    if (pending?.verificationStatus === "PENDING") {
      await production.provider.submit(store, { platformId, customer, owners: owners.filter(openKyc), verification: pending }, changeTime(clock, pending.updatedAt));
      return pending;
    }
  }
  const now = changeTime(clock, customer.updatedAt);
  const outcome = environment === "SANDBOX" ? sandboxOutcome(sandboxIdentifier(customer)) : "PENDING";
  const verification: Verification = {
    id: newId("Verification"),
    platformId,
    customerId,
    verificationStatus: problems.length ? "RESOLVE_ERRORS" : outcome,
    errors: problems,
    createdAt: now,
    updatedAt: now,
  };
  await store.verifications.insert(verification);
  await store.events.verificationUpdated(verification, now);
  if (toProvider) await production!.provider.submit(store, { platformId, customer, owners: owners.filter(openKyc), verification }, now);
  if (!problems.length && outcome !== customer.verificationStatus) {
    const next: Customer = { ...customer, verificationStatus: outcome, updatedAt: now };
    await store.customers.update(next);
    await store.events.customerUpdated(next, now);
    await store.events.customerStatusChanged(next, customer.verificationStatus, now);
  }
  return verification;
}

/**
 * KYC (individual) / KYB (business) verification. Sandbox platforms get the suffix rule; a
 * production platform's verification stays PENDING until the KYC provider (the operator's review
 * queue) decides, so production customers never approve themselves by their names.
 */
export function createVerifications({ transact, clock, platforms, provider }: VerificationsDeps) {
  return {
    async create(platformId: string, customerId: string): Promise<Verification> {
      const platform = await platforms.settings(platformId);
      return transact((store) => runVerification(store, clock, platform.environment, platformId, customerId, { provider, regulated: platform.isRegulated }));
    },

    get(platformId: string, id: string): Promise<Verification> {
      return transact(async (store) => {
        const v = await store.verifications.get(platformId, id);
        if (!v) throw errors.notFound("Verification", id);
        return v;
      });
    },

    async list(filter: VerificationFilter, page: PageRequest): Promise<Page<Verification>> {
      const { limit, after } = pageStart(page);
      return transact(async (store) => {
        const rows = await store.verifications.list(filter, { limit: limit + 1, after });
        const total = await store.verifications.count(filter);
        return pageOf(rows, limit, (v) => v.id, total);
      });
    },
  };
}

export type Verifications = ReturnType<typeof createVerifications>;
