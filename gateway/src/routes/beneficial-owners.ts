import { create } from "@bufbuild/protobuf";
import { RoleListSchema } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import { principalOf } from "../auth.js";
import { ownerToJson, personalInfoToProto } from "../mappers/beneficial-owners.js";
import {
  BeneficialOwnerIdParams,
  BeneficialOwnerListSchema,
  CreateBeneficialOwnerBody,
  ListBeneficialOwnersQuery,
  UpdateBeneficialOwnerBody,
} from "../schemas/beneficial-owners.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { listEnvelope, pageOf } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Customers"];

export function beneficialOwnerRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/beneficial-owners",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Add a beneficial owner",
        description:
          "Adds an owner to a BUSINESS customer; its KYC runs at once (sandbox: personalInfo.lastName suffix 001 PENDING, 002 REJECTED, else APPROVED). The UBO shares of one business total at most 100. Needs MANAGE.",
        tags,
        body: CreateBeneficialOwnerBody,
        response: { 201: Ref("BeneficialOwner", "The new owner."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const b = request.body;
      const res = await clients.customersKyc.createBeneficialOwner({
        platformId,
        customerId: b.customerId,
        roles: b.roles,
        ownershipPercentage: b.ownershipPercentage ?? 0,
        personalInfo: personalInfoToProto(b.personalInfo),
      });
      return reply.code(201).send(ownerToJson(res.beneficialOwner));
    },
  );

  app.get(
    "/beneficial-owners",
    {
      schema: {
        summary: "List beneficial owners",
        description: "Pages through the owners of one business customer (customerId required), newest first. Needs VIEW.",
        tags,
        querystring: ListBeneficialOwnersQuery,
        response: { 200: BeneficialOwnerListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.customersKyc.listBeneficialOwners({
        platformId,
        customerId: q.customerId,
        page: pageOf(q),
      });
      return listEnvelope(res.beneficialOwners.map(ownerToJson), res.pageInfo);
    },
  );

  app.get(
    "/beneficial-owners/:beneficialOwnerId",
    {
      schema: {
        summary: "Get a beneficial owner",
        description: "Needs VIEW.",
        tags,
        params: BeneficialOwnerIdParams,
        response: { 200: Ref("BeneficialOwner", "The owner."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.customersKyc.getBeneficialOwner({ platformId, beneficialOwnerId: request.params.beneficialOwnerId });
      return ownerToJson(res.beneficialOwner);
    },
  );

  app.patch(
    "/beneficial-owners/:beneficialOwnerId",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Update a beneficial owner",
        description: "Changes the fields present; a changed lastName re-runs KYC while it is UNVERIFIED or PENDING (APPROVED and REJECTED are final). Needs MANAGE.",
        tags,
        params: BeneficialOwnerIdParams,
        body: UpdateBeneficialOwnerBody,
        response: { 200: Ref("BeneficialOwner", "The owner after the change."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const b = request.body ?? {};
      const res = await clients.customersKyc.updateBeneficialOwner({
        platformId,
        beneficialOwnerId: request.params.beneficialOwnerId,
        roles: b.roles ? create(RoleListSchema, { roles: b.roles }) : undefined,
        ownershipPercentage: b.ownershipPercentage,
        personalInfo: b.personalInfo ? personalInfoToProto(b.personalInfo) : undefined,
      });
      return ownerToJson(res.beneficialOwner);
    },
  );
}
