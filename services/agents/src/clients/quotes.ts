import { toBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { AppError } from "@corridor/kit";
import { QuoteSchema, type Quote } from "@corridor/proto/corridor/quotes_fx/v1/quote_pb.js";
import { QuotesFxService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import type { QuoteFacts } from "../domain/model.js";
import type { QuotesPort, RatesPort } from "../domain/ports.js";
import { call, orNotFound } from "./errors.js";

export function quoteFacts(q: Quote): QuoteFacts {
  return {
    id: q.id,
    status: q.status,
    agentId: q.agentId,
    sourceType: q.source?.sourceType ?? "",
    sourceAccountId: q.source?.accountId ?? "",
    sourceCustomerId: q.source?.customerId ?? "",
    destinationAccountId: q.destination?.accountId ?? "",
    sendingCurrency: q.sendingCurrency?.code ?? "",
    receivingCurrency: q.receivingCurrency?.code ?? "",
    totalSendingAmount: q.totalSendingAmount,
    totalReceivingAmount: q.totalReceivingAmount,
    expiresAt: q.expiresAt ? timestampDate(q.expiresAt) : new Date(0),
    transactionId: q.transactionId,
    snapshot: toBinary(QuoteSchema, q),
  };
}

const answered = (q: Quote | undefined): QuoteFacts => {
  if (!q) throw new Error("quotes-fx answered without a quote");
  return quoteFacts(q);
};

/** quotes-fx on behalf of agents (agent_id and acting_customer_id set), and its exchange rates. */
export function quotesClients(transport: () => Transport): { quotes: QuotesPort; rates: RatesPort } {
  let client: Client<typeof QuotesFxService> | undefined;
  const fx = () => (client ??= createClient(QuotesFxService, transport()));
  return {
    quotes: {
      async create({ platformId, agentId, actingCustomerId, idempotencyKey, request: r }) {
        const res = await call(
          fx().createQuote({
            platformId,
            source: r.source,
            destination: r.destination,
            lockedCurrencySide: r.lockedCurrencySide,
            lockedCurrencyAmount: r.lockedCurrencyAmount,
            lookupId: r.lookupId,
            immediatelyExecute: r.immediatelyExecute,
            description: r.description,
            purposeOfPayment: r.purposeOfPayment,
            senderCustomerInfo: r.senderCustomerInfo,
            counterpartyInformation: r.counterpartyInformation,
            idempotencyKey,
            agentId,
            actingCustomerId,
          }),
        );
        return answered(res.quote);
      },
      async get(platformId, quoteId, agentId) {
        const q = (await orNotFound(fx().getQuote({ platformId, quoteId, agentId })))?.quote;
        return q && quoteFacts(q);
      },
      async execute({ platformId, quoteId, agentId, idempotencyKey }) {
        const res = await call(fx().executeQuote({ platformId, quoteId, agentId, idempotencyKey }));
        return answered(res.quote);
      },
    },
    rates: {
      async rate(platformId, from, to) {
        const res = await call(fx().listExchangeRates({ platformId, sourceCurrency: from, destinationCurrencies: [to] }));
        const rate = res.rates.find((r) => r.destinationCurrency?.code === to)?.exchangeRate;
        if (!rate) {
          throw new AppError("INVALID", "CURRENCY_NOT_CONVERTIBLE", `No exchange rate from ${from} to ${to}, so this amount cannot be counted against the policy`, { from, to });
        }
        return rate;
      },
    },
  };
}
