import { AppError, errors, newId, type Clock } from "@corridor/kit";
import { changeTime, liveCustomer } from "./customers.js";
import { pageOf, pageStart } from "./paging.js";
import type { PlatformDirectory, Store, Transact } from "./ports.js";
import { sandboxOutcome } from "./sandbox.js";
import type { BeneficialOwner, Customer, Page, PageRequest, Verification, VerificationError, VerificationFilter } from "./types.js";

export interface VerificationsDeps {
  transact: Transact;
  clock: Clock;
  platforms: PlatformDirectory;
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

/** The identifier whose suffix decides the sandbox outcome. */
function sandboxIdentifier(c: Customer): string {
  return c.customerType === "BUSINESS" ? (c.businessInfo?.registrationNumber ?? "") : c.fullName;
}

/**
 * One verification of a live customer, inside the caller's transaction (POST /verifications, and
 * the hosted KYC link page when completed): records it and, when the data is complete, applies the
 * outcome to the customer. APPROVED or REJECTED customers are 400 CUSTOMER_ALREADY_<status>.
 */
export async function runVerification(store: Store, clock: Clock, environment: "SANDBOX" | "PRODUCTION", platformId: string, customerId: string): Promise<Verification> {
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
  // Production needs a KYC provider connector and none ships (decisions §1 treats a missing
  // connector as 501): answering PENDING would leave the customer waiting for a decision
  // nothing will ever make. Data problems are still reported first, as a sandbox would.
  if (environment !== "SANDBOX" && !problems.length) {
    throw new AppError("NOT_IMPLEMENTED", "NOT_IMPLEMENTED", "No KYC provider connector is configured for production platforms; regulated platforms set kycStatus themselves", { customerId });
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
 * production platform's verification stays PENDING until a KYC provider connector decides (none
 * is shipped), so production customers never approve themselves by their names.
 */
export function createVerifications({ transact, clock, platforms }: VerificationsDeps) {
  return {
    async create(platformId: string, customerId: string): Promise<Verification> {
      const platform = await platforms.settings(platformId);
      return transact((store) => runVerification(store, clock, platform.environment, platformId, customerId));
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
