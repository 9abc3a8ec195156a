import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  CurrencySchema,
  ExternalAccountSchema,
  InternalAccountSchema,
  PaymentInstructionSchema,
  type Currency,
  type ExternalAccount,
  type InternalAccount,
} from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import { TransactionSchema, type Transaction } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import type { AccountRow, ExternalAccountRow, OwnershipChallengeRow, TransactionRow } from "../domain/model.js";
import { OwnershipChallengeSchema, type OwnershipChallenge } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { currencyInfo } from "../domain/currencies.js";
import { accountInfoForRead } from "../domain/account-info.js";
import { directionOf, rateDetailsOf, settledAtOf } from "../domain/transactions.js";

/** Rows -> proto. Nothing here decides anything. */

export function currencyToPb(code: string): Currency {
  const c = currencyInfo(code);
  return create(CurrencySchema, { code: c.code, name: c.name, symbol: c.symbol, decimals: c.decimals });
}

export function internalAccountToPb(r: AccountRow): InternalAccount {
  return create(InternalAccountSchema, {
    id: r.id,
    platformId: r.platform_id,
    customerId: r.customer_id ?? "",
    type: r.type,
    currency: currencyToPb(r.currency),
    available: r.balance - r.held,
    balance: r.balance,
    held: r.held,
    fundingPaymentInstructions: (r.funding_instructions as Record<string, unknown>[]).map((i) =>
      create(PaymentInstructionSchema, {
        accountOrWalletInfo: i.accountOrWalletInfo as JsonObject,
        instructionsNotes: String(i.instructionsNotes ?? ""),
        isPlatformAccount: i.isPlatformAccount === true,
      }),
    ),
    createdAt: timestampFromDate(r.created_at),
    updatedAt: timestampFromDate(r.updated_at),
    status: r.status,
    privateEnabled: r.private_enabled ?? false,
  });
}

export function externalAccountToPb(r: ExternalAccountRow): ExternalAccount {
  return create(ExternalAccountSchema, {
    id: r.id,
    platformId: r.platform_id,
    customerId: r.customer_id ?? "",
    status: r.status,
    currency: r.currency,
    accountInfo: accountInfoForRead(r.account_info) as JsonObject,
    platformAccountId: r.platform_account_id,
    defaultUmaDepositAccount: r.default_uma_deposit_account,
    beneficiaryVerificationStatus: r.beneficiary_verification_status,
    beneficiaryVerifiedData: (r.beneficiary_verified_data ?? undefined) as JsonObject | undefined,
    createdAt: timestampFromDate(r.created_at),
    updatedAt: timestampFromDate(r.updated_at),
  });
}

export function transactionToPb(r: TransactionRow): Transaction {
  const sentCurrency = r.sent_currency ?? r.currency;
  return create(TransactionSchema, {
    id: r.id,
    platformId: r.platform_id,
    status: r.status,
    type: r.type,
    // uma_address is the counterparty's address: the sender of an incoming UMA payment, the
    // receiver of an outgoing one; it belongs on the end that is the UMA address.
    source: { type: r.source_type, accountId: r.source_account_id, currency: sentCurrency, umaAddress: r.source_type === "UMA_ADDRESS" ? (r.uma_address ?? "") : "" },
    destination: {
      type: r.destination_type,
      accountId: r.destination_account_id,
      currency: r.currency,
      paymentRail: r.payment_rail ?? "",
      umaAddress: r.source_type === "UMA_ADDRESS" ? "" : (r.uma_address ?? ""),
    },
    customerId: r.customer_id ?? "",
    platformCustomerId: r.platform_customer_id ?? "",
    amount: r.amount,
    currency: currencyToPb(r.currency),
    settledAt: ((at) => (at ? timestampFromDate(at) : undefined))(settledAtOf(r)),
    createdAt: timestampFromDate(r.created_at),
    updatedAt: timestampFromDate(r.updated_at),
    agentId: r.agent_id ?? "",
    description: r.description,
    reference: r.reference,
    failureReason: r.failure_reason ?? "",
    failureDetail: r.failure_detail ?? "",
    quoteId: r.quote_id ?? "",
    sentAmount: r.sent_amount ?? r.amount,
    sentCurrency: currencyToPb(sentCurrency),
    exchangeRate: r.exchange_rate ?? "1",
    fees: r.fees ?? 0n,
    refund: r.refund_status
      ? {
          reference: r.refund_reference ?? "",
          initiatedAt: r.refund_initiated_at ? timestampFromDate(r.refund_initiated_at) : undefined,
          settledAt: r.refund_settled_at ? timestampFromDate(r.refund_settled_at) : undefined,
          status: r.refund_status,
          reason: r.refund_reason ?? "",
        }
      : undefined,
    rateDetails: (rateDetailsOf(r) ?? undefined) as JsonObject | undefined,
    counterpartyInformation: r.counterparty_information ?? {},
    receiverCustomerInfo: r.receiver_customer_info ?? {},
    expiresAt: r.expires_at ? timestampFromDate(r.expires_at) : undefined,
    direction: directionOf(r),
    receiptDeliveryConfirmedAt: r.receipt_delivery_confirmed_at ? timestampFromDate(r.receipt_delivery_confirmed_at) : undefined,
  });
}

/** A challenge as the API shows it: never the micro-deposit amounts. */
export function ownershipChallengeToPb(c: OwnershipChallengeRow, depositCount: number): OwnershipChallenge {
  return create(OwnershipChallengeSchema, {
    id: c.id,
    externalAccountId: c.external_account_id,
    method: c.method,
    status: c.status,
    depositCount,
    attemptsRemaining: Math.max(0, c.max_attempts - c.attempts),
    expiresAt: timestampFromDate(c.expires_at),
    createdAt: timestampFromDate(c.created_at),
    currency: c.currency,
    messageToSign: c.message_to_sign,
  });
}
