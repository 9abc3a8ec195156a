import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createRouterTransport, type ServiceImpl } from "@connectrpc/connect";
import { AppError, appErrorInterceptor, errors } from "@corridor/kit";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { CustomersKycService } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { QuotesFxService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import { describe, expect, it } from "vitest";
import { customerDirectory } from "../src/clients/customers.js";
import { ledgerClients } from "../src/clients/ledger.js";
import { platformEnvironment, sandboxClock } from "../src/clients/platforms.js";
import { quotesClients } from "../src/clients/quotes.js";
import { isRefusal } from "../src/domain/execution.js";
import type { QuoteRequest } from "../src/domain/model.js";

// The clients against the other services' real contracts, served by in-memory Connect fakes with
// the host's error interceptor (so refusals travel as they do between processes).

/** A transport to a fake of `service` that implements only the methods a test needs. */
const fake =
  <S extends DescService>(service: S, impl: Partial<ServiceImpl<S>>) =>
  () =>
    createRouterTransport((router) => router.service(service, impl), { router: { interceptors: [appErrorInterceptor] } });

describe("ledger client", () => {
  it("passes the agent, its customer and the derived key on transfers; a refusal comes back as the same AppError, an outage as no refusal", async () => {
    const seen: unknown[] = [];
    let outage = false;
    const { ledger, accounts } = ledgerClients(
      fake(LedgerService, {
          async transferOut(req) {
            seen.push(req.transfer);
            if (outage) throw new ConnectError("upstream down", Code.Unavailable);
            return { result: { transaction: { id: "Transaction:1", status: "PENDING", agentId: req.transfer!.agentId } } };
          },
          async transferIn() {
            throw new AppError("INVALID", "INSUFFICIENT_BALANCE", "too little", { available: 1 });
          },
          async getInternalAccount(req) {
            if (req.accountId !== "InternalAccount:mine") throw errors.notFound("InternalAccount", req.accountId);
            return { account: { id: req.accountId, customerId: "Customer:c", currency: { code: "USD" } } };
          },
          async getExternalAccount(req) {
            if (req.owner !== "CUSTOMER" || req.customerId !== "Customer:c") throw errors.notFound("ExternalAccount", req.accountId);
            return { account: { id: req.accountId, customerId: req.customerId, currency: "USD" } };
          },
        }),
    );
    const input = { direction: "OUT" as const, platformId: "P", agentId: "Agent:a", customerId: "Customer:c", sourceAccountId: "s", destinationAccountId: "d", amount: 5n, description: "", idempotencyKey: "agent-action/AgentAction:x" };
    const t = await ledger.transfer(input);
    expect(t).toMatchObject({ id: "Transaction:1", status: "PENDING", agentId: "Agent:a" });
    expect(seen[0]).toMatchObject({ agentId: "Agent:a", customerId: "Customer:c", idempotencyKey: "agent-action/AgentAction:x", amount: 5n });

    const refusal = await ledger.transfer({ ...input, direction: "IN" }).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ outcome: "INVALID", code: "INSUFFICIENT_BALANCE", details: { available: 1 } });
    expect(isRefusal(refusal)).toBe(true);

    outage = true;
    const down = await ledger.transfer(input).catch((e: unknown) => e);
    expect(down).not.toBeInstanceOf(AppError);
    expect(isRefusal(down)).toBe(false);

    expect(await accounts.internalAccount("P", "InternalAccount:mine")).toEqual({ id: "InternalAccount:mine", customerId: "Customer:c", currency: "USD" });
    expect(await accounts.internalAccount("P", "InternalAccount:other")).toBeUndefined();
    expect(await accounts.externalAccount("P", "ExternalAccount:e", "Customer:c")).toMatchObject({ customerId: "Customer:c" });
    expect(await accounts.externalAccount("P", "ExternalAccount:e", "Customer:z")).toBeUndefined();
  });
});

describe("quotes-fx client", () => {
  it("creates quotes for the agent and its customer without executing them, and reads rates", async () => {
    let created: unknown;
    const { quotes, rates } = quotesClients(
      fake(QuotesFxService, {
          async createQuote(req) {
            created = req;
            return {
              quote: {
                id: "Quote:q",
                status: "PENDING",
                agentId: req.agentId,
                source: { sourceType: "ACCOUNT", accountId: req.source!.accountId, customerId: req.actingCustomerId },
                sendingCurrency: { code: "USD" },
                receivingCurrency: { code: "EUR" },
                totalSendingAmount: 1085n,
                totalReceivingAmount: 1000n,
                expiresAt: timestampFromDate(new Date("2026-11-23T12:05:00Z")),
                transactionId: "Transaction:t",
              },
            };
          },
          async getQuote(req) {
            if (req.agentId !== "Agent:a") throw new AppError("NOT_FOUND", "QUOTE_NOT_FOUND", "no");
            return { quote: { id: req.quoteId } };
          },
          async listExchangeRates(req) {
            return { rates: req.destinationCurrencies.includes("EUR") ? [{ destinationCurrency: { code: "EUR" }, exchangeRate: "1.085" }] : [] };
          },
        }),
    );
    const request: QuoteRequest = {
      source: { sourceType: "ACCOUNT", accountId: "InternalAccount:i", customerId: "", currency: "" },
      destination: { destinationType: "ACCOUNT", accountId: "ExternalAccount:e", paymentRail: "SEPA", umaAddress: "", currency: "" },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 1085n,
      lookupId: "",
      immediatelyExecute: false,
      description: "",
      purposeOfPayment: "",
      senderCustomerInfo: {},
      counterpartyInformation: {},
    };
    const q = await quotes.create({ platformId: "P", agentId: "Agent:a", actingCustomerId: "Customer:c", idempotencyKey: "agent/Agent:a/k", request });
    expect(created).toMatchObject({ platformId: "P", agentId: "Agent:a", actingCustomerId: "Customer:c", idempotencyKey: "agent/Agent:a/k", immediatelyExecute: false });
    expect(q).toMatchObject({ id: "Quote:q", sourceCustomerId: "Customer:c", sendingCurrency: "USD", totalReceivingAmount: 1000n, transactionId: "Transaction:t" });
    expect(q.snapshot.length).toBeGreaterThan(0);
    expect(await quotes.get("P", "Quote:q", "Agent:other")).toBeUndefined();
    expect(await rates.rate("P", "USD", "EUR")).toBe("1.085");
    await expect(rates.rate("P", "USD", "JPY")).rejects.toMatchObject({ code: "CURRENCY_NOT_CONVERTIBLE" });
  });
});

describe("customers, platforms and the sandbox clock", () => {
  it("reads customers (404 → none), environments and sandbox time", async () => {
    const customers = customerDirectory(
      fake(CustomersKycService, {
          async getCustomerSummary(req) {
            if (req.customerId !== "Customer:c") throw errors.notFound("Customer", req.customerId);
            return { customer: { customerId: req.customerId, platformId: req.platformId, platformCustomerId: "pc-1", isDeleted: false } };
          },
        }),
    );
    expect(await customers.customer("P", "Customer:c")).toEqual({ platformCustomerId: "pc-1", isDeleted: false });
    expect(await customers.customer("P", "Customer:x")).toBeUndefined();

    const environment = platformEnvironment(
      fake(AuthSessionsService, {
          async getPlatform(req) {
            return { platform: { id: req.platformId, environment: req.platformId === "prod" ? Environment.PRODUCTION : Environment.SANDBOX } };
          },
        }),
    );
    expect(await environment("prod")).toBe("PRODUCTION");
    expect(await environment("sbx")).toBe("SANDBOX");

    const now = sandboxClock(
      fake(SandboxService, {
          async getClock() {
            return { now: timestampFromDate(new Date("2027-01-01T00:00:00Z")), offsetSeconds: 100n };
          },
        }),
    );
    expect((await now("sbx")).toISOString()).toBe("2027-01-01T00:00:00.000Z");
  });
});
