
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { errors } from "@corridor/kit";
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { PageInfoSchema, type PageInfo } from "@corridor/proto/corridor/common/v1/paging_pb.js";
import { LedgerService, type TransferSpec } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { ExternalAccountSchema, InternalAccountSchema, type ExternalAccount, type InternalAccount } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import { TransactionSchema, type Transaction } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import type { AccountRow, ExternalAccountRow, TransactionRow } from "../domain/model.js";
import type { Ledger, TransferInput } from "../domain/ledger.js";
import type { Answer } from "../domain/ports.js";
import { externalAccountToPb, internalAccountToPb, ownershipChallengeToPb, transactionToPb } from "./mappers.js";

/** LedgerService: maps each RPC onto the use cases and back. */

const owner = (o: string): "CUSTOMER" | "PLATFORM" => {
  if (o === "CUSTOMER" || o === "PLATFORM") return o;
  throw errors.invalidInput([{ field: "owner", reason: "must be CUSTOMER or PLATFORM" }]);
};

const pageInfo = (p: { hasMore: boolean; nextCursor?: string; totalCount: number }): PageInfo =>
  create(PageInfoSchema, { hasMore: p.hasMore, nextCursor: p.nextCursor ?? "", totalCount: BigInt(p.totalCount) });

const orUndefined = (s: string) => (s === "" ? undefined : s);

/**
 * How the ledger stores the first answer under an Idempotency-Key (the domain hands it back as is
 * on a replay): the proto JSON of the resource.
 */
export const answerCodecs = {
  transaction: { encode: (row: TransactionRow) => toJson(TransactionSchema, transactionToPb(row)) },
  internalAccount: { encode: (row: AccountRow) => toJson(InternalAccountSchema, internalAccountToPb(row)) },
  externalAccount: { encode: (row: ExternalAccountRow) => toJson(ExternalAccountSchema, externalAccountToPb(row)) },
};

const transactionAnswer = (a: Answer<TransactionRow>): Transaction => (a.row ? transactionToPb(a.row) : fromJson(TransactionSchema, a.stored as never));
const externalAccountAnswer = (a: Answer<ExternalAccountRow>): ExternalAccount => (a.row ? externalAccountToPb(a.row) : fromJson(ExternalAccountSchema, a.stored as never));
const accountAnswer = (a: Answer<AccountRow>): InternalAccount => (a.row ? internalAccountToPb(a.row) : fromJson(InternalAccountSchema, a.stored as never));

function transferInput(platformSpec: TransferSpec | undefined): TransferInput {
  const t = platformSpec;
  if (!t) throw errors.invalidInput([{ field: "transfer", reason: "is required" }]);
  return {
    platformId: t.platformId,
    sourceAccountId: t.sourceAccountId,
    destinationAccountId: t.destinationAccountId,
    amount: t.amount,
    idempotencyKey: t.idempotencyKey,
    description: t.description,
    agentId: t.agentId,
    paymentRail: t.paymentRail,
    customerId: t.customerId,
  };
}

export function createLedgerHandler({ ledger }: { ledger: Ledger }): ServiceImpl<typeof LedgerService> {
  return {
    async listInternalAccounts(req) {
      const page = await ledger.listInternalAccounts(
        { platformId: req.platformId, ownerKind: owner(req.owner), customerId: orUndefined(req.customerId), currency: orUndefined(req.currency), type: orUndefined(req.type) },
        { limit: req.page?.limit, cursor: orUndefined(req.page?.cursor ?? "") },
      );
      return { accounts: page.data.map(internalAccountToPb), pageInfo: pageInfo(page) };
    },

    async getInternalAccount(req) {
      return { account: internalAccountToPb(await ledger.getInternalAccount(req.platformId, req.accountId)) };
    },

    async createExternalAccount(req) {
      const r = await ledger.createExternalAccount({
        platformId: req.platformId,
        ownerKind: owner(req.owner),
        customerId: req.customerId,
        currency: req.currency,
        accountInfo: req.accountInfo,
        platformAccountId: req.platformAccountId,
        defaultUmaDepositAccount: req.defaultUmaDepositAccount,
        idempotencyKey: req.idempotencyKey,
      });
      return { account: externalAccountAnswer(r.value), replayed: r.replayed };
    },

    async listExternalAccounts(req) {
      const page = await ledger.listExternalAccounts(
        { platformId: req.platformId, ownerKind: owner(req.owner), customerId: orUndefined(req.customerId), currency: orUndefined(req.currency) },
        { limit: req.page?.limit, cursor: orUndefined(req.page?.cursor ?? "") },
      );
      return { accounts: page.data.map(externalAccountToPb), pageInfo: pageInfo(page) };
    },

    async getExternalAccount(req) {
      const row = await ledger.getExternalAccount({ platformId: req.platformId, ownerKind: owner(req.owner), customerId: orUndefined(req.customerId) }, req.accountId);
      return { account: externalAccountToPb(row) };
    },

    async deleteExternalAccount(req) {
      const row = await ledger.deleteExternalAccount({ platformId: req.platformId, ownerKind: owner(req.owner), customerId: orUndefined(req.customerId) }, req.accountId);
      return { account: externalAccountToPb(row) };
    },

    async updateInternalAccount(req) {
      const res = await ledger.updateInternalAccount(req.platformId, req.accountId, { privateEnabled: req.privateEnabled }, { requestId: req.requestId, signature: req.signature });
      if (res.challenge) {
        const c = res.challenge;
        return { result: { case: "challenge", value: { type: c.type, payloadToSign: c.payloadToSign, requestId: c.requestId, expiresAt: timestampFromDate(c.expiresAt) } } };
      }
      return { result: { case: "account", value: internalAccountToPb(res.account) } };
    },

    async startOwnershipChallenge(req) {
      const { challenge, deposits } = await ledger.startOwnershipChallenge({ platformId: req.platformId, ownerKind: owner(req.owner) }, req.accountId, req.method);
      return { challenge: ownershipChallengeToPb(challenge, deposits.length) };
    },

    async verifyOwnership(req) {
      const row = await ledger.verifyOwnership({ platformId: req.platformId, ownerKind: owner(req.owner) }, req.accountId, { amounts: req.amounts, signature: req.signature, signatureScheme: req.signatureScheme });
      return { account: externalAccountToPb(row) };
    },

    async transferIn(req) {
      const r = await ledger.transferIn(transferInput(req.transfer));
      return { result: { transaction: transactionAnswer(r.value), replayed: r.replayed } };
    },

    async transferOut(req) {
      const r = await ledger.transferOut(transferInput(req.transfer));
      return { result: { transaction: transactionAnswer(r.value), replayed: r.replayed } };
    },

    async listTransactions(req) {
      const page = await ledger.listTransactions(
        {
          platformId: req.platformId,
          customerId: orUndefined(req.customerId),
          platformCustomerId: orUndefined(req.platformCustomerId),
          status: orUndefined(req.status),
          type: orUndefined(req.type),
          createdFrom: req.created?.after ? timestampDate(req.created.after) : undefined,
          createdTo: req.created?.before ? timestampDate(req.created.before) : undefined,
          reference: orUndefined(req.reference),
        },
        { limit: req.page?.limit, cursor: orUndefined(req.page?.cursor ?? ""), ascending: req.ascending },
      );
      return { transactions: page.data.map((r) => transactionToPb(r)), pageInfo: pageInfo(page) };
    },

    async getTransaction(req) {
      return { transaction: transactionToPb(await ledger.getTransaction(req.platformId, req.transactionId, orUndefined(req.customerId))) };
    },

    async cancelTransaction(req) {
      return { transaction: transactionToPb(await ledger.cancelTransaction(req.platformId, req.transactionId, req.reason)) };
    },

    async confirmReceiptDelivery(req) {
      return { transaction: transactionToPb(await ledger.confirmReceiptDelivery(req.platformId, req.transactionId, req.confirmedAt ? timestampDate(req.confirmedAt) : undefined)) };
    },

    async listDiscoveries(req) {
      const found = await ledger.listDiscoveries(req.platformId, { country: orUndefined(req.country), currency: orUndefined(req.currency) });
      return { discoveries: found.map((d) => ({ country: d.country, currency: d.currency, paymentRail: d.paymentRail, accountType: d.accountType, displayName: d.displayName })) };
    },

    async checkPaymentRail(req) {
      const route = await ledger.checkPaymentRail(req.platformId, req.currency, { externalAccountId: req.externalAccountId, paymentRail: req.paymentRail });
      return { connector: route.connector, paymentRail: route.paymentRail };
    },

    async createQuoteTransaction(req) {
      const row = await ledger.createQuoteTransaction({
        platformId: req.platformId,
        quoteId: req.quoteId,
        customerId: req.customerId,
        source: { type: req.source?.type ?? "", accountId: req.source?.accountId ?? "" },
        destination: {
          type: req.destination?.type ?? "",
          accountId: req.destination?.accountId ?? "",
          paymentRail: req.destination?.paymentRail ?? "",
          umaAddress: req.destination?.umaAddress ?? "",
        },
        sendingCurrency: req.sendingCurrency,
        totalSendingAmount: req.totalSendingAmount,
        receivingCurrency: req.receivingCurrency,
        totalReceivingAmount: req.totalReceivingAmount,
        feesIncluded: req.feesIncluded,
        exchangeRate: req.exchangeRate,
        rateDetails: req.rateDetails as Record<string, unknown> | undefined,
        description: req.description,
        counterpartyInformation: { ...req.counterpartyInformation },
        expiresAt: req.expiresAt ? timestampDate(req.expiresAt) : undefined,
        agentId: req.agentId,
        lookupId: req.lookupId,
        awaitingAuthorization: req.awaitingAuthorization,
      });
      return { transaction: transactionToPb(row) };
    },

    async authorizeQuoteTransaction(req) {
      const r = await ledger.authorizeQuoteTransaction(req.platformId, req.transactionId);
      return { transaction: transactionToPb(r.tx), authorized: r.authorized };
    },

    async createLookupTransaction(req) {
      const row = await ledger.createLookupTransaction({
        platformId: req.platformId,
        lookupId: req.lookupId,
        customerId: req.customerId,
        destination: { type: req.destination?.type ?? "", accountId: req.destination?.accountId ?? "", umaAddress: req.destination?.umaAddress ?? "" },
        sendingCurrency: req.sendingCurrency,
        receivingCurrency: req.receivingCurrency,
        expiresAt: req.expiresAt ? timestampDate(req.expiresAt) : undefined,
      });
      return { transaction: transactionToPb(row) };
    },

    async createIncomingUmaPayment(req) {
      const r = await ledger.createIncomingUmaPayment({
        platformId: req.platformId,
        customerId: req.customerId,
        senderUmaAddress: req.senderUmaAddress,
        receiverUmaAddress: req.receiverUmaAddress,
        currency: req.currency,
        amount: req.amount,
        idempotencyKey: req.idempotencyKey,
      });
      return { transaction: transactionAnswer(r.value), replayed: r.replayed };
    },

    async resolveIncomingPayment(req) {
      const r = await ledger.resolveIncomingPayment({ platformId: req.platformId, transactionId: req.transactionId, decision: req.decision, failureReason: req.failureReason, detail: req.detail, receiverCustomerInfo: req.receiverCustomerInfo });
      return { transaction: transactionToPb(r.tx), changed: r.changed };
    },

    async getCustomerHoldings(req) {
      const h = await ledger.customerHoldings(req.platformId, req.customerId, req.close);
      return {
        accounts: h.accounts.map((a) => ({ accountId: a.accountId, type: a.type, currency: a.currency, balance: a.balance, held: a.held })),
        inFlightTransactions: h.inFlight.map((t) => ({ transactionId: t.transactionId, type: t.type, status: t.status, amount: t.amount, currency: t.currency, refundStatus: t.refundStatus })),
        closed: h.closed,
      };
    },

    async expireQuoteTransaction(req) {
      const r = await ledger.expireQuoteTransaction(req.platformId, req.transactionId);
      return { transaction: transactionToPb(r.tx), expired: r.expired };
    },

    async executeQuoteTransaction(req) {
      const r = await ledger.executeQuoteTransaction(req.platformId, req.transactionId);
      return { transaction: transactionToPb(r.tx), alreadyExecuted: r.alreadyExecuted };
    },

    async recordQuoteFunding(req) {
      const r = await ledger.recordQuoteFunding({ platformId: req.platformId, transactionId: req.transactionId, currencyCode: req.currencyCode, amount: req.amount });
      return { transaction: transactionToPb(r.tx), alreadyExecuted: r.alreadyExecuted };
    },

    async fundInternalAccount(req) {
      const r = await ledger.fund({ platformId: req.platformId, accountId: req.accountId, amount: req.amount, idempotencyKey: req.idempotencyKey });
      return { account: accountAnswer(r.value), replayed: r.replayed };
    },
  };
}

