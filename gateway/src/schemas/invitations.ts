import { Type } from "typebox";
import { MAX_AMOUNT_NUMBER } from "./config.js";
import { Iso8601 } from "./common.js";
import { UmaAddress } from "./customers.js";

export const InvitationSchema = Type.Object(
  {
    code: Type.String({ description: "The invitation code (random, URL-safe)." }),
    createdAt: Iso8601("When the invitation was created."),
    url: Type.String({ description: "The link to share: the configured invitation base URL followed by the code." }),
    inviterUma: Type.String({ description: "UMA address of the inviting customer." }),
    status: Type.Enum(["PENDING", "CLAIMED", "EXPIRED", "CANCELLED"], { description: "PENDING until claimed or cancelled; EXPIRED once past expiresAt." }),
    claimedAt: Type.Optional(Iso8601("When it was claimed.")),
    expiresAt: Type.Optional(Iso8601("When it expires; absent for never.")),
    inviteeUma: Type.Optional(Type.String({ description: "UMA address of who claimed it." })),
    firstName: Type.Optional(Type.String({ description: "First name of the invitee." })),
    amountToSend: Type.Optional(
      Type.Object(
        {
          amount: Type.Integer({ description: "Minor units of the currency." }),
          currency: Type.Object(
            {
              code: Type.String({ description: "Currency code." }),
              name: Type.String({ description: "Currency name." }),
              symbol: Type.String({ description: "Currency symbol." }),
              decimals: Type.Integer({ description: "Digits after the decimal point." }),
            },
            { description: "The currency." },
          ),
        },
        { description: "What the inviter means to send once claimed (display only: the inviter's platform sends it after INVITATION_CLAIMED)." },
      ),
    ),
  },
  { $id: "Invitation", description: "An UMA invitation link." },
);

export const CreateInvitationBody = Type.Object(
  {
    inviterUma: UmaAddress("UMA address of the inviting customer (one of your customers)."),
    firstName: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "First name of the invitee." })),
    amountToSend: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_NUMBER, description: "Amount to send once claimed, in minor units." })),
    currency: Type.Optional(Type.String({ pattern: "^[A-Z]{3,5}$", description: "Currency of amountToSend; default the inviter's first enabled currency." })),
    expiresAt: Type.Optional(Iso8601("Expiry, in the future; absent for never.")),
  },
  { additionalProperties: false, description: "A new invitation." },
);

export const ClaimInvitationBody = Type.Object(
  { inviteeUma: UmaAddress("UMA address of the invitee.") },
  { additionalProperties: false, description: "Who claims the invitation." },
);

export const InvitationCodeParams = Type.Object(
  { code: Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$", description: "The invitation code." }) },
  { description: "Path parameters naming an invitation." },
);

export const invitationSchemas = [InvitationSchema];
