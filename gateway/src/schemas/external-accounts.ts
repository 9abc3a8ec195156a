import type { JsonObject } from "@bufbuild/protobuf";
import { Type, type Static } from "typebox";
import { Iso8601, ListEnvelope, Ref, pagingQuery } from "./common.js";

const ACCOUNT_TYPES = ["USD_ACCOUNT", "BRL_ACCOUNT", "AED_ACCOUNT", "MXN_ACCOUNT", "EUR_ACCOUNT", "SPARK_WALLET", "LIGHTNING"];

/** accountInfo.countries and accountInfo.paymentRails, on the request and the answer (issue 10). */
const railFields = {
  countries: Type.Optional(
    Type.Array(Type.String({ pattern: "^[A-Z]{2}$", description: "ISO 3166-1 alpha-2 code." }), {
      minItems: 1,
      maxItems: 50,
      description: "Bank accounts (USD, BRL, AED, EUR, MXN): the countries the account is held in or reachable from. Stored and answered as given; absent when not given.",
      examples: [["US"]],
    }),
  ),
  paymentRails: Type.Optional(
    Type.Array(Type.Enum(["ACH", "WIRE", "RTP", "FEDNOW", "SEPA", "SEPA_INSTANT"], { description: "A payment rail." }), {
      minItems: 1,
      maxItems: 4,
      description:
        "USD_ACCOUNT (ACH, WIRE, RTP, FEDNOW) and EUR_ACCOUNT (SEPA, SEPA_INSTANT) only: the rails that can pay the account, distinct. Always answered for those two types: as given, else ACH and WIRE for USD (they reach every US account) and SEPA and SEPA_INSTANT for EUR.",
      examples: [["ACH", "WIRE"]],
    }),
  ),
};

/** accountInfo.beneficiary, discriminated on beneficiaryType (INDIVIDUAL or BUSINESS), closed as Grid's are. */
const Country = (description: string) => Type.String({ pattern: "^[A-Z]{2}$", description: `${description} ISO 3166-1 alpha-2.` });
const beneficiaryContact = {
  email: Type.Optional(Type.String({ format: "email", maxLength: 255, description: "Email address." })),
  phoneNumber: Type.Optional(Type.String({ pattern: "^\\+[1-9][0-9]{6,14}$", description: "Phone number, E.164 (+14155550123)." })),
  countryOfResidence: Type.Optional(Country("Country of residence,")),
  address: Type.Optional(
    Type.Object(
      {
        line1: Type.String({ minLength: 1, description: "Street and number." }),
        line2: Type.Optional(Type.String({ minLength: 1, description: "Second line." })),
        city: Type.Optional(Type.String({ minLength: 1, description: "City." })),
        state: Type.Optional(Type.String({ minLength: 1, description: "State or province." })),
        postalCode: Type.Optional(Type.String({ minLength: 1, description: "Postal code." })),
        country: Country("Country,"),
      },
      { additionalProperties: false, description: "The beneficiary's postal address." },
    ),
  ),
};
const IndividualBeneficiary = Type.Object(
  {
    beneficiaryType: Type.Literal("INDIVIDUAL", { description: "A person." }),
    fullName: Type.String({ minLength: 1, maxLength: 255, description: "Full legal name (checked by beneficiary name verification)." }),
    birthDate: Type.Optional(Type.String({ format: "date", description: "Date of birth (YYYY-MM-DD)." })),
    nationality: Type.Optional(Country("Nationality,")),
    ...beneficiaryContact,
  },
  { additionalProperties: false, description: "An individual beneficiary." },
);
const BusinessBeneficiary = Type.Object(
  {
    beneficiaryType: Type.Literal("BUSINESS", { description: "A company (for example the platform's own payout account)." }),
    legalName: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: "Registered legal name (checked by beneficiary name verification). Required unless fullName is given; if both are given they must be equal (else 400 INVALID_INPUT on fullName).",
      }),
    ),
    fullName: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: "The spec's name for the business's name (its Beneficiary object names fullName): accepted in place of legalName, stored and answered as given.",
      }),
    ),
    registrationNumber: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Company registration number." })),
    taxId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Tax identification number." })),
    ...beneficiaryContact,
  },
  { additionalProperties: false, description: "A business beneficiary." },
);
const beneficiaryField = {
  beneficiary: Type.Optional(
    Type.Unsafe<JsonObject>({
      oneOf: [IndividualBeneficiary, BusinessBeneficiary],
      discriminator: { propertyName: "beneficiaryType" },
      description: "Who holds the account (bank accounts), discriminated on beneficiaryType: INDIVIDUAL or BUSINESS.",
    }),
  ),
};

export const AccountInfoSchema = Type.Object(
  { accountType: Type.Enum(ACCOUNT_TYPES, { description: "Which variant this is." }), ...railFields, ...beneficiaryField },
  {
    $id: "AccountInfo",
    additionalProperties: true,
    description:
      "Account details by accountType. USD_ACCOUNT: accountNumber (4-17 digits), routingNumber (9 digits, ABA checksum), bankAccountType (CHECKING|SAVINGS), bankName, beneficiary. BRL_ACCOUNT: pixKey, pixKeyType (CPF|CNPJ|EMAIL|PHONE|RANDOM), taxId, beneficiary. AED_ACCOUNT: iban (AE, mod-97), swiftCode, beneficiary. EUR_ACCOUNT: iban, swiftCode?, beneficiary. MXN_ACCOUNT: clabe (18 digits with check digit), beneficiary. SPARK_WALLET: address, assetType?. LIGHTNING: invoice or lightningAddress. beneficiary, discriminated on beneficiaryType: INDIVIDUAL {fullName, birthDate?, nationality?, email?, phoneNumber?, countryOfResidence?, address?} or BUSINESS {legalName and/or fullName (one required, equal if both), registrationNumber?, taxId?, email?, phoneNumber?, countryOfResidence?, address?} (a variant's own fields only; phoneNumber E.164; beneficiary name verification checks an individual's fullName, a business's legalName, else its fullName).",
  },
);

export const ExternalAccountSchema = Type.Object(
  {
    id: Type.String({ description: "ExternalAccount:<uuidv7>." }),
    status: Type.Enum(["PENDING", "ACTIVE", "PENDING_OWNERSHIP_VERIFICATION", "UNVERIFIED", "UNDER_REVIEW", "INACTIVE"], {
      description:
        "Lifecycle status (Grid's ExternalAccountStatus). Ownership verification by micro-deposits: PENDING_OWNERSHIP_VERIFICATION while a challenge is outstanding (the account stays usable), ACTIVE once the amounts are confirmed, UNVERIFIED when the last challenge failed or expired (start a new one).",
    }),
    currency: Type.String({ description: "ISO 4217 or asset code." }),
    accountInfo: Ref("AccountInfo", "The account details."),
    customerId: Type.Union([Type.String(), Type.Null()], { description: "The owning customer; null for the platform's own accounts." }),
    platformAccountId: Type.Optional(Type.String({ description: "The platform's own identifier." })),
    defaultUmaDepositAccount: Type.Boolean({
      description:
        "Whether incoming UMA payments of the customer land here (at most one per customer). For an incoming UMA payment in this account's currency, the INCOMING transaction's destination is this account: on approval the customer's internal account is credited and, in the same step, an onward OUTGOING transfer of the same amount to this account starts (description 'Onward payout of incoming UMA payment <incoming transaction id>'; its outcome follows the rail like any transfer-out). Without a default in the payment's currency the money stays in the customer's internal account in that currency.",
    }),
    beneficiaryVerificationStatus: Type.Enum(["MATCHED", "PARTIAL_MATCH", "NOT_MATCHED", "UNSUPPORTED", "CHECKED_BY_RECEIVING_FI", "PENDING"], {
      description: "Result of beneficiary name verification.",
    }),
    beneficiaryVerifiedData: Type.Optional(Type.Object({ fullName: Type.Optional(Type.String({ description: "Verified name." })) }, { additionalProperties: true, description: "What the rail verified." })),
    createdAt: Iso8601("When the account was registered."),
    updatedAt: Iso8601("When the account last changed."),
  },
  { $id: "ExternalAccount", description: "A bank account or wallet outside Corridor." },
);

const commonBody = {
  currency: Type.String({ minLength: 1, maxLength: 8, description: "ISO 4217 or asset code; must fit the accountType." }),
  accountInfo: Type.Object(
    { accountType: Type.Enum(ACCOUNT_TYPES, { description: "Which variant this is." }), ...railFields, ...beneficiaryField },
    { additionalProperties: true, description: "Account details (see AccountInfo)." },
  ),
  platformAccountId: Type.Optional(Type.String({ maxLength: 255, description: "The platform's own identifier." })),
};

export const CreateCustomerExternalAccountBody = Type.Object(
  {
    customerId: Type.String({ minLength: 1, maxLength: 128, description: "The owning customer." }),
    ...commonBody,
    defaultUmaDepositAccount: Type.Optional(Type.Boolean({ description: "Make it the customer's default UMA deposit account (moves the flag): incoming UMA payments in its currency are then paid onward to it (see ExternalAccount.defaultUmaDepositAccount)." })),
  },
  { additionalProperties: false, description: "The customer external account to register." },
);

export const CreatePlatformExternalAccountBody = Type.Object(commonBody, {
  additionalProperties: false,
  description: "The platform external account to register.",
});

export const ListCustomerExternalAccountsQuery = Type.Object(
  {
    ...pagingQuery,
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only this customer's accounts." })),
    currency: Type.Optional(Type.String({ pattern: "^[A-Z]{3,5}$", description: "Only accounts in this currency." })),
  },
  { description: "Filters and paging of GET /customers/external-accounts." },
);

export const ListPlatformExternalAccountsQuery = Type.Object(
  { ...pagingQuery, currency: Type.Optional(Type.String({ pattern: "^[A-Z]{3,5}$", description: "Only accounts in this currency." })) },
  { description: "Filters and paging of GET /platform/external-accounts." },
);

export const ExternalAccountIdParams = Type.Object(
  { externalAccountId: Type.String({ pattern: "^ExternalAccount:[0-9a-fA-F-]{1,64}$", description: "ExternalAccount:<uuidv7>." }) },
  { description: "Path parameters naming an external account." },
);

export const ExternalAccountListSchema = ListEnvelope(Ref("ExternalAccount", "An external account."), "One page of external accounts, newest first.");

export const externalAccountSchemas = [AccountInfoSchema, ExternalAccountSchema];

export const OwnershipChallengeBody = Type.Object(
  {
    method: Type.Optional(
      Type.Enum(["WALLET_SIGNATURE", "MICRO_DEPOSITS", "LIVENESS"], {
        description:
          "The verification method (Grid's field; Grid requires it, Corridor defaults it per account). WALLET_SIGNATURE (Grid's method): SPARK_WALLET accounts, their default. MICRO_DEPOSITS (a Corridor extension): bank accounts (USD_ACCOUNT, EUR_ACCOUNT), their default. A method the account cannot take, LIVENESS (Corridor has no hosted biometric provider) and any LIGHTNING account (an invoice or lightning address holds no key of its owner) answer 409 OWNERSHIP_VERIFICATION_NOT_APPLICABLE naming why.",
      }),
    ),
  },
  { additionalProperties: false, description: "Starts (or restarts) an ownership verification challenge." },
);

const challengeCommon = {
  id: Type.String({ description: "OwnershipChallenge:<uuidv7> (Corridor's addition)." }),
  externalAccountId: Type.String({ description: "The account being verified (Corridor's addition)." }),
  status: Type.Enum(["PENDING", "VERIFIED", "FAILED", "EXPIRED"], { description: "The challenge's state, a new one PENDING (Corridor's addition)." }),
  createdAt: Iso8601("When the challenge started (Corridor's addition)."),
};

export const WalletSignatureChallengeSchema = Type.Object(
  {
    method: Type.Literal("WALLET_SIGNATURE", { description: "Always WALLET_SIGNATURE for this shape." }),
    messageToSign: Type.String({
      description:
        "The exact message the wallet's identity key must sign, character for character (lines joined by \\n). It names the platform, the external account, its address, a random nonce and the expiry. Submit the signature to the verify endpoint.",
    }),
    expiresAt: Iso8601("When the challenge expires (15 minutes after it started by default, the ledger's LEDGER_OWNERSHIP_SIGNATURE_TTL_SECONDS); after it, start a new challenge."),
    ...challengeCommon,
    attemptsRemaining: Type.Integer({ description: "Invalid signatures still accepted before the challenge fails (default 1: Grid's behaviour, an invalid signature fails it). Corridor's addition." }),
  },
  {
    additionalProperties: false,
    title: "WalletSignatureChallenge",
    description:
      "Grid's WalletSignatureChallenge, for SPARK_WALLET accounts: the wallet proves it holds the identity key its Spark address encodes by signing messageToSign. One challenge per account is live: asking again replaces it. No sandbox shortcut exists: tests sign with a real key.",
  },
);

export const MicroDepositChallengeSchema = Type.Object(
  {
    method: Type.Literal("MICRO_DEPOSITS", { description: "How ownership is verified: two small credits to the account whose amounts the owner confirms." }),
    ...challengeCommon,
    currency: Type.String({ description: "The micro-deposits' currency (the account's)." }),
    depositCount: Type.Integer({ description: "How many micro-deposits were sent (2)." }),
    attemptsRemaining: Type.Integer({ description: "Wrong confirmations still accepted before the challenge fails." }),
    expiresAt: Iso8601("When the challenge lapses (14 days after it started); confirm before."),
  },
  {
    additionalProperties: false,
    title: "MicroDepositChallenge",
    description:
      "A Corridor extension for bank accounts (Grid's route verifies wallets only and answers 409 for a bank account, so a Grid client never receives this). Two credits of 1 to 99 minor units each go to the account through its rail (production: the connector bound to the platform's currency and rail, in its next ACH or SEPA file; sandbox platforms: always 32 and 45, at once). The amounts are never shown: the owner reads them on its bank statement and confirms them with the verify endpoint.",
  },
);

/** The 201 of the challenge route: Grid's OwnershipChallenge oneOf on method, plus Corridor's MICRO_DEPOSITS branch. */
export const OwnershipChallengeSchema = Type.Unsafe<Static<typeof WalletSignatureChallengeSchema> | Static<typeof MicroDepositChallengeSchema>>({
  oneOf: [WalletSignatureChallengeSchema, MicroDepositChallengeSchema],
  discriminator: { propertyName: "method" },
  description: "The challenge, by method: WALLET_SIGNATURE (Grid's WalletSignatureChallenge) or MICRO_DEPOSITS (Corridor's extension).",
});

export const OwnershipVerifyBody = Type.Object(
  {
    signature: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          "WALLET_SIGNATURE (Grid's field): the signature the wallet's identity key made over the exact messageToSign, in signatureScheme's encoding. An invalid one answers 400 OWNERSHIP_SIGNATURE_INVALID and, once no attempt is left, fails the challenge (the account UNVERIFIED).",
      }),
    ),
    signatureScheme: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 32,
        description:
          "How the signature is made (Grid's field, default bip137). For a SPARK_WALLET: bip137 (a Bitcoin signed message by the identity key, base64 of 65 bytes; any BIP-137 header), electrum (the same as Electrum and Sparrow write it, headers 27 to 34) or spark (a Corridor extension: the Spark SDK's signMessageWithIdentityKey, ECDSA over SHA-256 of the message, hex or base64, DER or 64-byte compact). Another value answers 400 INVALID_INPUT naming the account's schemes.",
        examples: ["bip137"],
      }),
    ),
    amounts: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 99, description: "One micro-deposit's amount, in minor units." }), {
        minItems: 2,
        maxItems: 2,
        description: "MICRO_DEPOSITS (Corridor's extension): the two micro-deposit amounts as the owner's bank shows them, in minor units, in either order.",
      }),
    ),
  },
  { additionalProperties: false, description: "Completes the outstanding challenge: signature (WALLET_SIGNATURE) or amounts (MICRO_DEPOSITS), never both." },
);
