import type { ServiceModule } from "@corridor/kit";
import { service as authSessions } from "@corridor/auth-sessions";
import { service as customersKyc } from "@corridor/customers-kyc";
import { service as ledger } from "@corridor/ledger";
import { service as quotesFx } from "@corridor/quotes-fx";
import { service as agents } from "@corridor/agents";
import { service as notifications } from "@corridor/notifications";
import { service as sandbox } from "@corridor/sandbox";

/** Every service, in start order: owners of data others read first. */
export const allServices: ServiceModule[] = [authSessions, customersKyc, ledger, quotesFx, agents, notifications, sandbox];
