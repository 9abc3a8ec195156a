import { Type } from "typebox";
import { Iso8601, ListEnvelope, Ref, pagingQuery, timeWindowQuery } from "./common.js";

export const PermissionSchema = Type.Enum(["VIEW", "TRANSACT", "MANAGE"], {
  description: "VIEW reads all data; TRANSACT moves money; MANAGE manages configuration, tokens and customers.",
});

const tokenFields = {
  id: Type.String({ pattern: "^Token:", description: "Token:<uuidv7>." }),
  name: Type.String({ description: "Display name." }),
  permissions: Type.Array(PermissionSchema, { description: "What the token may do." }),
  clientId: Type.String({ description: "Public half of the credential: the HTTP Basic username." }),
  createdAt: Iso8601("When the token was created."),
  updatedAt: Iso8601("When the token last changed."),
};

export const TokenSchema = Type.Object(tokenFields, { $id: "Token", description: "An API token (its secret is never shown again)." });

export const CreatedTokenSchema = Type.Object(
  {
    ...tokenFields,
    clientSecret: Type.String({ description: "The HTTP Basic password. Shown only in this answer; store it now." }),
  },
  { $id: "CreatedToken", description: "A new API token, with its secret shown this once." },
);

export const TokenIdParams = Type.Object(
  { tokenId: Type.String({ pattern: "^Token:[0-9a-fA-F-]{1,64}$", description: "Token:<uuidv7>." }) },
  { description: "Path parameters naming a token." },
);

export const CreateTokenBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: "Display name, 1 to 255 characters." }),
    permissions: Type.Array(PermissionSchema, { minItems: 1, uniqueItems: true, description: "At least one permission; no repeats." }),
  },
  { additionalProperties: false, description: "The token to create." },
);

export const ListTokensQuery = Type.Object(
  {
    ...pagingQuery,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "Only tokens with exactly this name." })),
    ...timeWindowQuery,
  },
  { description: "Filters and paging of GET /tokens." },
);

export const TokenListSchema = ListEnvelope(Ref("Token", "A token."), "One page of tokens, newest first.");

export const tokenSchemas = [TokenSchema, CreatedTokenSchema];
