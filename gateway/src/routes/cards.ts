import { cardFundingSourceToJson, cardToJson } from "@corridor/kit/rest-json";
import { Type } from "typebox";
import { principalOf } from "../auth.js";
import { errorResponses, Iso8601, ListEnvelope, pagingQuery } from "../schemas/common.js";
import { listEnvelope, pageOf } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Cards"];

const AccountId = (description: string) => Type.String({ minLength: 1, maxLength: 128, description });
const MinorUnits = (description: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description });

/** Grid's Card (its panEmbedUrl is not served: Corridor reveals no card details). */
const CardSchema = Type.Object(
  {
    id: Type.String({ description: "Card:<uuidv7>." }),
    cardholderId: Type.String({ description: "The Customer holding the card." }),
    platformCardId: Type.String({ description: "Your id of the card (generated when the create request named none)." }),
    state: Type.Enum(["PROCESSING", "ACTIVE", "FROZEN", "CLOSED"], {
      description: "PROCESSING while the card issuer provisions it; ACTIVE; FROZEN (by PATCH); CLOSED (terminal). Grid's PENDING_KYC is never answered: a card is issued only to an APPROVED customer.",
    }),
    stateReason: Type.Union([Type.Enum(["ISSUER_REJECTED", "CLOSED_BY_PLATFORM", "CLOSED_BY_GRID"]), Type.Null()], {
      description: "Why the card is CLOSED (CLOSED_BY_PLATFORM: closed by PATCH); null otherwise.",
    }),
    form: Type.Enum(["VIRTUAL"], { description: "The card's form: VIRTUAL only." }),
    brand: Type.Optional(Type.Enum(["VISA"], { description: "The network brand; present once the issuer provisioned the card." })),
    last4: Type.Optional(Type.String({ description: "Last four digits of the PAN; present once the issuer provisioned the card." })),
    expMonth: Type.Optional(Type.Integer({ minimum: 1, maximum: 12, description: "Expiry month (1-12); present once the issuer provisioned the card." })),
    expYear: Type.Optional(Type.Integer({ description: "Expiry year (four digits); present once the issuer provisioned the card." })),
    issuerRef: Type.Optional(Type.String({ description: "The issuer's reference of the card; present once the issuer provisioned the card." })),
    fundingSources: Type.Array(Type.String({ description: "InternalAccount:<uuidv7>." }), { description: "The internal accounts bound to the card, in priority order (at least one)." }),
    currency: Type.String({ description: "The currency the card transacts in: USD (funded from USD accounts, and from USDC embedded wallets at 1:1)." }),
    maxSpendPerTransaction: Type.Union([Type.Integer({ minimum: 1, description: "Minor units." }), Type.Null()], {
      description: "Card-specific limit on one authorization, in minor units of the card's currency; null for none. Recorded only: Corridor serves no card transactions.",
    }),
    createdAt: Iso8601("Creation time."),
    updatedAt: Iso8601("Last change (state, limit or funding sources)."),
  },
  { additionalProperties: false, description: "A debit card (Grid's Card)." },
);

const FundingSourceSchema = Type.Object(
  {
    id: Type.String({ description: "CardFundingSource:<uuidv7>: what POST /auth/delegated-keys takes as fundingSourceId." }),
    cardId: Type.String({ description: "The card." }),
    internalAccountId: Type.String({ description: "The internal account bound." }),
    status: Type.Enum(["ACTIVE", "PENDING_AUTH", "INACTIVE"], {
      description: "ACTIVE; PENDING_AUTH: an EMBEDDED_WALLET account without an ACTIVE delegated key for this source (POST /auth/delegated-keys); INACTIVE: unbound.",
    }),
    priority: Type.Integer({ minimum: 1, description: "Order tried at authorization, lowest first." }),
    createdAt: Iso8601("When it was bound."),
    updatedAt: Iso8601("Last change."),
  },
  { additionalProperties: false, description: "An internal account bound to a card (Grid's CardFundingSource)." },
);

const CardIdParams = Type.Object({ id: Type.String({ pattern: "^Card:[0-9a-fA-F-]{1,64}$", description: "Card:<uuidv7>." }) }, { description: "Path parameters naming a card." });
const SourceParams = Type.Object(
  {
    id: Type.String({ pattern: "^Card:[0-9a-fA-F-]{1,64}$", description: "Card:<uuidv7>." }),
    accountId: AccountId("The internal account to unbind."),
  },
  { description: "Path parameters naming a card and a bound internal account." },
);

const CreateCardBody = Type.Object(
  {
    cardholderId: Type.String({ minLength: 1, maxLength: 128, description: "The Customer to issue the card to; its KYC status must be APPROVED (else 400 CARDHOLDER_KYC_NOT_APPROVED)." }),
    platformCardId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "Your id of the card, unique per platform; generated when omitted." })),
    form: Type.Enum(["VIRTUAL"], { description: "VIRTUAL (the one form served)." }),
    fundingSources: Type.Array(AccountId("InternalAccount:<uuidv7>."), {
      minItems: 1,
      maxItems: 10,
      description:
        "Internal accounts of the cardholder, in priority order: each ACTIVE, in USD or USDC (an embedded wallet, at 1:1); otherwise 400 FUNDING_SOURCE_INELIGIBLE.",
    }),
    maxSpendPerTransaction: Type.Optional(MinorUnits("Card-specific limit on one authorization, in minor units; omit for none.")),
  },
  { additionalProperties: false, description: "Grid's CardCreateRequest." },
);

const UpdateCardBody = Type.Object(
  {
    state: Type.Optional(Type.Enum(["ACTIVE", "FROZEN", "CLOSED"], { description: "ACTIVE ⇄ FROZEN (freeze, unfreeze), ACTIVE | FROZEN → CLOSED (terminal); anything else 409 INVALID_STATE_TRANSITION." })),
    maxSpendPerTransaction: Type.Optional(
      Type.Union([MinorUnits("The new limit, in minor units."), Type.Null()], { description: "A positive integer sets the limit, null removes it, omitted leaves it; not with state CLOSED." }),
    ),
  },
  { additionalProperties: false, minProperties: 1, description: "Grid's CardUpdateRequest: at least one of state and maxSpendPerTransaction." },
);

const AddSourceBody = Type.Object(
  {
    accountId: AccountId("The internal account of the cardholder to bind (the same rules as at creation)."),
    priority: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: "Order tried at authorization, lowest first; default: after the last." })),
  },
  { additionalProperties: false, description: "Grid's CardFundingSourceAddRequest." },
);

const ListCardsQuery = Type.Object(
  {
    cardholderId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only this customer's cards." })),
    accountId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only cards with this internal account among their funding sources." })),
    platformCardId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "Only the card with this platformCardId." })),
    state: Type.Optional(Type.Enum(["PROCESSING", "ACTIVE", "FROZEN", "CLOSED"], { description: "Only cards in this state." })),
    sortOrder: Type.Optional(Type.Enum(["asc", "desc"], { default: "desc", description: "By creation time; default desc." })),
    ...pagingQuery,
  },
  { description: "Filters (they combine) and paging." },
);

const NEEDS_SANDBOX =
  "Cards are issued by the sandbox's card issuer only: a production platform gets 400 CARD_ISSUER_NOT_CONFIGURED (Corridor has no card issuer connector; docs/cards.md).";

/** Grid's cards core (CardsService, in the ledger). Reads need VIEW; the rest MANAGE. */
export function cardRoutes(app: Api, { clients }: RouteDeps): void {
  const cards = clients.cards;

  app.post(
    "/cards",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Issue a card",
        description: `201 the card, PROCESSING: the platform's card issuer provisions it asynchronously, then it is ACTIVE (with brand, last4, expiry) and a CARD_STATE_CHANGE webhook (Grid naming: CARD.STATE_CHANGE) carries it. The cardholder must be APPROVED (400 CARDHOLDER_KYC_NOT_APPROVED); every funding source must be an ACTIVE USD or USDC internal account of the cardholder (400 FUNDING_SOURCE_INELIGIBLE naming the account); the card transacts in USD. ${NEEDS_SANDBOX} An unknown customer, or another platform's: 404 USER_NOT_FOUND. A platformCardId already used: 409 PLATFORM_CARD_ID_EXISTS. Needs MANAGE.`,
        tags,
        body: CreateCardBody,
        response: { 201: CardSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const b = request.body;
      const res = await cards.createCard({
        platformId,
        cardholderId: b.cardholderId,
        platformCardId: b.platformCardId ?? "",
        form: b.form,
        fundingSources: b.fundingSources,
        maxSpendPerTransaction: b.maxSpendPerTransaction === undefined ? undefined : BigInt(b.maxSpendPerTransaction),
      });
      return reply.code(201).send(cardToJson(res.card));
    },
  );

  app.get(
    "/cards",
    {
      schema: {
        summary: "List cards",
        description: "The platform's cards, newest first unless sortOrder=asc; filters combine. Needs VIEW.",
        tags,
        querystring: ListCardsQuery,
        response: { 200: ListEnvelope(CardSchema, "A page of cards (Grid's CardListResponse)."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await cards.listCards({
        platformId,
        cardholderId: q.cardholderId ?? "",
        accountId: q.accountId ?? "",
        platformCardId: q.platformCardId ?? "",
        state: q.state ?? "",
        ascending: q.sortOrder === "asc",
        page: pageOf(q),
      });
      return listEnvelope(res.cards.map(cardToJson), res.pageInfo);
    },
  );

  app.get(
    "/cards/:id",
    {
      schema: {
        summary: "Get a card",
        description: "One card. Another platform's card, or an unknown id: 404 CARD_NOT_FOUND. Needs VIEW.",
        tags,
        params: CardIdParams,
        response: { 200: CardSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      return cardToJson((await cards.getCard({ platformId, cardId: request.params.id })).card);
    },
  );

  app.patch(
    "/cards/:id",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Update a card",
        description:
          "Freeze (state FROZEN), unfreeze (ACTIVE) or close (CLOSED, terminal, stateReason CLOSED_BY_PLATFORM) a card, and set or remove its maxSpendPerTransaction. A state change emits CARD_STATE_CHANGE. A transition other than ACTIVE ⇄ FROZEN and ACTIVE | FROZEN → CLOSED (a PROCESSING card, for one): 409 INVALID_STATE_TRANSITION; any change to a CLOSED card: 409 CARD_NOT_MUTABLE. Asking for the state the card is in changes nothing. Needs MANAGE.",
        tags,
        params: CardIdParams,
        body: UpdateCardBody,
        response: { 200: CardSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const b = request.body;
      const setLimit = b.maxSpendPerTransaction !== undefined;
      const res = await cards.updateCard({
        platformId,
        cardId: request.params.id,
        state: b.state ?? "",
        setMaxSpendPerTransaction: setLimit,
        maxSpendPerTransaction: setLimit && b.maxSpendPerTransaction !== null ? BigInt(b.maxSpendPerTransaction!) : undefined,
      });
      return cardToJson(res.card);
    },
  );

  app.get(
    "/cards/:id/funding-sources",
    {
      schema: {
        summary: "List a card's funding sources",
        description: "The internal accounts bound to the card, by priority (unbound ones are not listed). Needs VIEW.",
        tags,
        params: CardIdParams,
        response: { 200: Type.Object({ data: Type.Array(FundingSourceSchema, { description: "The bound sources." }) }, { description: "The card's funding sources." }), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await cards.listCardFundingSources({ platformId, cardId: request.params.id });
      return { data: res.fundingSources.map(cardFundingSourceToJson) };
    },
  );

  app.post(
    "/cards/:id/funding-sources",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Bind an account to a card",
        description:
          "201 the new CardFundingSource. The account must be an ACTIVE USD or USDC internal account of the cardholder and not already bound (400 FUNDING_SOURCE_INELIGIBLE; Grid answers 409 for this, Corridor's code has one status); a CLOSED card: 409 CARD_NOT_MUTABLE. An EMBEDDED_WALLET source is PENDING_AUTH until a delegated key is ACTIVE for it. Needs MANAGE.",
        tags,
        params: CardIdParams,
        body: AddSourceBody,
        response: { 201: FundingSourceSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await cards.addCardFundingSource({ platformId, cardId: request.params.id, accountId: request.body.accountId, priority: request.body.priority ?? 0 });
      return reply.code(201).send(cardFundingSourceToJson(res.fundingSource));
    },
  );

  app.delete(
    "/cards/:id/funding-sources/:accountId",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Unbind an account from a card",
        description:
          "204: the account no longer funds the card (its CardFundingSource becomes INACTIVE; a delegated key made for it stays readable). The card's last source: 409 LAST_FUNDING_SOURCE (freeze or close the card instead); a CLOSED card: 409 CARD_NOT_MUTABLE; an account not bound: 404 CARD_FUNDING_SOURCE_NOT_FOUND. Needs MANAGE.",
        tags,
        params: SourceParams,
        response: { 204: Type.Null({ description: "Unbound." }), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      await cards.removeCardFundingSource({ platformId, cardId: request.params.id, accountId: request.params.accountId });
      return reply.code(204).send(null);
    },
  );
}
