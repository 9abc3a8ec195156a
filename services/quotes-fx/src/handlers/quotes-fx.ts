import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { TransactionSchema } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import type { ServiceImpl } from "@connectrpc/connect";
import { errors, quoteRequestFields } from "@corridor/kit";
import type { QuotesFxService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import type { Fx } from "../domain/fx.js";
import type { Lookups } from "../domain/lookups.js";
import type { PlatformDirectory } from "../domain/ports.js";
import type { QuoteLifecycle } from "../domain/quote-lifecycle.js";
import type { QuoteRequest } from "../domain/quotes.js";
import type { createWithdrawals } from "../domain/withdrawals.js";
import { PageInfoSchema } from "@corridor/proto/corridor/common/v1/paging_pb.js";
import { create } from "@bufbuild/protobuf";
import { findCurrency } from "../domain/currencies.js";
import { listUmaProviders } from "../domain/uma-providers.js";
import { currencyMsg, lookupMsg, quoteMsg } from "./mappers.js";

const pageInfo = (p: { hasMore: boolean; nextCursor?: string; totalCount: number }) =>
  create(PageInfoSchema, { hasMore: p.hasMore, nextCursor: p.nextCursor ?? "", totalCount: BigInt(p.totalCount) });
const QUOTE_STATUSES = ["PENDING_AUTHORIZATION", "PENDING", "PROCESSING", "COMPLETED", "FAILED", "EXPIRED"] as const;

export interface HandlerDeps {
  fx: Fx;
  platforms: PlatformDirectory;
  lookups: Lookups;
  withdrawals: ReturnType<typeof createWithdrawals>;
  quotes: QuoteLifecycle;
}

/** QuotesFxService: proto ↔ domain only. */
/** The incoming UMA payment RPCs are served by handlers/incoming.ts. */
export function createQuotesFxHandler(deps: HandlerDeps): Omit<ServiceImpl<typeof QuotesFxService>, "receiveUmaPayment" | "approveIncomingPayment" | "rejectIncomingPayment"> {
  return {
    async listExchangeRates(req) {
      const facts = await deps.platforms.facts(req.platformId);
      const rates = await deps.fx.listExchangeRates(req.platformId, facts, {
        sourceCurrency: req.sourceCurrency,
        destinationCurrencies: req.destinationCurrencies,
        sendingAmount: req.sendingAmount > 0n ? req.sendingAmount : undefined,
      });
      return {
        rates: rates.map((r) => ({
          sourceCurrency: currencyMsg(r.source),
          destinationCurrency: currencyMsg(r.destination),
          exchangeRate: r.exchangeRate.toString(),
          sendingAmount: r.sendingAmount,
          receivingAmount: r.receivingAmount,
          feesIncluded: r.feesIncluded,
          updatedAt: timestampFromDate(r.updatedAt),
          destinationPaymentRail: r.destinationPaymentRail,
          minSendingAmount: r.minSendingAmount,
          maxSendingAmount: r.maxSendingAmount,
          fixedFees: r.fixedFees,
        })),
      };
    },

    async lookupUmaReceiver(req) {
      const lookup = await deps.lookups.lookupUma(req.platformId, req.receiverUmaAddress, { customerId: req.customerId, senderUmaAddress: req.senderUmaAddress });
      return { lookup: lookupMsg(lookup) };
    },

    async lookupExternalAccountReceiver(req) {
      const lookup = await deps.lookups.lookupExternalAccount(req.platformId, req.accountId, { customerId: req.customerId, senderUmaAddress: req.senderUmaAddress });
      return { lookup: lookupMsg(lookup) };
    },

    async estimateWithdrawalFee(req) {
      const e = await deps.withdrawals.estimate(req.platformId, {
        internalAccountId: req.internalAccountId,
        currency: req.currency,
        cryptoNetwork: req.cryptoNetwork,
        amount: req.amount,
        destinationAddress: req.destinationAddress,
      });
      return e;
    },

    async createQuote(req) {
      const request: QuoteRequest = { ...quoteRequestFields(req), agentId: req.agentId, actingCustomerId: req.actingCustomerId };
      const r = await deps.quotes.create(req.platformId, request, req.idempotencyKey);
      return { quote: quoteMsg(r.quote), replayed: r.replayed };
    },

    async listQuotes(req) {
      if (req.status && !(QUOTE_STATUSES as readonly string[]).includes(req.status)) {
        throw errors.invalidInput([{ field: "status", reason: `must be one of ${QUOTE_STATUSES.join(", ")}` }]);
      }
      const page = await deps.quotes.list(
        {
          platformId: req.platformId,
          customerId: req.customerId || undefined,
          status: (req.status || undefined) as (typeof QUOTE_STATUSES)[number] | undefined,
          createdAfter: req.createdAfter ? timestampDate(req.createdAfter) : undefined,
          createdBefore: req.createdBefore ? timestampDate(req.createdBefore) : undefined,
        },
        { limit: req.page?.limit || undefined, cursor: req.page?.cursor || undefined },
      );
      return { quotes: page.data.map(quoteMsg), pageInfo: pageInfo(page) };
    },

    async listUmaProviders(req) {
      const facts = await deps.platforms.facts(req.platformId);
      const page = listUmaProviders(facts, { countryCode: req.countryCode, currencyCode: req.currencyCode, limit: req.page?.limit || undefined, cursor: req.page?.cursor || undefined });
      return {
        providers: page.data.map((p) => ({
          name: p.name,
          domain: p.domain,
          supportedRegions: p.supportedRegions,
          supportedCurrencies: p.supportedCurrencies.map((c) => currencyMsg(findCurrency(c)!)),
          allowListStatus: true,
        })),
        pageInfo: pageInfo(page),
      };
    },

    async getQuote(req) {
      return { quote: quoteMsg(await deps.quotes.get(req.platformId, req.quoteId, req.agentId)) };
    },

    async executeQuote(req) {
      const r = await deps.quotes.execute(req.platformId, req.quoteId, { idempotencyKey: req.idempotencyKey, requestId: req.requestId, signature: req.signature, agentId: req.agentId });
      return { quote: quoteMsg(r.quote), replayed: r.replayed };
    },

    async authorizeQuote(req) {
      return { quote: quoteMsg(await deps.quotes.authorize(req.platformId, req.quoteId, req.code)) };
    },

    async resendQuoteAuthorization(req) {
      await deps.quotes.resendAuthorization(req.platformId, req.quoteId);
      return {};
    },

    async sendSandboxFunding(req) {
      const r = await deps.quotes.sendSandboxFunding(req.platformId, req.quoteId, { currencyCode: req.currencyCode, amount: req.amount, idempotencyKey: req.idempotencyKey });
      return {
        transactionId: r.quote.transactionId,
        quote: quoteMsg(r.quote),
        replayed: r.replayed,
        transaction: r.transaction ? fromJson(TransactionSchema, r.transaction as JsonValue) : undefined,
      };
    },
  };
}
