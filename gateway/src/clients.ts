import { createClient, type Client } from "@connectrpc/connect";
import type { TransportFor } from "@corridor/kit";
import { AgentsService } from "@corridor/proto/corridor/agents/v1/agents_service_pb.js";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { CustomersKycService } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import { CustomerImportsService } from "@corridor/proto/corridor/customers_kyc/v1/customer_imports_service_pb.js";
import { NotificationsService } from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { CardsService } from "@corridor/proto/corridor/ledger/v1/cards_service_pb.js";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import { WalletKeysService } from "@corridor/proto/corridor/auth_sessions/v1/wallet_keys_service_pb.js";
import { WalletAuthService } from "@corridor/proto/corridor/auth_sessions/v1/wallet_auth_service_pb.js";
import { ScaService } from "@corridor/proto/corridor/auth_sessions/v1/sca_service_pb.js";
import { LivenessService } from "@corridor/proto/corridor/auth_sessions/v1/liveness_service_pb.js";
import { QuotesFxService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";

/** Connect clients of the services the routes call, built once per gateway. */
export interface ServiceClients {
  authSessions: Client<typeof AuthSessionsService>;
  notifications: Client<typeof NotificationsService>;
  customersKyc: Client<typeof CustomersKycService>;
  /** Bulk customer imports (customers-kyc). */
  customerImports: Client<typeof CustomerImportsService>;
  ledger: Client<typeof LedgerService>;
  /** Cards and their funding sources (ledger). */
  cards: Client<typeof CardsService>;
  sandbox: Client<typeof SandboxService>;
  walletAuth: Client<typeof WalletAuthService>;
  walletKeys: Client<typeof WalletKeysService>;
  sca: Client<typeof ScaService>;
  /** The hosted liveness page's calls (auth-sessions). */
  liveness: Client<typeof LivenessService>;
  quotesFx: Client<typeof QuotesFxService>;
  agents: Client<typeof AgentsService>;
}

export function createServiceClients(transportFor: TransportFor): ServiceClients {
  return {
    authSessions: createClient(AuthSessionsService, transportFor("auth-sessions")),
    notifications: createClient(NotificationsService, transportFor("notifications")),
    customersKyc: createClient(CustomersKycService, transportFor("customers-kyc")),
    customerImports: createClient(CustomerImportsService, transportFor("customers-kyc")),
    ledger: createClient(LedgerService, transportFor("ledger")),
    cards: createClient(CardsService, transportFor("ledger")),
    sandbox: createClient(SandboxService, transportFor("sandbox")),
    walletAuth: createClient(WalletAuthService, transportFor("auth-sessions")),
    walletKeys: createClient(WalletKeysService, transportFor("auth-sessions")),
    sca: createClient(ScaService, transportFor("auth-sessions")),
    liveness: createClient(LivenessService, transportFor("auth-sessions")),
    quotesFx: createClient(QuotesFxService, transportFor("quotes-fx")),
    agents: createClient(AgentsService, transportFor("agents")),
  };
}
