import { principalOf } from "../auth.js";
import { invitationToJson } from "../mappers/invitations.js";
import { timestampFromIso } from "@corridor/kit/rest-json";
import { Ref, errorResponses } from "../schemas/common.js";
import { ClaimInvitationBody, CreateInvitationBody, InvitationCodeParams } from "../schemas/invitations.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Invitations"];

export function invitationRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/invitations",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Create an invitation",
        description:
          "Creates an UMA invitation link for one of your customers (inviterUma). The url is the configured invitation base URL followed by the random code. Needs MANAGE.",
        tags,
        body: CreateInvitationBody,
        response: { 201: Ref("Invitation", "The invitation."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const b = request.body;
      const res = await clients.customersKyc.createInvitation({
        platformId,
        inviterUma: b.inviterUma,
        firstName: b.firstName ?? "",
        amountToSend: b.amountToSend === undefined ? undefined : BigInt(b.amountToSend),
        amountCurrency: b.currency ?? "",
        expiresAt: timestampFromIso(b.expiresAt),
      });
      return reply.code(201).send(invitationToJson(res.invitation));
    },
  );

  app.get(
    "/invitations/:code",
    {
      schema: {
        summary: "Get an invitation",
        description: "A pending invitation past its expiresAt reads EXPIRED. Needs VIEW.",
        tags,
        params: InvitationCodeParams,
        response: { 200: Ref("Invitation", "The invitation."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.customersKyc.getInvitation({ platformId, code: request.params.code });
      return invitationToJson(res.invitation);
    },
  );

  app.post(
    "/invitations/:code/claim",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Claim an invitation",
        description:
          "Claims a PENDING invitation for inviteeUma and notifies the platform (INVITATION_CLAIMED). Already claimed → 400 INVITATION_ALREADY_CLAIMED; expired → 400 INVITATION_EXPIRED; cancelled → 400 INVITATION_CANCELLED. Needs MANAGE.",
        tags,
        params: InvitationCodeParams,
        body: ClaimInvitationBody,
        response: { 200: Ref("Invitation", "The claimed invitation."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.customersKyc.claimInvitation({ platformId, code: request.params.code, inviteeUma: request.body.inviteeUma });
      return invitationToJson(res.invitation);
    },
  );

  app.post(
    "/invitations/:code/cancel",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Cancel an invitation",
        description: "Cancels a PENDING invitation; any other state → 400 INVITATION_ALREADY_CLAIMED, INVITATION_EXPIRED or INVITATION_CANCELLED. Needs MANAGE.",
        tags,
        params: InvitationCodeParams,
        response: { 200: Ref("Invitation", "The cancelled invitation."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.customersKyc.cancelInvitation({ platformId, code: request.params.code });
      return invitationToJson(res.invitation);
    },
  );
}
