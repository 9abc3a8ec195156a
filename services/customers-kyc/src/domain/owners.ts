import { errors, newId, type Clock } from "@corridor/kit";
import { changeTime, liveCustomer } from "./customers.js";
import { pageOf, pageStart } from "./paging.js";
import type { PlatformDirectory, Store, Transact } from "./ports.js";
import { sandboxOutcome } from "./sandbox.js";
import type { BeneficialOwner, Customer, KycStatus, OwnerRole, Page, PageRequest, PersonalInfo } from "./types.js";
import { Problems, checkPercentage, checkPersonalInfo, checkRoles } from "./validation.js";

export interface OwnersDeps {
  transact: Transact;
  clock: Clock;
  platforms: PlatformDirectory;
}

export interface NewOwner {
  customerId: string;
  roles: string[];
  ownershipPercentage: number;
  personalInfo: Partial<PersonalInfo>;
}

export interface OwnerPatch {
  roles?: string[];
  ownershipPercentage?: number;
  /** Fields present replace the stored ones; an address replaces the whole address. */
  personalInfo?: Partial<PersonalInfo>;
}

function requireBusiness(c: Customer): void {
  if (c.customerType !== "BUSINESS") {
    throw errors.invalidInput([{ field: "customerId", reason: "beneficial owners belong to BUSINESS customers only" }]);
  }
}

/** The UBO shares of one business may not add up to more than 100 percent. */
async function checkUboTotal(store: Store, owner: BeneficialOwner): Promise<void> {
  if (!owner.roles.includes("UBO")) return;
  const others = (await store.owners.allOf(owner.platformId, owner.customerId)).filter((o) => o.id !== owner.id && o.roles.includes("UBO"));
  // Shares are fractional (12.5): the total is judged to a millionth of a percent, so 33.3 + 33.3 + 33.4 is 100.
  const total = Math.round(others.reduce((sum, o) => sum + o.ownershipPercentage, owner.ownershipPercentage) * 1e6) / 1e6;
  if (total > 100) {
    throw errors.invalidInput([
      { field: "ownershipPercentage", reason: `the UBOs of this business would own ${total}% in total; at most 100% is possible` },
    ]);
  }
}

function kycOf(environment: "SANDBOX" | "PRODUCTION", info: PersonalInfo): KycStatus {
  return environment === "SANDBOX" ? sandboxOutcome(info.lastName) : "PENDING";
}

/** KYC outcomes that may still change; APPROVED and REJECTED are final. */
const isOpen = (status: KycStatus) => status === "UNVERIFIED" || status === "PENDING";

/**
 * Beneficial owners of business customers. The owner's KYC runs as it is created (sandbox: the
 * lastName suffix rule; production: PENDING until a KYC provider decides). Writes lock the
 * business customer's row first, so concurrent owners of one business cannot exceed 100% UBO.
 */
export function createOwners({ transact, clock, platforms }: OwnersDeps) {
  return {
    async create(platformId: string, input: NewOwner): Promise<BeneficialOwner> {
      const platform = await platforms.settings(platformId);
      const now0 = clock.now();
      const p = new Problems();
      checkRoles(p, "roles", input.roles);
      checkPercentage(p, "ownershipPercentage", input.ownershipPercentage);
      checkPersonalInfo(p, "personalInfo", input.personalInfo, now0);
      if (!p.empty) throw errors.invalidInput(p.list);
      const info = input.personalInfo as PersonalInfo;
      return transact(async (store) => {
        const customer = await liveCustomer(store, platformId, input.customerId, { forUpdate: true });
        requireBusiness(customer);
        const now = clock.now();
        const owner: BeneficialOwner = {
          id: newId("BeneficialOwner"),
          platformId,
          customerId: customer.id,
          roles: input.roles as OwnerRole[],
          ownershipPercentage: input.ownershipPercentage,
          personalInfo: info,
          kycStatus: kycOf(platform.environment, info),
          createdAt: now,
          updatedAt: now,
        };
        await checkUboTotal(store, owner);
        await store.owners.insert(owner);
        await store.events.ownerChanged(owner, true, now);
        return owner;
      });
    },

    get(platformId: string, id: string): Promise<BeneficialOwner> {
      return transact(async (store) => {
        const o = await store.owners.get(platformId, id);
        if (!o) throw errors.notFound("BeneficialOwner", id);
        return o;
      });
    },

    /**
     * A changed lastName re-runs KYC only while the owner's KYC is open (UNVERIFIED or PENDING).
     * APPROVED and REJECTED are final, as for customers: re-running a REJECTED owner would let a
     * rejected person through by renaming them (the sandbox decides by the lastName suffix), and
     * a rename does not undo an approval.
     */
    async update(platformId: string, id: string, patch: OwnerPatch): Promise<BeneficialOwner> {
      const platform = await platforms.settings(platformId);
      const p = new Problems();
      if (patch.roles) checkRoles(p, "roles", patch.roles);
      if (patch.ownershipPercentage !== undefined) checkPercentage(p, "ownershipPercentage", patch.ownershipPercentage);
      if (!p.empty) throw errors.invalidInput(p.list);
      return transact(async (store) => {
        const found = await store.owners.get(platformId, id);
        if (!found) throw errors.notFound("BeneficialOwner", id);
        await liveCustomer(store, platformId, found.customerId, { forUpdate: true });
        const current = (await store.owners.get(platformId, id, { forUpdate: true }))!;
        const info: PersonalInfo = { ...current.personalInfo };
        for (const [k, v] of Object.entries(patch.personalInfo ?? {})) if (v !== undefined) (info as unknown as Record<string, unknown>)[k] = v;
        const q = new Problems();
        checkPersonalInfo(q, "personalInfo", info, clock.now());
        if (!q.empty) throw errors.invalidInput(q.list);
        const now = changeTime(clock, current.updatedAt);
        const rerun = info.lastName !== current.personalInfo.lastName && isOpen(current.kycStatus);
        const next: BeneficialOwner = {
          ...current,
          roles: (patch.roles as OwnerRole[] | undefined) ?? current.roles,
          ownershipPercentage: patch.ownershipPercentage ?? current.ownershipPercentage,
          personalInfo: info,
          kycStatus: rerun ? kycOf(platform.environment, info) : current.kycStatus,
          updatedAt: now,
        };
        await checkUboTotal(store, next);
        await store.owners.update(next);
        await store.events.ownerChanged(next, false, now);
        return next;
      });
    },

    async list(platformId: string, customerId: string, page: PageRequest): Promise<Page<BeneficialOwner>> {
      const { limit, after } = pageStart(page);
      return transact(async (store) => {
        const customer = await store.customers.get(platformId, customerId);
        if (!customer) throw errors.notFound("Customer", customerId);
        requireBusiness(customer);
        const rows = await store.owners.list(platformId, customerId, { limit: limit + 1, after });
        const total = await store.owners.count(platformId, customerId);
        return pageOf(rows, limit, (o) => o.id, total);
      });
    },
  };
}

export type Owners = ReturnType<typeof createOwners>;
