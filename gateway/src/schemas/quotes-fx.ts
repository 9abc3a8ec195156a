import { Type, type TSchema } from "typebox";
import { IdempotencyKeyHeader, Iso8601, ListEnvelope, Ref, pagingQuery } from "./common.js";

/** Schemas of the quotes-fx routes: exchange rates, receiver lookups, quotes and withdrawal fees. */

const Code = (description: string) => Type.String({ pattern: "^[A-Z]{3,5}$", description });
const Amount = (description: string) => Type.Integer({ minimum: 1, maximum: 9_000_000_000_000_000, description });

export const ExchangeRatesQuery = Type.Object({
  sourceCurrency: Code("Currency the sender pays in."),
  destinationCurrency: Type.Optional(Type.Array(Code("A currency to price against."), { maxItems: 50, description: "Repeatable; every known currency but the source when absent." })),
  sendingAmount: Type.Optional(
    Amount("The sending amount to price, minor units of sourceCurrency (default 10000): each rate shows what it delivers and its fees."),
  ),
});

const MinorUnits = (description: string, example: number) => Type.Integer({ minimum: 0, description, examples: [example] });

export const ExchangeRateSchema = Type.Object(
  {
    sourceCurrency: Ref("Currency", "The sending currency."),
    sendingAmount: MinorUnits("The sending amount priced, minor units of sourceCurrency: the one asked about, else 10000.", 10000),
    minSendingAmount: MinorUnits("Smallest sending amount the platform accepts in sourceCurrency (its supportedCurrencies minAmount; 1 when it lists none).", 100),
    maxSendingAmount: MinorUnits("Largest sending amount the platform accepts in sourceCurrency (its supportedCurrencies maxAmount; 9000000000000000 when it lists none).", 10000000),
    destinationCurrency: Ref("Currency", "The receiving currency."),
    destinationPaymentRail: Type.String({
      description: "The rail a payout in destinationCurrency goes by: ACH (USD), SEPA_INSTANT (EUR), FASTER_PAYMENTS (GBP), SPEI (MXN), PIX (BRL), UPI (INR), INSTAPAY (PHP), LIGHTNING (BTC), SPARK (USDC, USDT), else BANK_TRANSFER.",
      examples: ["SEPA_INSTANT"],
    }),
    receivingAmount: MinorUnits("What sendingAmount delivers, receiving minor units, fees taken (0 when the fees exceed it); a quote for it would match.", 9180),
    exchangeRate: Type.Number({ description: "Sending major units per one receiving major unit (markups included); a quote locks it.", examples: [1.0821] }),
    fees: Type.Object(
      {
        fixed: MinorUnits("The fixed fees, sending minor units: the service fixed fee plus the counterparty's fixed fee converted.", 37),
        total: MinorUnits("Every fee of sendingAmount, sending minor units (fixed plus the variable fee).", 47),
      },
      { additionalProperties: false, description: "Fees of sendingAmount." },
    ),
    feesIncluded: MinorUnits("Same as fees.total (kept for earlier integrations).", 47),
    updatedAt: Iso8601("When the rate was last refreshed."),
  },
  { additionalProperties: false, description: "An estimated rate for one currency corridor, with what a sending amount buys." },
);

export const ExchangeRateListSchema = Type.Object(
  { data: Type.Array(ExchangeRateSchema, { description: "One rate per destination currency." }) },
  { description: "Estimated exchange rates." },
);

export const ReceiverQuery = Type.Object({
  customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "The sending customer (this or senderUmaAddress)." })),
  senderUmaAddress: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "The sender's UMA address (this or customerId)." })),
});

export const UmaReceiverParams = Type.Object({ receiverUmaAddress: Type.String({ minLength: 1, maxLength: 256, description: "$user@domain." }) });
export const AccountReceiverParams = Type.Object({ accountId: Type.String({ minLength: 1, maxLength: 128, description: "ExternalAccount:<id>." }) });

export const ReceiverLookupSchema = Type.Object(
  {
    lookupId: Type.String({ description: "Lookup:<uuidv7>; pass it to POST /quotes within 5 minutes." }),
    receiverUmaAddress: Type.Optional(Type.String({ description: "The UMA address looked up." })),
    accountId: Type.Optional(Type.String({ description: "The external account looked up." })),
    supportedCurrencies: Type.Array(
      Type.Object(
        {
          currency: Ref("Currency", "A currency the receiver accepts."),
          estimatedExchangeRate: Type.Number({ description: "Estimated rate from the platform's primary currency (sending per receiving major unit)." }),
          min: Type.Integer({ description: "Smallest receivable amount, minor units." }),
          max: Type.Integer({ description: "Largest receivable amount, minor units." }),
        },
        { description: "One accepted currency." },
      ),
      { description: "What the receiver accepts." },
    ),
    requiredPayerDataFields: Type.Array(
      Type.Object({ name: Type.String({ description: "Field name, e.g. FULL_NAME." }), mandatory: Type.Boolean({ description: "Whether the quote's senderCustomerInfo must carry it." }) }, { description: "A field." }),
      { description: "Sender data the receiver asks for." },
    ),
  },
  { description: "A receiver lookup." },
);

const StringMap = (description: string) => Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 1000 }), { description });

export const CreateQuoteBody = Type.Object(
  {
    source: Type.Object(
      {
        sourceType: Type.Enum(["ACCOUNT", "REALTIME_FUNDING"], { description: "ACCOUNT (an internal account) or REALTIME_FUNDING." }),
        accountId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "InternalAccount:<id> (ACCOUNT)." })),
        customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "The sender (required for REALTIME_FUNDING)." })),
        currency: Type.Optional(Code("Currency of a REALTIME_FUNDING source.")),
      },
      { additionalProperties: false, description: "Where the money comes from." },
    ),
    destination: Type.Object(
      {
        destinationType: Type.Enum(["ACCOUNT", "UMA_ADDRESS"], { description: "ACCOUNT or UMA_ADDRESS." }),
        accountId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "ACCOUNT: the ExternalAccount:<id> paid out to." })),
        paymentRail: Type.Optional(Type.String({ maxLength: 32, description: "Rail, for example ACH." })),
        umaAddress: Type.Optional(Type.String({ maxLength: 256, description: "$user@domain (UMA_ADDRESS); must match the lookup." })),
        currency: Type.Optional(Code("Receiving currency (UMA_ADDRESS; defaults to the lookup's only currency).")),
      },
      { additionalProperties: false, description: "Where the money goes." },
    ),
    lockedCurrencySide: Type.Enum(["SENDING", "RECEIVING"], { description: "Which amount is fixed." }),
    lockedCurrencyAmount: Amount("Minor units of the locked side's currency, at most 9000000000000000."),
    lookupId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "From a receiver lookup; required for UMA destinations." })),
    immediatelyExecute: Type.Optional(Type.Boolean({ default: false, description: "Execute at once (not for EMBEDDED_WALLET sources)." })),
    description: Type.Optional(Type.String({ maxLength: 1000, description: "Memo." })),
    purposeOfPayment: Type.Optional(
      Type.Enum(["GIFT", "SELF", "GOODS_OR_SERVICES", "EDUCATION", "HEALTH_OR_MEDICAL", "REAL_ESTATE_PURCHASE", "TAX_PAYMENT", "LOAN_PAYMENT", "UTILITY_BILL", "DONATION", "TRAVEL", "OTHER"], {
        description: "Purpose of the payment.",
      }),
    ),
    senderCustomerInfo: Type.Optional(StringMap("Every mandatory field of the lookup's requiredPayerDataFields.")),
    counterpartyInformation: Type.Optional(StringMap("Fields the platform's config requires for the receiving currency (FULL_NAME, ...).")),
  },
  { additionalProperties: false, description: "A quote request." },
);

export const WithdrawalFeeBody = Type.Object(
  {
    internalAccountId: Type.String({ minLength: 1, maxLength: 128, description: "The internal account the money leaves." }),
    currency: Code("The withdrawal currency (the account's)."),
    cryptoNetwork: Type.Enum(["SOLANA", "ETHEREUM", "BASE", "POLYGON", "SPARK", "LIGHTNING", "BITCOIN"], { description: "The network." }),
    amount: Amount("Minor units of currency."),
    destinationAddress: Type.String({ minLength: 1, maxLength: 8000, description: "Address (or BOLT 11 invoice) on that network." }),
  },
  { additionalProperties: false, description: "A withdrawal to estimate." },
);

export const WithdrawalFeeEstimateSchema = Type.Object(
  {
    networkFee: Type.Integer({ description: "Smallest unit of networkFeeAsset (wei, lamports, satoshis)." }),
    networkFeeAsset: Type.String({ description: "ETH, POL, SOL or BTC." }),
    applicationFee: Type.Integer({ description: "Withdrawal currency minor units; 0 if none." }),
    totalFee: Type.Integer({ description: "Network fee converted plus application fee, withdrawal currency minor units." }),
    netAmount: Type.Integer({ description: "What the recipient receives." }),
  },
  { description: "WithdrawalFeeEstimate." },
);

const Rate = (description: string) => Type.Number({ description });
const Minor = (description: string) => Type.Integer({ description });
const Str = (description: string) => Type.String({ description });
const Opt = <T extends TSchema>(t: T) => Type.Optional(t);

const PaymentInstructionSchema = Type.Object(
  {
    accountOrWalletInfo: Type.Object(
      {
        accountType: Type.Enum(["USD_ACCOUNT", "SPARK_WALLET"], { description: "USD_ACCOUNT (bank transfer) or SPARK_WALLET." }),
        paymentRails: Opt(Type.Array(Str("A rail."), { description: "USD_ACCOUNT: rails reaching the account (ACH, WIRE)." })),
        accountNumber: Opt(Str("USD_ACCOUNT: account number.")),
        routingNumber: Opt(Str("USD_ACCOUNT: routing number.")),
        bankName: Opt(Str("USD_ACCOUNT: bank name.")),
        reference: Opt(Str("USD_ACCOUNT: the reference the payment must carry.")),
        assetType: Opt(Str("SPARK_WALLET: asset (BTC).")),
        address: Opt(
          Type.String({
            description: "SPARK_WALLET: a Spark address (bech32m, prefix sparkrt in the sandbox) derived from the quote; well-formed but nobody holds its key: sandbox payments are simulated with POST /sandbox/send.",
            examples: ["sparkrt1qfa3jgnt8vye6mqkpc4jvcda8d6ux8mfsh55smxm5s8e5tap72py7y98x6g"],
          }),
        ),
        invoice: Opt(
          Type.String({
            description: "SPARK_WALLET: a BOLT 11 Lightning invoice for exactly the amount, expiring with the quote (sandbox: regtest lnbcrt…, signed by a sandbox node key derived from a public label; never payable on a real network).",
            examples: ["lnbcrt100u1p..."],
          }),
        ),
      },
      { description: "Where to pay, by accountType." },
    ),
    instructionsNotes: Str("Notes for the payer."),
    amount: Minor("Exactly this many minor units of currency (our addition)."),
    currency: Str("The currency to pay in (our addition)."),
  },
  { description: "A payment instruction." },
);

/** Grid's ScaChallenge (docs/sca.md). */
export const ScaChallengeSchema = Type.Object(
  {
    id: Str("ScaChallenge:<uuidv7>; informational (the server resolves the challenge from the quote)."),
    expiresAt: Iso8601("After this the challenge can no longer be authorized."),
    factor: Type.String({ description: "SMS_OTP, TOTP or PASSKEY: the factor the challenge was issued for: SMS_OTP, a one-time code sent to the customer (Corridor delivers it through the deployment's mail server; sandbox: 123456)." }),
    availableFactors: Type.Array(Type.String(), { description: "The factors (SMS_OTP, TOTP, PASSKEY) that may satisfy it." }),
    purpose: Opt(Str("What it authorizes (TRANSFER, TRUST_BENEFICIARY, UNTRUST_BENEFICIARY); informational.")),
  },
  { description: "A strong-customer-authentication challenge: present while a quote is PENDING_AUTHORIZATION (customers in SCA-regulated regions paying a destination they have not trusted)." },
);

/** Grid's ScaAuthorization: the proof for a challenge. */
export const ScaAuthorizationBody = Type.Object(
  {
    code: Type.Optional(Type.Union([Type.String({ maxLength: 16, description: "The six-digit one-time code (sandbox: always 123456)." }), Type.Null()])),
    passkeyAssertion: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true, description: "A WebAuthn assertion (PASSKEY challenges; Corridor issues SMS_OTP challenges only)." }), Type.Null()])),
  },
  { description: "Proof that satisfies an ScaChallenge: the code." },
);

export const QuoteSchema = Type.Object(
  {
    id: Str("Quote:<uuidv7>."),
    status: Str("PENDING_AUTHORIZATION (waits for strong customer authentication: POST /quotes/{id}/authorize), PENDING, PROCESSING, COMPLETED, FAILED or EXPIRED; follows the quote's transaction."),
    createdAt: Iso8601("Creation time."),
    expiresAt: Iso8601("5 minutes after creation: later the quote (and its transaction) is EXPIRED."),
    source: Type.Object(
      {
        sourceType: Str("ACCOUNT or REALTIME_FUNDING."),
        accountId: Opt(Str("InternalAccount:<id> (ACCOUNT).")),
        customerId: Opt(Str("The sender.")),
        currency: Opt(Str("REALTIME_FUNDING: the currency to pay in.")),
      },
      { description: "Where the money comes from." },
    ),
    destination: Type.Object(
      {
        destinationType: Str("ACCOUNT or UMA_ADDRESS."),
        accountId: Opt(Str("ExternalAccount:<id> (ACCOUNT).")),
        paymentRail: Opt(Str("Rail, for example ACH.")),
        umaAddress: Opt(Str("UMA_ADDRESS: the receiver.")),
        currency: Opt(Str("The receiving currency.")),
      },
      { description: "Where the money goes." },
    ),
    sendingCurrency: Ref("Currency", "The sending currency."),
    receivingCurrency: Ref("Currency", "The receiving currency."),
    totalSendingAmount: Minor("Sending minor units, fees included."),
    totalReceivingAmount: Minor("Receiving minor units."),
    exchangeRate: Rate("Sending major units per one receiving major unit, locked until expiresAt."),
    feesIncluded: Minor("Every fee, sending minor units."),
    transactionId: Str("Transaction:<uuidv7> created with the quote (PENDING)."),
    paymentInstructions: Opt(Type.Array(PaymentInstructionSchema, { description: "REALTIME_FUNDING only: how to pay the quote." })),
    counterpartyInformation: Opt(Type.Record(Type.String(), Type.String(), { description: "As given (FULL_NAME, ...)." })),
    rateDetails: Type.Object(
      {
        counterpartyMultiplier: Rate("Counterparty markup on the market rate."),
        counterpartyFixedFee: Minor("Counterparty fixed fee, receiving minor units."),
        serviceApiMultiplier: Rate("Service markup on the market rate."),
        serviceApiFixedFee: Minor("Service fixed fee, sending minor units."),
        serviceApiVariableFeeRate: Rate("Service variable fee rate."),
        serviceApiVariableFeeAmount: Minor("Service variable fee, sending minor units."),
      },
      { description: "Rate and fee breakdown." },
    ),
    payloadToSign: Opt(Str("EMBEDDED_WALLET sources: sign these exact bytes with the session key; send the signature as Service-Wallet-Signature on execute.")),
    lockedCurrencySide: Str("SENDING or RECEIVING."),
    lookupId: Opt(Str("The receiver lookup used.")),
    description: Opt(Str("Memo.")),
    purposeOfPayment: Opt(Str("Purpose of payment.")),
    failureReason: Opt(Str("Set once FAILED or EXPIRED (QUOTE_EXPIRED, ...).")),
    scaChallenge: Opt(ScaChallengeSchema),
  },
  { description: "A quote." },
);

export const QuoteParams = Type.Object({ quoteId: Type.String({ minLength: 1, maxLength: 128, description: "Quote:<id>." }) });

export const ExecuteQuoteHeaders = Type.Object(
  {
    "idempotency-key": IdempotencyKeyHeader(),
    "service-wallet-signature": Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: "EMBEDDED_WALLET sources: signature over the quote's payloadToSign." })),
    "grid-wallet-signature": Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: "Alias of Service-Wallet-Signature." })),
    "request-id": Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Optional: the requestId inside payloadToSign (the quote's own by default)." })),
  },
  { description: "Execute headers." },
);

export const SandboxSendBody = Type.Object(
  {
    quoteId: Type.String({ minLength: 1, maxLength: 128, description: "A REALTIME_FUNDING quote." }),
    currencyCode: Code("The currency paid; must be the quote's sending currency."),
    currencyAmount: Type.Optional(
      Amount("Minor units paid (Grid's name); must be the quote's totalSendingAmount, which is the default (400 AMOUNT_MISMATCH otherwise)."),
    ),
    amount: Type.Optional(Amount("Same as currencyAmount (Corridor's earlier name); when both are given they must be equal.")),
  },
  { additionalProperties: false, description: "A simulated payment of a quote's instructions." },
);

export const ListQuotesQuery = Type.Object(
  {
    ...pagingQuery,
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only quotes whose sending customer is this one." })),
    status: Type.Optional(Type.Enum(["PENDING_AUTHORIZATION", "PENDING", "PROCESSING", "COMPLETED", "FAILED", "EXPIRED"], { description: "Only quotes in this status." })),
    createdAfter: Type.Optional(Iso8601("Only quotes created at or after this time.")),
    createdBefore: Type.Optional(Iso8601("Only quotes created at or before this time.")),
  },
  { additionalProperties: false, description: "Filters and paging of GET /quotes (Grid's names)." },
);

export const QuoteListSchema = ListEnvelope(QuoteSchema, "One page of quotes, newest first.");

export const ListUmaProvidersQuery = Type.Object(
  {
    ...pagingQuery,
    countryCode: Type.Optional(Type.String({ pattern: "^[A-Z]{2}$", description: "Only providers operating in this ISO 3166-1 alpha-2 country.", examples: ["MX"] })),
    currencyCode: Type.Optional(Type.String({ pattern: "^[A-Z]{3,5}$", description: "Only providers whose users receive this currency.", examples: ["EUR"] })),
  },
  { additionalProperties: false, description: "Filters and paging of GET /uma-providers." },
);

export const UmaProviderSchema = Type.Object(
  {
    name: Type.String({ description: "Display name.", examples: ["Corridor Sandbox UMA"] }),
    domain: Type.String({ description: "The domain of its UMA addresses.", examples: ["sandbox.uma.money"] }),
    supportedRegions: Type.Array(Type.String({ description: "ISO 3166-1 alpha-2." }), { description: "Countries it operates in.", examples: [["MX", "US"]] }),
    supportedCurrencies: Type.Array(Ref("Currency", "A currency its users receive."), { description: "Currencies its users receive." }),
    allowListStatus: Type.Boolean({ description: "Whether the platform may pay it (every listed provider is allowed).", examples: [true] }),
  },
  { additionalProperties: false, description: "A UMA provider (VASP) the platform can pay." },
);

export const UmaProviderListSchema = ListEnvelope(UmaProviderSchema, "One page of UMA providers, by domain.");
