import { Type } from "typebox";
import { Iso8601, ListEnvelope, Ref, pagingQuery } from "./common.js";

export const CurrencySchema = Type.Object(
  {
    code: Type.String({ description: "ISO 4217 or asset code." }),
    name: Type.String({ description: "Display name." }),
    symbol: Type.String({ description: "Display symbol." }),
    decimals: Type.Integer({ description: "Digits of the minor unit." }),
  },
  { $id: "Currency", description: "A currency or asset." },
);

export const InternalAccountTypeSchema = Type.Enum(["INTERNAL_FIAT", "INTERNAL_CRYPTO", "EMBEDDED_WALLET"], {
  description: "INTERNAL_FIAT and INTERNAL_CRYPTO are platform-managed holding accounts; EMBEDDED_WALLET is a self-custodial wallet.",
});

export const PaymentInstructionSchema = Type.Object(
  {
    accountOrWalletInfo: Type.Object({ accountType: Type.String({ description: "USD_ACCOUNT or SPARK_WALLET." }) }, {
      additionalProperties: true,
      description:
        "Where to pay: USD_ACCOUNT {paymentRails, accountNumber, routingNumber, bankName, reference} or SPARK_WALLET {assetType, address, invoice}. A SPARK_WALLET address is the account's own Spark address (bech32m, prefix sparkrt in the sandbox) derived from its reference; its invoice is the account's own Spark invoice (Spark's SparkAddress encoding, bech32m sparkrt1…, to the same key): no amount (the payer chooses it), no expiry, the account's reference as memo, the same on every read. Both are well-formed, but nobody holds their key (the invoice is unsigned), so they are never payable; sandbox deposits are simulated with POST /sandbox/internal-accounts/{id}/fund. A quote's SPARK_WALLET instruction carries a BOLT 11 invoice for its exact amount instead.",
    }),
    instructionsNotes: Type.String({ description: "Notes for the payer." }),
    isPlatformAccount: Type.Boolean({ description: "Whether the account belongs to the platform." }),
  },
  { $id: "PaymentInstruction", description: "How to send money into an account." },
);

export const InternalAccountSchema = Type.Object(
  {
    id: Type.String({ description: "InternalAccount:<uuidv7>." }),
    type: InternalAccountTypeSchema,
    status: Type.Enum(["PENDING", "ACTIVE", "CLOSED", "FROZEN", "FAILED"], {
      description:
        "Platform accounts are ACTIVE. A customer's accounts follow the customer: PENDING until its KYC/KYB is APPROVED, then ACTIVE; FROZEN while the verification is REJECTED (no money moves); CLOSED once the customer is closed or deleted. FAILED (an account whose opening failed) is never produced: opening is a local step in Corridor.",
      examples: ["ACTIVE"],
    }),
    balance: Type.Object(
      {
        amount: Type.Integer({ description: "Available (spendable) balance in minor units: the posted balance minus money held for payments in flight.", examples: [125000] }),
        currency: Ref("Currency", "The account's currency."),
      },
      { description: "The spendable balance." },
    ),
    totalBalance: Type.Object(
      {
        amount: Type.Integer({ description: "Total balance in minor units: the spendable balance plus the money held for outgoing payments still in flight (it leaves when they complete, and comes back to the spendable balance when they fail). Incoming money counts once it has settled.", examples: [130000] }),
        currency: Ref("Currency", "The account's currency."),
      },
      { description: "The balance including held funds." },
    ),
    fundingPaymentInstructions: Type.Array(Ref("PaymentInstruction", "One way to fund the account."), { description: "How to fund the account." }),
    customerId: Type.Optional(Type.String({ description: "The owning customer; absent for platform accounts." })),
    privateEnabled: Type.Optional(Type.Boolean({ description: "EMBEDDED_WALLET only: whether wallet privacy is on (PATCH /internal-accounts/{id} with a signed retry changes it)." })),
    createdAt: Iso8601("When the account was opened."),
    updatedAt: Iso8601("When the account last changed."),
  },
  { $id: "InternalAccount", description: "An account whose money Corridor holds." },
);

export const ListCustomerInternalAccountsQuery = Type.Object(
  {
    ...pagingQuery,
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only this customer's accounts." })),
    currency: Type.Optional(Type.String({ pattern: "^[A-Z]{3,5}$", description: "Only accounts in this currency." })),
    type: Type.Optional(InternalAccountTypeSchema),
  },
  { description: "Filters and paging of GET /customers/internal-accounts." },
);

export const ListPlatformInternalAccountsQuery = Type.Object(
  {
    currency: Type.Optional(Type.String({ pattern: "^[A-Z]{3,5}$", description: "Only accounts in this currency." })),
    type: Type.Optional(InternalAccountTypeSchema),
  },
  { description: "Filters of GET /platform/internal-accounts." },
);

export const InternalAccountListSchema = ListEnvelope(Ref("InternalAccount", "An internal account."), "One page of internal accounts, oldest first.");

export const internalAccountSchemas = [CurrencySchema, PaymentInstructionSchema, InternalAccountSchema];
