import { errors, newId, pageSize, toPage, type Clock, type FieldError } from "@corridor/kit";
import { beneficiaryName, validateAccountInfo } from "./account-info.js";
import { verifyBeneficiary } from "./beneficiary.js";
import { isCrypto } from "./currencies.js";
import { fundingInstructions, newReference, type FundingBank } from "./funding.js";
import { after, internalAccount, type PageInput } from "./gates.js";
import type { Idempotent } from "./idempotency.js";
import type { ExternalAccountRow, ExternalAccountScope, InternalAccountFilter } from "./model.js";
import type { AnswerCodec, Directory, LedgerStore, LedgerTx } from "./ports.js";

/** The internal account type that holds a currency. */
export const accountType = (currency: string) => (isCrypto(currency) ? "INTERNAL_CRYPTO" : "INTERNAL_FIAT");

/** Opens an internal account (with its funding instructions) unless the owner has one of that type and currency. */
export async function open(trx: LedgerTx, platformId: string, ownerKind: "CUSTOMER" | "PLATFORM", customerId: string | undefined, type: string, currency: string, now: Date, bank?: FundingBank, production = false) {
  const reference = newReference("DEP");
  await trx.openAccount({
    platformId,
    ownerKind,
    customerId,
    type,
    currency,
    reference,
    // A production platform's fiat account is paid into the operator's bank account for its currency, when configured.
    fundingInstructions: fundingInstructions({ currency, reference, isPlatformAccount: ownerKind === "PLATFORM", bank: type === "INTERNAL_FIAT" ? bank : undefined, production }),
    now,
  });
}

/** Internal accounts (read) and external accounts (create, read, delete) of a platform. */
export function createAccounts(deps: { store: LedgerStore; clock: Clock; directory: Directory; idempotent: Idempotent; answers: AnswerCodec<ExternalAccountRow> }) {
  const { store, clock, directory, idempotent } = deps;
  return {
    async listInternalAccounts(f: InternalAccountFilter, page: PageInput) {
      const limit = pageSize(page.limit);
      const { rows, total } = await store.listAccounts(f, { limit, after: after(page.cursor) });
      return toPage(rows, limit, (r) => ({ k: r.created_at.toISOString(), id: r.id }), total);
    },

    getInternalAccount: (platformId: string, id: string) => internalAccount(store, platformId, id),

    async createExternalAccount(i: {
      platformId: string;
      ownerKind: "CUSTOMER" | "PLATFORM";
      customerId: string;
      currency: string;
      accountInfo: unknown;
      platformAccountId: string;
      defaultUmaDepositAccount: boolean;
      /** The client's Idempotency-Key (as the gateway scopes it); empty: none. */
      idempotencyKey?: string;
    }) {
      const fieldErrors: FieldError[] = [];
      if (i.ownerKind === "CUSTOMER" && !i.customerId) fieldErrors.push({ field: "customerId", reason: "is required" });
      if (!/^[A-Z]{3,5}$/.test(i.currency)) fieldErrors.push({ field: "currency", reason: "must be an ISO 4217 or asset code (3 to 5 capital letters)" });
      if (i.ownerKind === "PLATFORM" && i.defaultUmaDepositAccount) {
        fieldErrors.push({ field: "defaultUmaDepositAccount", reason: "applies to customer accounts only" });
      }
      const checked = validateAccountInfo(i.currency, i.accountInfo);
      if ("errors" in checked) fieldErrors.push(...checked.errors.filter((e) => !(e.field === "currency" && fieldErrors.some((f) => f.field === "currency"))));
      if (fieldErrors.length || !("ok" in checked)) throw errors.invalidInput(fieldErrors);
      const valid = checked.ok;
      // Under an Idempotency-Key the account and its stored answer commit together (decisions §3):
      // a concurrent duplicate is IDEMPOTENCY_KEY_IN_USE, a later one gets the first account.
      const request = { op: "external-account", owner: i.ownerKind, customerId: i.customerId, currency: i.currency, accountInfo: i.accountInfo, platformAccountId: i.platformAccountId, defaultUmaDepositAccount: i.defaultUmaDepositAccount };
      return idempotent({ platformId: i.platformId, key: i.idempotencyKey ?? "", request, codec: deps.answers }, async (complete) => {
        if (i.ownerKind === "CUSTOMER") {
          const c = await directory.customer(i.platformId, i.customerId);
          if (c.isDeleted) throw errors.notFound("Customer", i.customerId);
        }
        const environment = await directory.environment(i.platformId);
        const verification = verifyBeneficiary(environment, valid.identifier, beneficiaryName(valid.info.beneficiary));
        return store.transaction(async (trx) => {
          const now = clock.now();
          if (i.defaultUmaDepositAccount) await trx.clearDefaultDeposit(i.platformId, i.customerId, now);
          const id = newId("ExternalAccount");
          await trx.insertExternalAccount({
            id,
            platform_id: i.platformId,
            owner_kind: i.ownerKind,
            customer_id: i.ownerKind === "CUSTOMER" ? i.customerId : null,
            currency: i.currency,
            account_type: valid.accountType,
            account_info: valid.info,
            platform_account_id: i.platformAccountId,
            default_uma_deposit_account: i.defaultUmaDepositAccount,
            status: "ACTIVE",
            beneficiary_verification_status: verification.status,
            beneficiary_verified_data: verification.verifiedData ?? null,
            created_at: now,
            updated_at: now,
            deleted_at: null,
          });
          const row = (await trx.getExternalAccount({ platformId: i.platformId, ownerKind: i.ownerKind }, id))!;
          await complete(trx, row);
          return row;
        });
      });
    },

    async listExternalAccounts(f: ExternalAccountScope & { currency?: string }, page: PageInput) {
      const limit = pageSize(page.limit);
      const { rows, total } = await store.listExternalAccounts(f, { limit, after: after(page.cursor) });
      return toPage(rows, limit, (r) => ({ k: r.created_at.toISOString(), id: r.id }), total);
    },

    async getExternalAccount(scope: ExternalAccountScope, id: string) {
      const row = await store.getExternalAccount(scope, id);
      if (!row) throw errors.notFound("ExternalAccount", id);
      return row;
    },

    async deleteExternalAccount(scope: ExternalAccountScope, id: string) {
      return store.transaction(async (trx) => {
        const row = await trx.getExternalAccount(scope, id);
        if (!row) throw errors.notFound("ExternalAccount", id);
        return trx.markExternalAccountDeleted(scope.platformId, id, clock.now());
      });
    },
  };
}
