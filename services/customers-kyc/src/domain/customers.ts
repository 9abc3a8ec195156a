import { AppError, errors, formatAmount, newId, type Clock } from "@corridor/kit";
import { pageOf, pageStart } from "./paging.js";
import { Conflict, type CustomerHoldings, type CustomerLedger, type PlatformDirectory, type Store, type Transact } from "./ports.js";
import { KYC_STATUSES, type BusinessInfo, type Customer, type CustomerFilter, type CustomerInput, type KycStatus, type Page, type PageRequest, type PlatformSettings } from "./types.js";
import {
  Problems,
  checkAddress,
  checkCountry,
  checkDate,
  checkEmail,
  checkKycStatus,
  checkText,
  isUmaAddress,
  normalizeUma,
} from "./validation.js";

export interface CustomersDeps {
  transact: Transact;
  clock: Clock;
  platforms: PlatformDirectory;
  /** Asked before a delete: a customer holding money cannot be deleted. */
  ledger: CustomerLedger;
}

const INDIVIDUAL_ONLY = ["fullName", "birthDate", "nationality"] as const;

export const customerDeleted = (id: string) =>
  new AppError("GONE", "CUSTOMER_DELETED", `Customer ${id} was deleted`, { id }, { shouldNotRetry: true });

/**
 * 409 CUSTOMER_HAS_FUNDS: the customer still holds money (a balance or a hold) or has a transaction
 * that may still move money; details list each account's amounts and each such transaction.
 */
export function customerHasFunds(id: string, h: CustomerHoldings): AppError {
  const parts = [
    ...h.accounts.map((a) => `${formatAmount(a.balance, a.currency)} in ${a.accountId}${a.held > 0n ? ` (${formatAmount(a.held, a.currency)} held)` : ""}`),
    ...h.inFlightTransactions.map((t) => `${t.type} ${t.transactionId} ${t.refundStatus ? `refund ${t.refundStatus}` : t.status}`),
  ];
  return errors.conflict(
    "CUSTOMER_HAS_FUNDS",
    `Customer ${id} cannot be deleted while it holds money or has transactions in flight: ${parts.join("; ")}. Move the money out and let its transactions finish first`,
    {
      customerId: id,
      // Amounts are minor units (never above 9e15, so exact as JSON numbers).
      accounts: h.accounts.map((a) => ({ accountId: a.accountId, type: a.type, currency: a.currency, balance: Number(a.balance), held: Number(a.held), available: Number(a.balance - a.held) })),
      inFlightTransactions: h.inFlightTransactions.map((t) => ({
        id: t.transactionId,
        type: t.type,
        status: t.status,
        amount: Number(t.amount),
        currency: t.currency,
        ...(t.refundStatus ? { refundStatus: t.refundStatus } : {}),
      })),
    },
  );
}

/** The public name of the status field: kycStatus for individuals, kybStatus for businesses. */
export const statusField = (type: string | undefined) => (type === "BUSINESS" ? "kybStatus" : "kycStatus");

/** A live customer of the platform for a change: 404 when unknown, 410 when deleted. */
export async function liveCustomer(store: Store, platformId: string, id: string, opts?: { forUpdate?: boolean }): Promise<Customer> {
  const c = await store.customers.get(platformId, id, opts);
  if (!c) throw errors.notFound("Customer", id);
  if (c.deletedAt) throw customerDeleted(id);
  return c;
}

/** A change's time: never earlier than (and never equal to) the record's last change, so versions order. */
export function changeTime(clock: Clock, previous: Date): Date {
  return new Date(Math.max(clock.now().getTime(), previous.getTime() + 1));
}

/** Checks the fields present in `input`, whichever type they belong to. */
function checkFields(p: Problems, input: CustomerInput, platform: PlatformSettings, today: Date): void {
  checkText(p, "platformCustomerId", input.platformCustomerId, { required: false });
  if (input.platformCustomerId !== undefined && input.platformCustomerId.trim() === "") p.add("platformCustomerId", "must not be empty");
  if (input.umaAddress !== undefined && !isUmaAddress(normalizeUma(input.umaAddress))) {
    p.add("umaAddress", "must be an UMA address like $alice@example.com");
  }
  checkCountry(p, "region", input.region);
  checkEmail(p, "email", input.email);
  if (input.currencies) {
    const supported = new Set(platform.supportedCurrencies);
    input.currencies.forEach((code, i) => {
      if (!supported.has(code)) p.add(`currencies[${i}]`, `is not a supported currency of this platform (${platform.supportedCurrencies.join(", ") || "none"})`);
    });
    if (new Set(input.currencies).size !== input.currencies.length) p.add("currencies", "must not repeat a currency");
  }
  checkText(p, "fullName", input.fullName);
  checkDate(p, "birthDate", input.birthDate, today);
  checkCountry(p, "nationality", input.nationality);
  checkAddress(p, "address", input.address);
  const b = input.businessInfo;
  if (b) {
    checkText(p, "businessInfo.registrationNumber", b.registrationNumber, { max: 64 });
    checkText(p, "businessInfo.taxId", b.taxId, { max: 64 });
    checkDate(p, "businessInfo.incorporatedOn", b.incorporatedOn, today);
    checkCountry(p, "businessInfo.countryOfIncorporation", b.countryOfIncorporation);
  }
}

/** Fields that belong to the other customer type. */
function checkTypeFields(p: Problems, type: string, input: CustomerInput): void {
  if (type === "BUSINESS") {
    for (const f of INDIVIDUAL_ONLY) if (input[f] !== undefined) p.add(f, "applies to INDIVIDUAL customers only");
  } else if (input.businessInfo !== undefined) {
    p.add("businessInfo", "applies to BUSINESS customers only");
  }
}

/**
 * kycStatus / kybStatus in a create or patch. A regulated financial institution runs its own KYC
 * and may set any status. Everyone else may only send the value the customer already has (a
 * no-op; UNVERIFIED on create): their customers move only through POST /verifications, so a
 * REJECTED customer cannot be reset to UNVERIFIED and verified again under another name.
 */
function checkStatus(p: Problems, type: string, input: CustomerInput, platform: PlatformSettings, current: KycStatus = "UNVERIFIED"): void {
  const field = statusField(type);
  const value = input.verificationStatus;
  const known = value !== undefined && (KYC_STATUSES as readonly string[]).includes(value);
  if (!known) return checkKycStatus(p, field, value);
  if (value === current || platform.isRegulated) return;
  p.add(
    field,
    `only a regulated financial institution may set it (the customer is ${current}); other platforms' customers start UNVERIFIED and change status only through a verification`,
  );
}

function mergeBusinessInfo(current: BusinessInfo | null, patch: Partial<BusinessInfo> | undefined): BusinessInfo | null {
  if (!patch) return current;
  const out: BusinessInfo = { ...(current ?? { legalName: "" }) };
  for (const [k, v] of Object.entries(patch) as [keyof BusinessInfo, string | undefined][]) {
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/**
 * A customer's default UMA address: `$<handle>@<domain>`, or with a short suffix of its id when a
 * live customer already holds that address.
 */
async function defaultUmaAddress(store: Store, c: Pick<Customer, "platformId" | "id" | "platformCustomerId">, umaDomain: string): Promise<string> {
  const handle = defaultHandle(c.platformCustomerId);
  const uma = `$${handle}@${umaDomain}`;
  return (await store.customers.findLiveByUma(c.platformId, uma)) ? `$${handle}-${c.id.slice(-6)}@${umaDomain}` : uma;
}

/** How many customers one pass of assignDefaultUmaAddresses gives an address (the rest: the next batch). */
const UMA_ASSIGN_BATCH = 500;

/**
 * Gives the platform's live customers without a UMA address their default one under `umaDomain`,
 * as a new customer would get it (issue 29, item 6: production platforms' customers created before
 * their platform had a domain). Runs inside the caller's transaction (the platform-config consumer's
 * inbox transaction) and emits CUSTOMER_UPDATED for each. Answers how many it changed; a full batch
 * means more may be left, and the caller runs it again.
 */
export async function assignDefaultUmaAddresses(store: Store, clock: Clock, platformId: string, umaDomain: string): Promise<number> {
  const customers = await store.customers.liveWithoutUma(platformId, UMA_ASSIGN_BATCH);
  for (const current of customers) {
    const now = changeTime(clock, current.updatedAt);
    const next: Customer = { ...current, umaAddress: await defaultUmaAddress(store, current, umaDomain), updatedAt: now };
    await store.customers.update(next);
    await store.events.customerUpdated(next, now);
  }
  return customers.length;
}

/** A handle for the default UMA address: the platform customer id, lower-cased, restricted to UMA's characters. */
function defaultHandle(platformCustomerId: string): string {
  const h = platformCustomerId
    .toLowerCase()
    .replace(/[^a-z0-9._+-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "")
    .slice(0, 48);
  return h || "customer";
}

function conflictError(err: Conflict, value: string) {
  if (err.field === "umaAddress") return errors.conflict("UMA_ADDRESS_EXISTS", `UMA address ${value} is already used by another customer`, { field: "umaAddress" });
  return errors.conflict("CONFLICT", `platformCustomerId ${value} is already used by another customer`, { field: "platformCustomerId" });
}

/**
 * A new customer from a create's input, checked (INVALID_INPUT listing every problem) but not
 * stored: POST /customers and each row of a bulk import (domain/customer-imports.ts) build it so.
 */
export function newCustomer(platformId: string, input: CustomerInput, platform: PlatformSettings, now: Date): Customer {
  const p = new Problems();
  const type = input.customerType;
  if (type !== "INDIVIDUAL" && type !== "BUSINESS") p.add("customerType", "must be one of INDIVIDUAL, BUSINESS");
  if (input.platformCustomerId === undefined) p.add("platformCustomerId", "is required");
  checkFields(p, input, platform, now);
  if (type) {
    checkTypeFields(p, type, input);
    checkStatus(p, type, input, platform);
  }
  if (type === "BUSINESS") checkText(p, "businessInfo.legalName", input.businessInfo?.legalName, { required: true });
  if (!p.empty) throw errors.invalidInput(p.list);
  return {
    id: newId("Customer"),
    platformId,
    platformCustomerId: input.platformCustomerId!.trim(),
    customerType: type as Customer["customerType"],
    umaAddress: input.umaAddress !== undefined ? normalizeUma(input.umaAddress) : "",
    region: input.region ?? "",
    currencies: input.currencies ?? [...platform.supportedCurrencies],
    email: input.email ?? "",
    verificationStatus: (input.verificationStatus as KycStatus | undefined) ?? "UNVERIFIED",
    fullName: input.fullName ?? "",
    birthDate: input.birthDate ?? "",
    nationality: input.nationality ?? "",
    address: input.address ? (input.address as Customer["address"]) : null,
    businessInfo: type === "BUSINESS" ? mergeBusinessInfo(null, input.businessInfo) : null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
}

/**
 * Stores a customer built by newCustomer, in the caller's transaction, with its events: the default
 * UMA address when none was given, 409 CONFLICT / UMA_ADDRESS_EXISTS on a live duplicate.
 */
export async function insertNewCustomer(store: Store, customer: Customer, input: CustomerInput, platform: PlatformSettings): Promise<Customer> {
  const now = customer.createdAt;
  if (input.umaAddress === undefined && platform.umaDomain) customer.umaAddress = await defaultUmaAddress(store, customer, platform.umaDomain);
  try {
    await store.customers.insert(customer);
  } catch (err) {
    if (err instanceof Conflict) throw conflictError(err, err.field === "umaAddress" ? customer.umaAddress : customer.platformCustomerId);
    throw err;
  }
  await store.events.customerCreated(customer, now);
  if (customer.verificationStatus !== "UNVERIFIED") await store.events.customerStatusChanged(customer, "UNVERIFIED", now);
  return customer;
}

/**
 * Customer use cases. Platform settings (UMA domain, currencies, regulated flag) are read from
 * auth-sessions before the transaction opens: a call out while holding a transaction could
 * deadlock the single embedded database session.
 */
export function createCustomers({ transact, clock, platforms, ledger }: CustomersDeps) {
  return {
    async create(platformId: string, input: CustomerInput): Promise<Customer> {
      const platform = await platforms.settings(platformId);
      const customer = newCustomer(platformId, input, platform, clock.now());
      return transact((store) => insertNewCustomer(store, customer, input, platform));
    },

    get(platformId: string, id: string): Promise<Customer> {
      return transact(async (store) => {
        const c = await store.customers.get(platformId, id);
        if (!c) throw errors.notFound("Customer", id);
        return c;
      });
    },

    async update(platformId: string, id: string, patch: CustomerInput): Promise<Customer> {
      const platform = await platforms.settings(platformId);
      const now0 = clock.now();
      const p = new Problems();
      checkFields(p, patch, platform, now0);
      if (!p.empty) throw errors.invalidInput(p.list);
      return transact(async (store) => {
        const current = await liveCustomer(store, platformId, id, { forUpdate: true });
        const q = new Problems();
        if (patch.customerType !== undefined && patch.customerType !== current.customerType) q.add("customerType", `must be ${current.customerType} (the customer's type); customerType cannot be changed`);
        checkTypeFields(q, current.customerType, patch);
        checkStatus(q, current.customerType, patch, platform, current.verificationStatus);
        const businessInfo = current.customerType === "BUSINESS" ? mergeBusinessInfo(current.businessInfo, patch.businessInfo) : null;
        if (businessInfo && !businessInfo.legalName.trim()) q.add("businessInfo.legalName", "must not be empty");
        if (!q.empty) throw errors.invalidInput(q.list);

        const now = changeTime(clock, current.updatedAt);
        const next: Customer = {
          ...current,
          platformCustomerId: patch.platformCustomerId?.trim() ?? current.platformCustomerId,
          umaAddress: patch.umaAddress !== undefined ? normalizeUma(patch.umaAddress) : current.umaAddress,
          region: patch.region ?? current.region,
          currencies: patch.currencies ?? current.currencies,
          email: patch.email ?? current.email,
          verificationStatus: (patch.verificationStatus as KycStatus | undefined) ?? current.verificationStatus,
          fullName: patch.fullName ?? current.fullName,
          birthDate: patch.birthDate ?? current.birthDate,
          nationality: patch.nationality ?? current.nationality,
          address: patch.address ? (patch.address as Customer["address"]) : current.address,
          businessInfo,
          updatedAt: now,
        };
        try {
          await store.customers.update(next);
        } catch (err) {
          if (err instanceof Conflict) throw conflictError(err, err.field === "umaAddress" ? next.umaAddress : next.platformCustomerId);
          throw err;
        }
        await store.events.customerUpdated(next, now);
        if (next.verificationStatus !== current.verificationStatus) await store.events.customerStatusChanged(next, current.verificationStatus, now);
        return next;
      });
    },

    /**
     * Soft delete: the customer is answered with isDeleted; its ids become free for new customers.
     * Only a customer that holds nothing: the ledger checks and closes it first, in one step under
     * the customer's lock there (409 CUSTOMER_HAS_FUNDS otherwise), so no transfer can slip in between;
     * money arriving afterwards is refused by the ledger. Remote call first, never inside a transaction.
     */
    async delete(platformId: string, id: string): Promise<Customer> {
      await transact((store) => liveCustomer(store, platformId, id)); // 404 / 410 before asking the ledger
      const holdings = await ledger.closeIfEmpty(platformId, id);
      if (holdings.accounts.length > 0 || holdings.inFlightTransactions.length > 0 || !holdings.closed) throw customerHasFunds(id, holdings);
      return transact(async (store) => {
        const current = await liveCustomer(store, platformId, id, { forUpdate: true });
        const now = changeTime(clock, current.updatedAt);
        const next: Customer = { ...current, deletedAt: now, updatedAt: now };
        await store.customers.update(next);
        await store.events.customerDeleted(next, now);
        return next;
      });
    },

    async list(filter: CustomerFilter, page: PageRequest): Promise<Page<Customer>> {
      const { limit, after } = pageStart(page);
      const f = { ...filter, umaAddress: filter.umaAddress === undefined ? undefined : normalizeUma(filter.umaAddress) };
      return transact(async (store) => {
        const rows = await store.customers.list(f, { limit: limit + 1, after });
        const total = await store.customers.count(f);
        return pageOf(rows, limit, (c) => c.id, total);
      });
    },
  };
}

export type Customers = ReturnType<typeof createCustomers>;
