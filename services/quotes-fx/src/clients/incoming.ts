import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { transactionToJson } from "@corridor/kit/rest-json";
import { CustomersKycService } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import type { Transaction } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import { NotificationsService } from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import type { ApprovalReply, IncomingPorts } from "../domain/incoming.js";

type Transports = { customersKyc: () => Transport; ledger: () => Transport; notifications: () => Transport };

const REPLIES: ReadonlySet<string> = new Set(["APPROVED", "ACKNOWLEDGED", "ERROR", "NO_ENDPOINT"]);

/**
 * The incoming-payment ports over Connect: customers-kyc, the ledger and notifications; the sandbox
 * clock is the service's one client of it (clients/sandbox-clock.ts), passed in.
 */
export function incomingPorts(t: Transports & { sandboxNow: (platformId: string) => Promise<Date> }): IncomingPorts<Transaction> {
  // Resolved on first use: a service may call another only at request time, never while starting.
  let kyc: Client<typeof CustomersKycService> | undefined;
  let ledger: Client<typeof LedgerService> | undefined;
  let notifications: Client<typeof NotificationsService> | undefined;
  const L = () => (ledger ??= createClient(LedgerService, t.ledger()));
  const must = (tx: Transaction | undefined) => {
    if (!tx) throw new Error("the ledger answered without a transaction");
    return tx;
  };
  return {
    async customerByUma(platformId, umaAddress) {
      kyc ??= createClient(CustomersKycService, t.customersKyc());
      const res = await kyc.listCustomers({ platformId, umaAddress, page: { limit: 1 } });
      const c = res.customers[0];
      return c ? { id: c.id } : undefined;
    },
    async customerById(platformId, customerId) {
      kyc ??= createClient(CustomersKycService, t.customersKyc());
      try {
        const c = (await kyc.getCustomer({ platformId, customerId })).customer;
        return c && !c.isDeleted ? { id: c.id, umaAddress: c.umaAddress } : undefined;
      } catch (err) {
        if (ConnectError.from(err).code === Code.NotFound) return undefined;
        throw err;
      }
    },
    async createIncoming(i) {
      const res = await L().createIncomingUmaPayment({
        platformId: i.platformId,
        customerId: i.customerId,
        senderUmaAddress: i.senderUmaAddress,
        receiverUmaAddress: i.receiverUmaAddress,
        currency: i.currency,
        amount: i.amount,
        idempotencyKey: i.idempotencyKey,
      });
      return { tx: must(res.transaction), replayed: res.replayed };
    },
    async resolve(platformId, transactionId, d) {
      const res = await L().resolveIncomingPayment({
        platformId,
        transactionId,
        decision: d.kind,
        failureReason: d.kind === "FAIL" ? d.failureReason : "",
        detail: d.kind === "FAIL" ? d.detail : d.kind === "REJECT" ? d.reason : "",
        receiverCustomerInfo: d.kind === "APPROVE" ? (d.receiverCustomerInfo as JsonObject | undefined) : undefined,
      });
      return { tx: must(res.transaction), changed: res.changed };
    },
    async getTransaction(platformId, transactionId) {
      return must((await L().getTransaction({ platformId, transactionId })).transaction);
    },
    async requestApproval(platformId, tx, requestedFields) {
      notifications ??= createClient(NotificationsService, t.notifications());
      const res = await notifications.requestIncomingPaymentApproval({
        platformId,
        transaction: transactionToJson(tx) as unknown as JsonObject,
        requestedReceiverCustomerInfoFields: requestedFields,
      });
      const reply: ApprovalReply = REPLIES.has(res.reply) ? (res.reply as ApprovalReply) : "ERROR";
      return { reply, receiverCustomerInfo: res.receiverCustomerInfo as Record<string, unknown> | undefined };
    },
    sandboxNow: t.sandboxNow,
  };
}
