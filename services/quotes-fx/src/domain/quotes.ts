import { AppError, MAX_AMOUNT, errors, isId, type FieldError, type QuoteRequestFields } from "@corridor/kit";
import { findCurrency, type Currency } from "./currencies.js";
import type { Fx } from "./fx.js";
import type { Lookups } from "./lookups.js";
import type { InternalAccountView, LedgerPort, PlatformDirectory, PlatformFacts, ReceiverLookup } from "./ports.js";
import { priceQuote, type AmountLimits, type LockedSide, type Pricing } from "./pricing.js";

export const PURPOSES = [
  "GIFT", "SELF", "GOODS_OR_SERVICES", "EDUCATION", "HEALTH_OR_MEDICAL", "REAL_ESTATE_PURCHASE",
  "TAX_PAYMENT", "LOAN_PAYMENT", "UTILITY_BILL", "DONATION", "TRAVEL", "OTHER",
] as const;

/** The quote request's fields (the kit's QuoteRequestFields, shared with agents) and who asks. */
export interface QuoteRequest extends QuoteRequestFields {
  /** Agent:<uuidv7> when an agent creates the quote (through the agents service); "" otherwise. */
  agentId: string;
  /**
   * Customer:<uuidv7> the agent acts for; "" for the platform's own calls. When set, the source must
   * be an internal account (not an embedded wallet) of this customer and an external destination
   * must be this customer's too: another customer's record is 404, as if it did not exist.
   */
  actingCustomerId: string;
}

/** A request that passed every check, priced: what part 2 persists with its PENDING transaction. */
export interface PreparedQuote {
  request: QuoteRequest;
  side: LockedSide;
  sending: Currency;
  receiving: Currency;
  sourceAccount?: InternalAccountView;
  /** Customer:<uuidv7> of the sender ("" for platform-owned sources). */
  customerId: string;
  lookup?: ReceiverLookup;
  /** True when the source is an EMBEDDED_WALLET (execution needs a signed payloadToSign). */
  needsSignature: boolean;
  pricing: Pricing;
}

/**
 * POST /quotes up to (and excluding) persistence: shape checks (400 INVALID_INPUT naming every
 * field), the accounts and the lookup (404), the payer and counterparty data, then pricing
 * (400 AMOUNT_OUT_OF_RANGE against the platform's per-currency limits and the receiver's).
 */
export function createQuotePreparation(deps: { fx: Fx; platforms: PlatformDirectory; ledger: LedgerPort; lookups: Lookups }) {
  return async function prepare(platformId: string, req: QuoteRequest): Promise<PreparedQuote> {
    const errs: FieldError[] = [];
    const { source, destination } = req;
    if (source.sourceType !== "ACCOUNT" && source.sourceType !== "REALTIME_FUNDING") errs.push({ field: "source.sourceType", reason: "must be ACCOUNT or REALTIME_FUNDING" });
    if (source.sourceType === "ACCOUNT" && !isId("InternalAccount", source.accountId)) errs.push({ field: "source.accountId", reason: "must be an InternalAccount id" });
    if (source.sourceType === "REALTIME_FUNDING") {
      if (!findCurrency(source.currency)) errs.push({ field: "source.currency", reason: "must be a known currency code" });
      if (!isId("Customer", source.customerId)) errs.push({ field: "source.customerId", reason: "must be a Customer id" });
      if (req.immediatelyExecute) errs.push({ field: "immediatelyExecute", reason: "is not supported for REALTIME_FUNDING sources: pay the returned instructions" });
    }
    if (source.customerId && !isId("Customer", source.customerId)) errs.push({ field: "source.customerId", reason: "must be a Customer id" });
    const acting = req.actingCustomerId;
    if (acting && !isId("Customer", acting)) errs.push({ field: "actingCustomerId", reason: "must be a Customer id" });
    if (req.agentId && !isId("Agent", req.agentId)) errs.push({ field: "agentId", reason: "must be an Agent id" });
    // An agent always acts for one customer: its quotes are customer-scoped (docs/agents.md).
    if (req.agentId && !acting) errs.push({ field: "actingCustomerId", reason: "is required with agentId" });
    // An agent spends the customer's balance; it cannot hand out funding instructions.
    if (acting && source.sourceType === "REALTIME_FUNDING") errs.push({ field: "source.sourceType", reason: "must be ACCOUNT for an agent (an agent spends the customer's balance)" });
    if (destination.destinationType === "ACCOUNT") {
      // A quote pays out over a rail (issue 5: "external account with paymentRail"); moving money
      // between a customer's own internal accounts is not a quote the ledger can settle.
      if (!isId("ExternalAccount", destination.accountId)) {
        errs.push({ field: "destination.accountId", reason: "must be an ExternalAccount id (quotes pay out to external accounts or UMA addresses)" });
      }
    } else if (destination.destinationType === "UMA_ADDRESS") {
      if (!req.lookupId) errs.push({ field: "lookupId", reason: "is required for UMA_ADDRESS destinations (look the receiver up first)" });
    } else {
      errs.push({ field: "destination.destinationType", reason: "must be ACCOUNT or UMA_ADDRESS" });
    }
    if (req.lookupId && !isId("Lookup", req.lookupId)) errs.push({ field: "lookupId", reason: "must be a Lookup id" });
    if (req.lockedCurrencySide !== "SENDING" && req.lockedCurrencySide !== "RECEIVING") errs.push({ field: "lockedCurrencySide", reason: "must be SENDING or RECEIVING" });
    if (req.lockedCurrencyAmount < 1n || req.lockedCurrencyAmount > MAX_AMOUNT) errs.push({ field: "lockedCurrencyAmount", reason: `must be 1 to ${MAX_AMOUNT}` });
    if (req.purposeOfPayment && !(PURPOSES as readonly string[]).includes(req.purposeOfPayment)) errs.push({ field: "purposeOfPayment", reason: `must be one of ${PURPOSES.join(", ")}` });
    if (req.description.length > 1000) errs.push({ field: "description", reason: "must be at most 1000 characters" });
    if (errs.length) throw errors.invalidInput(errs);

    // Remote reads, none under a transaction. The two accounts are asked for together (two RPCs
    // in flight, not one after the other); their answers are checked below in the order the
    // errors have always been reported (the source's first).
    const facts = await deps.platforms.facts(platformId);
    const sourceRead = source.sourceType === "ACCOUNT" ? answeredLater(deps.ledger.internalAccount(platformId, source.accountId)) : undefined;
    const destinationRead = destination.destinationType === "ACCOUNT" ? answeredLater(deps.ledger.externalAccount(platformId, destination.accountId)) : undefined;
    let sourceAccount: InternalAccountView | undefined;
    let sendingCode = source.currency;
    let customerId = source.customerId;
    if (source.sourceType === "ACCOUNT") {
      // Agent calls: the customer named must be the one acted for (another customer does not exist here).
      if (acting && source.customerId && source.customerId !== acting) throw errors.notFound("Customer", source.customerId);
      sourceAccount = await sourceRead;
      // Another customer's account is answered exactly like one that does not exist.
      if (!sourceAccount || (acting && sourceAccount.customerId !== acting)) throw errors.notFound("InternalAccount", source.accountId);
      if (acting && sourceAccount.type === "EMBEDDED_WALLET") {
        throw errors.badRequest(
          "AGENT_WALLET_SOURCE_NOT_SUPPORTED",
          "An agent cannot pay from an embedded wallet (its payments need the customer's wallet signature); use an internal account",
          { accountId: source.accountId },
        );
      }
      if (source.customerId && source.customerId !== sourceAccount.customerId) {
        throw errors.invalidInput([{ field: "source.customerId", reason: "is not the owner of source.accountId" }]);
      }
      if (sourceAccount.type === "EMBEDDED_WALLET" && req.immediatelyExecute) {
        throw errors.invalidInput([{ field: "immediatelyExecute", reason: "is not supported for EMBEDDED_WALLET sources: create with false, then execute with a signature" }]);
      }
      sendingCode = sourceAccount.currency;
      customerId = sourceAccount.customerId;
    }

    let lookup: ReceiverLookup | undefined;
    let receivingCode = "";
    // Counterparty data the destination account already holds; what the request gives wins.
    let counterparty: Record<string, string> = { ...req.counterpartyInformation };
    const receiverLimits: AmountLimits[] = [];
    if (req.lookupId) {
      lookup = await deps.lookups.usable(platformId, req.lookupId);
      // A lookup made for another customer is not the agent's to use.
      if (acting && lookup.customerId && lookup.customerId !== acting) throw errors.notFound("Lookup", req.lookupId);
    }
    if (destination.destinationType === "UMA_ADDRESS") {
      if (lookup!.kind !== "UMA") throw errors.invalidInput([{ field: "lookupId", reason: "is not a UMA receiver lookup" }]);
      if (destination.umaAddress && destination.umaAddress.toLowerCase() !== lookup!.receiverUmaAddress) {
        throw errors.invalidInput([{ field: "destination.umaAddress", reason: "differs from the lookup's receiverUmaAddress" }]);
      }
      const offers = lookup!.supportedCurrencies;
      const offer = destination.currency ? offers.find((o) => o.currencyCode === destination.currency) : offers.length === 1 ? offers[0] : undefined;
      if (!offer) {
        throw errors.invalidInput([{ field: "destination.currency", reason: `must be one of the lookup's currencies: ${offers.map((o) => o.currencyCode).join(", ")}` }]);
      }
      receivingCode = offer.currencyCode;
      receiverLimits.push({ min: offer.min, max: offer.max });
    } else {
      const id = destination.accountId;
      const account = await destinationRead;
      // Agent calls pay only to the customer's own external accounts (the platform's are not theirs either).
      if (!account || (acting && account.customerId !== acting)) throw errors.notFound("ExternalAccount", id);
      receivingCode = account.currency;
      counterparty = { ...counterpartyFromBeneficiary(account.beneficiary), ...counterparty };
      if (lookup) {
        if (lookup.kind !== "EXTERNAL_ACCOUNT" || lookup.accountId !== id) throw errors.invalidInput([{ field: "lookupId", reason: "is not a lookup of destination.accountId" }]);
        const offer = lookup.supportedCurrencies.find((o) => o.currencyCode === receivingCode);
        if (offer) receiverLimits.push({ min: offer.min, max: offer.max });
      }
    }

    // Data the receiver asked for (mandatory fields of the lookup) and the platform's counterparty fields.
    const missing: FieldError[] = [];
    for (const f of lookup?.requiredPayerDataFields ?? []) {
      if (f.mandatory && !req.senderCustomerInfo[f.name]) missing.push({ field: `senderCustomerInfo.${f.name}`, reason: "is required by the receiver lookup" });
    }
    const receivingConfig = facts.supportedCurrencies.find((c) => c.currencyCode === receivingCode);
    for (const f of receivingConfig?.requiredCounterpartyFields ?? []) {
      if (f.mandatory && !counterparty[f.name]) {
        missing.push({ field: `counterpartyInformation.${f.name}`, reason: `is required by the platform's configuration for ${receivingCode} (and the destination account's beneficiary does not give it)` });
      }
    }
    if (missing.length) {
      // Grid's code for user data a payment needs and the request lacks; the fields as INVALID_INPUT lists them.
      const { message, details } = errors.invalidInput(missing);
      throw new AppError("INVALID", "MISSING_MANDATORY_USER_INFO", message, details);
    }

    const sending = findCurrency(sendingCode);
    const receiving = findCurrency(receivingCode);
    if (!sending || !receiving) {
      const code = !sending ? sendingCode : receivingCode;
      throw new AppError("INVALID", "INVALID_CURRENCY", `${code} cannot be quoted`, { currency: code });
    }
    // Every customer gets an embedded wallet (decisions §9) whatever the platform lists, so sending
    // from one is allowed even when its currency is not among supportedCurrencies: then only the
    // API's own bounds apply. Listing the currency sets the platform's limits for it as usual.
    const sendingConfig =
      facts.supportedCurrencies.find((c) => c.currencyCode === sending.code) ??
      (sourceAccount?.type === "EMBEDDED_WALLET" ? { currencyCode: sending.code, minAmount: 1n, maxAmount: MAX_AMOUNT, requiredCounterpartyFields: [] } : undefined);
    if (!sendingConfig) throw new AppError("INVALID", "INVALID_CURRENCY", `The platform does not support sending ${sending.code}`, { currency: sending.code });
    requireTransactionType(sendingConfig, "OUTGOING");

    // A production payout needs a connector the operator bound to its rail: without one the quote is
    // refused (400 PAYMENT_RAIL_NOT_AVAILABLE) before it is priced (and before any rate is asked for).
    if (facts.environment === "PRODUCTION") {
      await deps.ledger.checkPaymentRail(platformId, receiving.code, { externalAccountId: destination.destinationType === "ACCOUNT" ? destination.accountId : "", paymentRail: destination.paymentRail });
    }
    const side = req.lockedCurrencySide as LockedSide;
    const pricing = priceQuote({
      side,
      amount: req.lockedCurrencyAmount,
      sending,
      receiving,
      ...(await ratesAndFees(deps.fx, platformId, facts, sending.code, receiving.code)),
      limits: {
        sending: { min: sendingConfig.minAmount, max: sendingConfig.maxAmount },
        receiving: intersect([...(receivingConfig ? [{ min: receivingConfig.minAmount, max: receivingConfig.maxAmount }] : []), ...receiverLimits]),
      },
    });
    return { request: { ...req, counterpartyInformation: counterparty }, side, sending, receiving, sourceAccount, customerId, lookup, needsSignature: sourceAccount?.type === "EMBEDDED_WALLET", pricing };
  };
}

/**
 * A read started before its answer is needed: a failure is kept for whoever awaits the promise,
 * and is not reported as unhandled when an earlier check threw and nobody does.
 */
export function answeredLater<T>(read: Promise<T>): Promise<T> {
  read.catch(() => undefined);
  return read;
}

/** The market rate and the fee schedule, asked for together. */
async function ratesAndFees(fx: Fx, platformId: string, facts: PlatformFacts, from: string, to: string) {
  const fees = answeredLater(fx.fees(platformId, from, to));
  const marketRate = await fx.marketRate(platformId, facts, from, to);
  return { marketRate, fees: await fees };
}

function intersect(limits: AmountLimits[]): AmountLimits | undefined {
  if (!limits.length) return undefined;
  return limits.reduce((a, b) => ({ min: a.min > b.min ? a.min : b.min, max: a.max < b.max ? a.max : b.max }));
}

/**
 * 400 TRANSACTION_TYPE_NOT_ENABLED when the platform's configuration of this currency does not
 * enable the direction (a currency it does not list, or a config without the list, restricts
 * nothing here: INVALID_CURRENCY and the defaults decide those).
 */
export function requireTransactionType(config: { currencyCode: string; enabledTransactionTypes?: string[] } | undefined, type: "OUTGOING" | "INCOMING"): void {
  if (!config?.enabledTransactionTypes || config.enabledTransactionTypes.includes(type)) return;
  throw new AppError(
    "INVALID",
    "TRANSACTION_TYPE_NOT_ENABLED",
    `${type} payments in ${config.currencyCode} are not enabled in the platform's configuration (supportedCurrencies[].enabledTransactionTypes)`,
    { currency: config.currencyCode, transactionType: type },
  );
}

/** The spec's beneficiary fields under the counterparty field names platforms configure. */
const BENEFICIARY_FIELDS: readonly [string, string][] = [
  ["FULL_NAME", "fullName"],
  ["BIRTH_DATE", "birthDate"],
  ["NATIONALITY", "nationality"],
];

/**
 * Counterparty information an external account's beneficiary already gives (FULL_NAME,
 * BIRTH_DATE, NATIONALITY), so a platform need not send again what it registered with the account.
 */
export function counterpartyFromBeneficiary(beneficiary: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  // A BUSINESS beneficiary's name is its legalName.
  const source = beneficiary?.beneficiaryType === "BUSINESS" ? { fullName: beneficiary.legalName } : beneficiary;
  for (const [field, key] of BENEFICIARY_FIELDS) {
    const v = source?.[key];
    if (typeof v === "string" && v.trim()) out[field] = v.trim();
  }
  return out;
}
