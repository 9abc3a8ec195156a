import { Type } from "typebox";
import { ListEnvelope, pagingQuery } from "./common.js";

/** Schemas of GET /discoveries and GET /vasps (Grid's getDiscoveries and listVasps, issue 27). */

export const DiscoveriesQuery = Type.Object(
  {
    country: Type.Optional(Type.String({ pattern: "^[A-Z]{2}$", description: "ISO 3166-1 alpha-2 country code (e.g. US); absent: every country.", examples: ["US"] })),
    currency: Type.Optional(Type.String({ pattern: "^[A-Z]{3,5}$", description: "ISO 4217 currency code (e.g. USD); absent: every currency.", examples: ["USD"] })),
  },
  { description: "Filters of GET /discoveries." },
);

export const DiscoverySchema = Type.Object(
  {
    bankName: Type.String({
      description:
        "Grid's canonical name of the payment rail (the rail's code, e.g. ACH, SEPA_INSTANT; an account type such as BRL_ACCOUNT where no named rail reaches it). It may be passed as accountInfo.bankName when creating an external account.",
      examples: ["ACH"],
    }),
    displayName: Type.String({ description: "Human-friendly name of the rail in that country.", examples: ["ACH (US)"] }),
    country: Type.String({ description: "ISO 3166-1 alpha-2 country code.", examples: ["US"] }),
    currency: Type.String({ description: "ISO 4217 currency code.", examples: ["USD"] }),
    paymentRail: Type.Optional(
      Type.String({ description: "Corridor's: the payment rail, as accountInfo.paymentRails and a quote's destination.paymentRail name it; absent where the sandbox pays an account type no named rail reaches.", examples: ["ACH"] }),
    ),
    accountType: Type.String({ description: "Corridor's: the external account type (accountInfo.accountType) that receives over this rail.", examples: ["USD_ACCOUNT"] }),
  },
  { description: "One payment rail into one country in one currency." },
);

export const DiscoveryListSchema = Type.Object(
  { data: Type.Array(DiscoverySchema, { description: "Payment rails matching the filters, by country, currency and rail." }) },
  { description: "Grid's DiscoveryListResponse." },
);

export const VaspsQuery = Type.Object(
  {
    ...pagingQuery,
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "Only VASPs whose name contains this text (case-insensitive).", examples: ["kraken"] })),
  },
  { description: "Filters and paging of GET /vasps." },
);

export const VaspSchema = Type.Object(
  {
    vaspName: Type.String({ description: "Name of the VASP; pass it as vaspName when declaring a VASP-hosted counterparty.", examples: ["Kraken"] }),
    url: Type.String({ format: "uri", description: "The VASP's website.", examples: ["https://www.kraken.com"] }),
  },
  { description: "A Virtual Asset Service Provider recognized for counterparty declarations (Grid's Vasp)." },
);

export const VaspListSchema = ListEnvelope(VaspSchema, "One page of the VASP directory, by name (Grid's VaspListResponse).");
