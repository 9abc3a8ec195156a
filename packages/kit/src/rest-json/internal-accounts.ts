// Public JSON of a resource, shared by the gateway (its GET answers) and notifications (a
// webhook's data is the resource as its GET returns it, decisions §8). Pure: proto in, JSON out.
import type { Currency, InternalAccount } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import { emptyToUndefined, isoFromTimestamp, numberFromInt64 } from "./time.js";

/**
 * Ledger proto -> the public InternalAccount. `balance.amount` is the available balance (posted
 * minus holds), `totalBalance.amount` the posted balance (the available balance plus the money held
 * for payments in flight).
 */

export function currencyToJson(c: Currency | undefined) {
  if (!c) throw new Error("service answered without a currency");
  return { code: c.code, name: c.name, symbol: c.symbol, decimals: c.decimals };
}

export function internalAccountToJson(a: InternalAccount | undefined) {
  if (!a) throw new Error("service answered without an internal account");
  const customerId = emptyToUndefined(a.customerId);
  return {
    id: a.id,
    type: a.type,
    // Answers stored before the ledger kept a status (idempotent replays, older events) were all of open accounts.
    status: a.status || "ACTIVE",
    balance: { amount: numberFromInt64(a.available), currency: currencyToJson(a.currency) },
    totalBalance: { amount: numberFromInt64(a.balance), currency: currencyToJson(a.currency) },
    fundingPaymentInstructions: a.fundingPaymentInstructions.map((i) => ({
      accountOrWalletInfo: i.accountOrWalletInfo ?? {},
      instructionsNotes: i.instructionsNotes,
      isPlatformAccount: i.isPlatformAccount,
    })),
    ...(customerId ? { customerId } : {}),
    // Grid's wallet privacy flag, on embedded wallets only.
    ...(a.type === "EMBEDDED_WALLET" ? { privateEnabled: a.privateEnabled } : {}),
    createdAt: isoFromTimestamp(a.createdAt),
    updatedAt: isoFromTimestamp(a.updatedAt),
  };
}
