import type { DescMessage, DescMethodUnary, DescService, MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceName } from "@corridor/kit";
import { AgentsService } from "@corridor/proto/corridor/agents/v1/agents_service_pb.js";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { CustomersKycService } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { NotificationsService } from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import { QuotesFxService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";

/** One cheap, read-only RPC of a service that answers for any existing platform. */
export interface ServiceProbe<I extends DescMessage = DescMessage, O extends DescMessage = DescMessage> {
  service: ServiceName;
  desc: DescService;
  method: DescMethodUnary<I, O>;
  request(platformId: string): MessageInitShape<I>;
}

const probe = <I extends DescMessage, O extends DescMessage>(service: ServiceName, desc: DescService, method: DescMethodUnary<I, O>, request: (platformId: string) => MessageInitShape<I>): ServiceProbe =>
  ({ service, desc, method, request }) as unknown as ServiceProbe;

/** One RPC per service (every entry of SERVICE_NAMES), for tests that must reach all of them. */
export const serviceProbes: ServiceProbe[] = [
  probe("auth-sessions", AuthSessionsService, AuthSessionsService.method.getPlatform, (platformId) => ({ platformId })),
  probe("customers-kyc", CustomersKycService, CustomersKycService.method.listCustomers, (platformId) => ({ platformId })),
  probe("ledger", LedgerService, LedgerService.method.listInternalAccounts, (platformId) => ({ platformId, owner: "PLATFORM" })),
  probe("quotes-fx", QuotesFxService, QuotesFxService.method.listExchangeRates, (platformId) => ({ platformId, sourceCurrency: "USD" })),
  probe("agents", AgentsService, AgentsService.method.listAgents, (platformId) => ({ platformId })),
  probe("notifications", NotificationsService, NotificationsService.method.getWebhookSettings, (platformId) => ({ platformId })),
  probe("sandbox", SandboxService, SandboxService.method.getClock, (platformId) => ({ platformId })),
];

/** The RPC's full name as spans and gRPC paths spell it: corridor.x.v1.Service/Method. */
export const rpcName = (p: ServiceProbe) => `${p.desc.typeName}/${p.method.name}`;
