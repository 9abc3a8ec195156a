import { toBinary } from "@bufbuild/protobuf";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { TransactionSchema, type Transaction } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import type { TransactionFacts } from "../domain/model.js";
import type { AccountDirectory, LedgerPort } from "../domain/ports.js";
import { call, orNotFound } from "./errors.js";

export function transactionFacts(t: Transaction): TransactionFacts {
  return { id: t.id, status: t.status, agentId: t.agentId, failureReason: t.failureReason, snapshot: toBinary(TransactionSchema, t) };
}

/** The ledger's accounts (customer-scoped where it can be) and transfers, on behalf of agents. */
export function ledgerClients(transport: () => Transport): { accounts: AccountDirectory; ledger: LedgerPort } {
  let client: Client<typeof LedgerService> | undefined;
  const ledger = () => (client ??= createClient(LedgerService, transport()));
  return {
    accounts: {
      async internalAccount(platformId, accountId) {
        const a = (await orNotFound(ledger().getInternalAccount({ platformId, accountId })))?.account;
        return a && { id: a.id, customerId: a.customerId, currency: a.currency?.code ?? "" };
      },
      async externalAccount(platformId, accountId, customerId) {
        const a = (await orNotFound(ledger().getExternalAccount({ platformId, owner: "CUSTOMER", accountId, customerId })))?.account;
        return a && { id: a.id, customerId: a.customerId, currency: a.currency };
      },
    },
    ledger: {
      async transfer(i) {
        const transfer = {
          platformId: i.platformId,
          sourceAccountId: i.sourceAccountId,
          destinationAccountId: i.destinationAccountId,
          amount: i.amount,
          idempotencyKey: i.idempotencyKey,
          description: i.description,
          agentId: i.agentId,
          customerId: i.customerId,
        };
        const res = i.direction === "IN" ? await call(ledger().transferIn({ transfer })) : await call(ledger().transferOut({ transfer }));
        const t = res.result?.transaction;
        if (!t) throw new Error("the ledger answered a transfer without its transaction");
        return transactionFacts(t);
      },
      async transaction(platformId, transactionId) {
        const t = (await orNotFound(ledger().getTransaction({ platformId, transactionId })))?.transaction;
        return t && transactionFacts(t);
      },
    },
  };
}
