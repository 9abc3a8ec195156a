// The shapes the console reads, as the API's OpenAPI document describes them (only the fields used).

export interface Currency {
  code: string;
  name?: string;
  symbol?: string;
  decimals: number;
}

export interface Address {
  line1: string;
  line2?: string;
  city?: string;
  state?: string;
  postalCode: string;
  country: string;
}

export interface Customer {
  id: string;
  platformCustomerId: string;
  customerType: "INDIVIDUAL" | "BUSINESS";
  umaAddress?: string;
  region?: string;
  currencies: string[];
  email?: string;
  createdAt: string;
  updatedAt: string;
  isDeleted: boolean;
  kycStatus?: string;
  kybStatus?: string;
  fullName?: string;
  birthDate?: string;
  nationality?: string;
  address?: Address;
  businessInfo?: { legalName: string; registrationNumber?: string; taxId?: string; countryOfIncorporation?: string; entityType?: string };
}

export interface Verification {
  id: string;
  customerId: string;
  verificationStatus: string;
  errors: { type: string; field: string; reason: string }[];
  createdAt: string;
}

export interface BeneficialOwner {
  id: string;
  roles: string[];
  ownershipPercentage: number;
  personalInfo: { firstName: string; lastName: string; nationality: string; birthDate: string };
  kycStatus: string;
}

export interface InternalAccount {
  id: string;
  type: string;
  balance: { amount: number; currency: Currency };
  customerId?: string;
  createdAt: string;
}

export interface ExternalAccount {
  id: string;
  status: string;
  currency: string;
  accountInfo: { accountType: string; accountNumber?: string; iban?: string; bankName?: string; routingNumber?: string; address?: string } & Record<string, unknown>;
  customerId: string | null;
  beneficiaryVerificationStatus?: string;
  createdAt: string;
}

export interface Transaction {
  id: string;
  status: string;
  type: "INCOMING" | "OUTGOING";
  direction: "CREDIT" | "DEBIT";
  source: { sourceType: string; accountId?: string; umaAddress?: string; currency: string };
  destination: { destinationType: string; accountId?: string; umaAddress?: string; paymentRail?: string; currency: string };
  customerId?: string;
  platformCustomerId?: string;
  receivedAmount: { amount: number; currency: Currency };
  sentAmount?: { amount: number; currency: Currency };
  exchangeRate?: number;
  fees?: number;
  quoteId?: string;
  rateDetails?: { serviceApiMultiplier: number; serviceApiFixedFee: number; serviceApiVariableFeeRate: number; serviceApiVariableFeeAmount: number };
  refund?: { reference: string; initiatedAt?: string; settledAt?: string; status: string; reason?: string };
  settledAt?: string;
  createdAt: string;
  updatedAt: string;
  agentId?: string;
  description?: string;
  reconciliationInstructions?: { reference: string };
  failureReason?: string;
  failureDetail?: string;
}

export interface AgentPolicy {
  permissions: string[];
  defaultExecutionMode: string;
  spendingLimits?: { currency: string; perTransactionLimit: number; dailyLimit: number; dailyTransactionLimit: number; monthlyLimit: number };
  accountRestrictions?: { allowedAccountIds: string[] | null; accountRules: { accountId: string; executionMode?: string; perTransactionLimit: number }[] };
  approvalThresholds?: { currency: string; amount: number };
}

export interface Agent {
  id: string;
  name: string;
  customerId: string;
  isPaused: boolean;
  isConnected: boolean;
  policy: AgentPolicy;
  usage: { dailyTransactionCount: number; dailySpend: number; monthlySpend: number; dailyResetDate?: string; monthlyResetMonth?: string };
  createdAt: string;
}

export interface DeviceCode {
  code: string;
  agentId: string;
  redeemed: boolean;
  expiresAt: string;
}

export interface AgentAction {
  id: string;
  agentId: string;
  customerId: string;
  platformCustomerId: string;
  status: string;
  type: string;
  createdAt: string;
  quote?: { id: string; sendingCurrency: Currency; receivingCurrency: Currency; totalSendingAmount: number; totalReceivingAmount: number; exchangeRate: number; feesIncluded: number };
  transferDetails?: { amount: number; currency: string; sourceAccountId: string; destinationAccountId: string };
  transaction?: Transaction;
  rejectionReason?: string;
  failureReason?: string;
  failureMessage?: string;
  expiresAt?: string;
}

export interface Token {
  id: string;
  name: string;
  permissions: string[];
  clientId: string;
  createdAt: string;
  clientSecret?: string;
}

export interface PlatformConfig {
  id: string;
  umaDomain?: string;
  webhookEndpoint?: string;
  supportedCurrencies: { currencyCode: string; minAmount: number; maxAmount: number }[];
  createdAt: string;
  updatedAt: string;
}
