import { decodeKeysetCursor, toPage } from "@corridor/kit";
import { principalOf } from "../auth.js";
import { errorResponses } from "../schemas/common.js";
import { DiscoveriesQuery, DiscoveryListSchema, VaspListSchema, VaspsQuery } from "../schemas/discoveries.js";
import { DEFAULT_PAGE_SIZE } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

export function discoveryRoutes(app: Api, { clients, vasps }: RouteDeps): void {
  app.get(
    "/discoveries",
    {
      schema: {
        summary: "List payment rails",
        description:
          "Grid's getDiscoveries: the payment rails this platform can pay out over, per country and currency (both filters optional). Built from what payouts accept: the external account types and the rails each can be paid by (what POST /customers/external-accounts validates), the platform's supported currencies with OUTGOING enabled, and for a production platform only the rails the operator bound a connector to (others answer 400 PAYMENT_RAIL_NOT_AVAILABLE). Needs VIEW.",
        tags: ["External accounts"],
        querystring: DiscoveriesQuery,
        response: { 200: DiscoveryListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.ledger.listDiscoveries({ platformId, country: request.query.country ?? "", currency: request.query.currency ?? "" });
      return {
        data: res.discoveries.map((d) => ({
          bankName: d.paymentRail || d.accountType,
          displayName: d.displayName,
          country: d.country,
          currency: d.currency,
          ...(d.paymentRail ? { paymentRail: d.paymentRail } : {}),
          accountType: d.accountType,
        })),
      };
    },
  );

  app.get(
    "/vasps",
    {
      schema: {
        summary: "List VASPs",
        description:
          "Grid's listVasps: the directory of Virtual Asset Service Providers this deployment recognizes, as its operator configures it (CORRIDOR_VASP_DIRECTORY; empty when it lists none), by name, searchable by name. Needs VIEW.",
        tags: ["External accounts"],
        querystring: VaspsQuery,
        response: { 200: VaspListSchema, ...errorResponses },
      },
    },
    async (request) => {
      principalOf(request);
      const q = request.query;
      const limit = q.limit ?? DEFAULT_PAGE_SIZE;
      const needle = q.search?.toLowerCase();
      const matching = needle ? vasps.filter((v) => v.vaspName.toLowerCase().includes(needle)) : vasps;
      const after = decodeKeysetCursor(q.cursor, "string");
      const rest = after ? matching.filter((v) => v.vaspName > after.k) : matching;
      const page = toPage(rest.slice(0, limit + 1), limit, (v) => ({ k: v.vaspName, id: v.vaspName }), matching.length);
      return {
        data: page.data.map((v) => ({ vaspName: v.vaspName, url: v.url })),
        hasMore: page.hasMore,
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
        totalCount: page.totalCount,
      };
    },
  );
}
