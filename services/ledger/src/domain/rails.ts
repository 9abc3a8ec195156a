import { CONNECTOR_NAME, SANDBOX_CONNECTOR, type RailEnvironment } from "@corridor/connector";
import { errors, findCurrency, type Clock, type FieldError } from "@corridor/kit";
import { PAYMENT_RAILS, type AccountType } from "./account-info.js";
import type { RailBindingRow } from "./model.js";
import type { Directory, LedgerStatements } from "./ports.js";

/** Where a transaction's rail instruction goes. */
export interface RailRoute {
  environment: RailEnvironment;
  /** The connector's name: `sandbox` for every sandbox platform, the operator's binding for a production one. */
  connector: string;
  /** The payment rail ("" when a sandbox payment names none). */
  paymentRail: string;
}

/** The rail a UMA payout travels by (quotes to a UMA address). */
export const UMA_RAIL = "UMA";

/** A payment rail's spelling: upper-case letters, digits and underscores (ACH, SEPA_INSTANT, UMA). */
const RAIL_NAME = /^[A-Z][A-Z0-9_]{1,31}$/;

/**
 * The rails a payment to or from an external account may use, in preference order: the one the
 * caller chose (a quote's destination.paymentRail), else the account's paymentRails (as the public
 * API shows them: the type's defaults when its creator named none).
 */
export function candidateRails(accountInfo: Record<string, unknown> | undefined, chosen = ""): string[] {
  if (chosen) return [chosen];
  const named = accountInfo?.paymentRails;
  if (Array.isArray(named) && named.length) return named.filter((r): r is string => typeof r === "string");
  return [...(PAYMENT_RAILS[accountInfo?.accountType as AccountType]?.fallback ?? [])];
}

/**
 * Routing that cannot mix worlds (DESIGN §2a, decisions §1): a sandbox platform's payments always
 * go to the simulator, whatever is bound; a production platform's go to the connector the operator
 * bound its (currency, rail) to, and there is no way to bind one to the simulator. No binding:
 * 400 PAYMENT_RAIL_NOT_AVAILABLE naming the currency and rail, before anything is held.
 */
export function createRailRouter(deps: { store: Pick<LedgerStatements, "railBindingsOf" | "upsertRailBinding" | "deleteRailBinding" | "listRailBindings">; directory: Pick<Directory, "environment">; clock: Clock }) {
  const { store, directory, clock } = deps;

  /** The route of a payment in `currency` over the first of `rails` that can carry it. Never inside a database transaction. */
  async function route(platformId: string, currency: string, rails: readonly string[]): Promise<RailRoute> {
    const environment = await directory.environment(platformId);
    if (environment === "SANDBOX") return { environment, connector: SANDBOX_CONNECTOR, paymentRail: rails[0] ?? "" };
    const bound = new Map((await store.railBindingsOf(platformId, currency)).map((b) => [b.payment_rail, b.connector]));
    for (const rail of rails) {
      const connector = bound.get(rail);
      if (connector) return { environment: "PRODUCTION", connector, paymentRail: rail };
    }
    const rail = rails[0] ?? "";
    throw errors.badRequest(
      "PAYMENT_RAIL_NOT_AVAILABLE",
      rails.length
        ? `No connector is configured for ${currency} payments over ${rails.join(" or ")} on this platform; ask the operator to bind one`
        : `No payment rail is known for this ${currency} payment on this platform`,
      { currency, paymentRail: rail, paymentRails: [...rails] },
    );
  }

  function checkBinding(b: { platformId: string; currency: string; paymentRail: string; connector?: string }): void {
    const errs: FieldError[] = [];
    if (!b.platformId.startsWith("Platform:")) errs.push({ field: "platformId", reason: "must be a Platform id" });
    if (!findCurrency(b.currency)) errs.push({ field: "currency", reason: "must be a known currency code" });
    if (!RAIL_NAME.test(b.paymentRail)) errs.push({ field: "paymentRail", reason: "must be a payment rail name such as ACH, WIRE or SEPA" });
    if (b.connector !== undefined) {
      if (!CONNECTOR_NAME.test(b.connector)) errs.push({ field: "connector", reason: "must be a connector name: lowercase letters, digits and dashes, 2 to 40 characters" });
      else if (b.connector === SANDBOX_CONNECTOR) errs.push({ field: "connector", reason: "the sandbox simulator serves sandbox platforms only; a production rail cannot be bound to it" });
    }
    if (errs.length) throw errors.invalidInput(errs);
  }

  return {
    route,

    /** The operator binds a production platform's (currency, rail) to a connector (admin RPC, CLI; or LEDGER_RAIL_BINDINGS). */
    async bind(b: { platformId: string; currency: string; paymentRail: string; connector: string; source: RailBindingRow["source"] }): Promise<RailBindingRow> {
      checkBinding(b);
      const environment = await directory.environment(b.platformId);
      if (environment !== "PRODUCTION") {
        throw errors.invalidInput([{ field: "platformId", reason: "is a sandbox platform: its rails always go to the sandbox simulator and cannot be bound" }]);
      }
      return store.upsertRailBinding({ platform_id: b.platformId, currency: b.currency, payment_rail: b.paymentRail, connector: b.connector, source: b.source }, clock.now());
    },

    async unbind(b: { platformId: string; currency: string; paymentRail: string }): Promise<boolean> {
      checkBinding(b);
      return store.deleteRailBinding(b.platformId, b.currency, b.paymentRail);
    },

    list: (platformId?: string) => store.listRailBindings(platformId || undefined),
  };
}

export type RailRouter = ReturnType<typeof createRailRouter>;
