import { MAX_AMOUNT, errors, newId, type Clock, type FieldError } from "@corridor/kit";
import { findCurrency } from "./currencies.js";
import type { Fx } from "./fx.js";
import { platformNowOf, type PlatformClock } from "./platform-clock.js";
import type { LedgerPort, LookupStore, PlatformDirectory, PlatformFacts, QuoteLedgerPort, ReceiverLookup } from "./ports.js";
import { quotedRate } from "./pricing.js";
import { SANDBOX_RECEIVER_LIMITS, parseUmaAddress, sandboxReceiver, umaNotAvailable } from "./uma.js";

export interface LookupDeps {
  clock: Clock;
  /**
   * The time a platform's lookups expire by: its sandbox clock on a sandbox platform, as its quotes
   * (without it, the service clock). The ledger expires a lookup's CREATED transaction by the
   * platform's time, so a lookup stamped with the service clock on an advanced sandbox clock would be
   * due the moment it is made.
   */
  platformClock?: PlatformClock;
  fx: Fx;
  platforms: PlatformDirectory;
  ledger: LedgerPort;
  store: LookupStore;
  /** The ledger's lookup transactions (CreateLookupTransaction). */
  transactions: Pick<QuoteLedgerPort, "createLookupTransaction">;
  /** How long a lookup stays usable by a quote (a quote's lifetime, 5 minutes). */
  ttlMs: number;
}

export interface Sender {
  customerId: string;
  senderUmaAddress: string;
}

/**
 * The sending currency a lookup's estimates are from: the platform's first supported currency
 * (USD for a new platform). A quote re-prices from its real source account anyway.
 */
export function primaryCurrency(facts: PlatformFacts): string {
  return facts.supportedCurrencies[0]?.currencyCode ?? "USD";
}

/** Receiver lookups (decisions §5). Sandbox UMA receivers are simulated; real UMA resolution is not built yet (501). */
export function createLookups(deps: LookupDeps) {
  function checkSender(sender: Sender, errs: FieldError[]): void {
    if (!sender.customerId && !sender.senderUmaAddress) errs.push({ field: "customerId", reason: "customerId or senderUmaAddress is required" });
    if (sender.senderUmaAddress && !parseUmaAddress(sender.senderUmaAddress)) errs.push({ field: "senderUmaAddress", reason: "must be a UMA address such as $alice@example.com" });
  }

  async function estimate(platformId: string, facts: PlatformFacts, receiving: string): Promise<string> {
    const sending = primaryCurrency(facts);
    const market = await deps.fx.marketRate(platformId, facts, sending, receiving);
    return quotedRate(market, findCurrency(sending)!, findCurrency(receiving)!, await deps.fx.fees(platformId, sending, receiving)).toString();
  }

  /**
   * Stores the lookup. A lookup made for a customer (customerId given) first opens its ledger
   * transaction in status CREATED (spec: "initial lookup created"), keyed by the lookup's id: a quote
   * made from the lookup adopts it (PENDING), else it ends EXPIRED with the lookup. A lookup made
   * only by senderUmaAddress names no customer and opens none (docs/quotes.md). Should storing the
   * lookup fail after the ledger call, its CREATED transaction simply expires with the lookup.
   */
  const platformNow = platformNowOf(deps.clock, deps.platformClock);

  async function save(base: Omit<ReceiverLookup, "id" | "createdAt" | "expiresAt">): Promise<ReceiverLookup> {
    const now = await platformNow(base.platformId);
    const lookup: ReceiverLookup = { ...base, id: newId("Lookup"), createdAt: now, expiresAt: new Date(now.getTime() + deps.ttlMs) };
    if (lookup.customerId) {
      await deps.transactions.createLookupTransaction({
        platformId: lookup.platformId,
        lookupId: lookup.id,
        customerId: lookup.customerId,
        destination: { kind: lookup.kind === "UMA" ? "UMA_ADDRESS" : "EXTERNAL_ACCOUNT", accountId: lookup.accountId, umaAddress: lookup.receiverUmaAddress },
        sendingCurrency: lookup.sendingCurrency,
        receivingCurrency: lookup.supportedCurrencies[0]!.currencyCode,
        expiresAt: lookup.expiresAt,
      });
    }
    await deps.store.insert(lookup);
    return lookup;
  }

  return {
    async lookupUma(platformId: string, receiverUmaAddress: string, sender: Sender): Promise<ReceiverLookup> {
      const errs: FieldError[] = [];
      const parsed = parseUmaAddress(receiverUmaAddress);
      if (!parsed) errs.push({ field: "receiverUmaAddress", reason: "must be a UMA address such as $alice@example.com" });
      checkSender(sender, errs);
      if (errs.length) throw errors.invalidInput(errs);
      const facts = await deps.platforms.facts(platformId);
      if (facts.environment !== "SANDBOX") throw umaNotAvailable("resolving UMA receivers");
      const receiver = sandboxReceiver(parsed!.user, parsed!.domain);
      if (!receiver) throw errors.notFound("Receiver", receiverUmaAddress);
      const sending = primaryCurrency(facts);
      return save({
        platformId,
        kind: "UMA",
        receiverUmaAddress: `$${parsed!.user}@${parsed!.domain}`,
        accountId: "",
        customerId: sender.customerId,
        senderUmaAddress: sender.senderUmaAddress,
        sendingCurrency: sending,
        supportedCurrencies: [
          {
            currencyCode: receiver.currencyCode,
            estimatedExchangeRate: await estimate(platformId, facts, receiver.currencyCode),
            ...SANDBOX_RECEIVER_LIMITS,
          },
        ],
        requiredPayerDataFields: receiver.requiredPayerDataFields,
        scenario: receiver.scenario,
      });
    },

    async lookupExternalAccount(platformId: string, accountId: string, sender: Sender): Promise<ReceiverLookup> {
      const errs: FieldError[] = [];
      checkSender(sender, errs);
      if (errs.length) throw errors.invalidInput(errs);
      const account = await deps.ledger.externalAccount(platformId, accountId);
      if (!account) throw errors.notFound("ExternalAccount", accountId);
      const facts = await deps.platforms.facts(platformId);
      const configured = facts.supportedCurrencies.find((c) => c.currencyCode === account.currency);
      return save({
        platformId,
        kind: "EXTERNAL_ACCOUNT",
        receiverUmaAddress: "",
        accountId: account.id,
        customerId: sender.customerId,
        senderUmaAddress: sender.senderUmaAddress,
        sendingCurrency: primaryCurrency(facts),
        supportedCurrencies: [
          {
            currencyCode: account.currency,
            estimatedExchangeRate: await estimate(platformId, facts, account.currency),
            min: configured?.minAmount ?? 1n,
            max: configured?.maxAmount ?? MAX_AMOUNT,
          },
        ],
        // A bank payout asks nothing of the sender beyond what the platform's config requires (checked on the quote).
        requiredPayerDataFields: [],
        scenario: "",
      });
    },

    /** A lookup a quote may use: this platform's and not expired (404 LOOKUP_REQUEST_NOT_FOUND, 400 LOOKUP_EXPIRED). */
    async usable(platformId: string, lookupId: string): Promise<ReceiverLookup> {
      const lookup = await deps.store.get(platformId, lookupId);
      if (!lookup) throw errors.notFound("Lookup", lookupId);
      if (lookup.expiresAt.getTime() <= (await platformNow(platformId)).getTime()) {
        throw errors.badRequest("LOOKUP_EXPIRED", `Lookup ${lookupId} expired at ${lookup.expiresAt.toISOString()}; look the receiver up again`, { lookupId });
      }
      return lookup;
    },
  };
}

export type Lookups = ReturnType<typeof createLookups>;
