import { AppError, errors, newId } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScaPort } from "../src/domain/ports.js";
import { expectPublicError, startHarness, usdOnly, type Harness } from "./harness.js";

const PLATFORM = "Platform:sca-1";

/**
 * A quote that waits for strong customer authentication (docs/sca.md) and its ledger transaction:
 * both are PENDING_AUTHORIZATION, and POST /quotes/{id}/authorize moves the transaction (ledger)
 * and then the quote to PENDING. auth-sessions is a map here: the code "123456" authorizes, and an
 * authorized challenge answers authorized again (as ScaService does).
 */
describe("quote authorization and its ledger transaction", () => {
  let h: Harness;
  const customerId = newId("Customer");
  const usdAccount = newId("InternalAccount");
  const payee = newId("ExternalAccount");
  const authorized = new Set<string>();
  const sca: ScaPort = {
    async begin() {
      return { id: newId("ScaChallenge"), expiresAt: new Date(Date.UTC(2030, 0, 1)), factor: "SMS_OTP", availableFactors: ["SMS_OTP"], purpose: "TRANSFER" };
    },
    async authorize(_platformId, quoteId, code) {
      if (code !== "123456" && !authorized.has(quoteId)) throw new AppError("INVALID", "SCA_CODE_INVALID", "wrong code", { attemptsLeft: 4 });
      authorized.add(quoteId);
    },
    async resend() {
      throw errors.conflict("SCA_NOT_PENDING", "nothing to resend");
    },
  };

  beforeAll(async () => {
    h = await startHarness({ sca });
    h.platforms.set(PLATFORM, usdOnly());
    h.internal.set(usdAccount, { id: usdAccount, platformId: PLATFORM, customerId, type: "INTERNAL_FIAT", currency: "USD", available: 1_000_000n });
    h.external.set(payee, { id: payee, platformId: PLATFORM, customerId, status: "ACTIVE", currency: "EUR", accountType: "IBAN" });
  });
  afterAll(async () => h.close());

  const create = (over: Record<string, unknown> = {}) =>
    h.client.createQuote({
      platformId: PLATFORM,
      source: { sourceType: "ACCOUNT", accountId: usdAccount },
      destination: { destinationType: "ACCOUNT", accountId: payee },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 10_000n,
      counterpartyInformation: { FULL_NAME: "Grace Hopper" },
      ...over,
    });

  it("creates the quote and its ledger transaction PENDING_AUTHORIZATION; authorize moves the transaction, then the quote, to PENDING", async () => {
    const { quote } = await create();
    expect(quote!.status).toBe("PENDING_AUTHORIZATION");
    const tx = h.transactions.get(quote!.transactionId)!;
    expect(tx.status).toBe("PENDING_AUTHORIZATION");
    await expectPublicError(h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id }), "CONFLICT", "QUOTE_PENDING_AUTHORIZATION");
    expect(tx.executions).toBe(0);

    const done = await h.client.authorizeQuote({ platformId: PLATFORM, quoteId: quote!.id, code: "123456" });
    expect(done.quote!.status).toBe("PENDING");
    expect(tx.status).toBe("PENDING");
    const executed = await h.client.executeQuote({ platformId: PLATFORM, quoteId: quote!.id });
    expect(executed.quote!.status).toBe("PROCESSING");
  });

  it("a retry after the ledger moved but the quote did not (a lost answer) moves the quote", async () => {
    const { quote } = await create();
    const tx = h.transactions.get(quote!.transactionId)!;
    // An earlier call's ledger step happened (PENDING_AUTHORIZATION -> PENDING); its quote update did not.
    tx.status = "PENDING";
    const retried = await h.client.authorizeQuote({ platformId: PLATFORM, quoteId: quote!.id, code: "123456" });
    expect(retried.quote!.status).toBe("PENDING");
    expect(tx.status).toBe("PENDING");
  });

  it("a transaction that ended while the quote waited ends the quote: authorize answers 409 QUOTE_EXPIRED and the quote is EXPIRED", async () => {
    const { quote } = await create();
    const tx = h.transactions.get(quote!.transactionId)!;
    // The ledger expired it (its own sweep), before quotes-fx heard of it.
    tx.status = "EXPIRED";
    tx.failureReason = "QUOTE_EXPIRED";
    await expectPublicError(h.client.authorizeQuote({ platformId: PLATFORM, quoteId: quote!.id, code: "123456" }), "CONFLICT", "QUOTE_EXPIRED");
    expect((await h.client.getQuote({ platformId: PLATFORM, quoteId: quote!.id })).quote!.status).toBe("EXPIRED");
  });

  it("expiry of a waiting quote expires its PENDING_AUTHORIZATION transaction", async () => {
    const { quote } = await create();
    h.clock.advance(5 * 60_000 + 1);
    expect((await h.client.getQuote({ platformId: PLATFORM, quoteId: quote!.id })).quote!.status).toBe("EXPIRED");
    expect(h.transactions.get(quote!.transactionId)!.status).toBe("EXPIRED");
  });
});
