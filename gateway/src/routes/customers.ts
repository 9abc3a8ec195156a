import { Type } from "typebox";
import { principalOf } from "../auth.js";
import { HttpError } from "../http-status.js";
import { customerBodyToProto, customerToJson } from "../mappers/customers.js";
import { timeRange } from "../mappers/tokens.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { CreateCustomerBody, CustomerIdParams, CustomerListSchema, ListCustomersQuery, UpdateCustomerBody } from "../schemas/customers.js";
import { listEnvelope, pageOf } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Customers"];

export function customerRoutes(app: Api, { clients, endUserTerms }: RouteDeps): void {
  // Declared before /customers/:customerId; the router prefers the static segment anyway.
  app.get(
    "/customers/end-user-terms",
    {
      schema: {
        summary: "Get the end-user terms",
        description:
          "Grid's EndUserTerms: the version and URL of the terms the operator of this deployment publishes for its platforms' customers (CORRIDOR_END_USER_TERMS_URL and CORRIDOR_END_USER_TERMS_VERSION). A deployment whose operator publishes none answers 404 END_USER_TERMS_NOT_CONFIGURED. Needs VIEW.",
        tags,
        response: {
          200: Type.Object(
            {
              version: Type.String({ description: "The version of the terms.", examples: ["1"] }),
              url: Type.String({ format: "uri", description: "Where the operator publishes this version.", examples: ["https://operator.example/legal/end-user-terms"] }),
            },
            { additionalProperties: false, description: "Grid's EndUserTerms." },
          ),
          ...errorResponses,
        },
      },
    },
    async () => {
      if (!endUserTerms) throw new HttpError(404, "END_USER_TERMS_NOT_CONFIGURED", "This deployment publishes no end-user terms (its operator sets CORRIDOR_END_USER_TERMS_URL)", {});
      return { version: endUserTerms.version, url: endUserTerms.url };
    },
  );

  app.post(
    "/customers",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Create a customer",
        description:
          "Creates an INDIVIDUAL or BUSINESS customer. It starts UNVERIFIED (pass POST /verifications before money moves) unless the platform is a regulated financial institution that sends kycStatus/kybStatus. umaAddress defaults to $<platformCustomerId>@<umaDomain>; currencies default to all supported ones. Duplicate platformCustomerId → 409 CONFLICT, duplicate umaAddress → 409 UMA_ADDRESS_EXISTS. Needs MANAGE.",
        tags,
        body: CreateCustomerBody,
        response: { 201: Ref("Customer", "The new customer."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await clients.customersKyc.createCustomer({ platformId, customer: customerBodyToProto(request.body) });
      return reply.code(201).send(customerToJson(res.customer));
    },
  );

  app.get(
    "/customers",
    {
      schema: {
        summary: "List customers",
        description: "Pages through the platform's customers, newest first; deleted ones only with isIncludingDeleted=true. Needs VIEW.",
        tags,
        querystring: ListCustomersQuery,
        response: { 200: CustomerListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.customersKyc.listCustomers({
        platformId,
        page: pageOf(q),
        platformCustomerId: q.platformCustomerId ?? "",
        customerType: q.customerType ?? "",
        created: timeRange(q.createdAfter, q.createdBefore),
        updated: timeRange(q.updatedAfter, q.updatedBefore),
        region: q.region ?? "",
        currency: q.currency ?? "",
        umaAddress: q.umaAddress ?? "",
        isIncludingDeleted: q.isIncludingDeleted ?? false,
      });
      return listEnvelope(res.customers.map(customerToJson), res.pageInfo);
    },
  );

  app.get(
    "/customers/:customerId",
    {
      schema: {
        summary: "Get a customer",
        description: "Reads one customer (a deleted one answers with isDeleted: true). Needs VIEW.",
        tags,
        params: CustomerIdParams,
        response: { 200: Ref("Customer", "The customer."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.customersKyc.getCustomer({ platformId, customerId: request.params.customerId });
      return customerToJson(res.customer);
    },
  );

  app.patch(
    "/customers/:customerId",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Update a customer",
        description: "Changes the fields present (currencies replaces the list). A deleted customer → 410 CUSTOMER_DELETED. Needs MANAGE.",
        tags,
        params: CustomerIdParams,
        body: UpdateCustomerBody,
        response: { 200: Ref("Customer", "The customer after the change."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.customersKyc.updateCustomer({
        platformId,
        customerId: request.params.customerId,
        patch: customerBodyToProto(request.body ?? {}),
      });
      return customerToJson(res.customer);
    },
  );

  app.delete(
    "/customers/:customerId",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Delete a customer",
        description:
          "Soft delete: answers the customer with isDeleted: true; deleting it again → 410 CUSTOMER_DELETED. A customer holding money (a non-zero balance, a hold, or a transaction still in flight) → 409 CUSTOMER_HAS_FUNDS with each account's amounts and those transactions in details. Needs MANAGE.",
        tags,
        params: CustomerIdParams,
        response: { 200: Ref("Customer", "The deleted customer."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.customersKyc.deleteCustomer({ platformId, customerId: request.params.customerId });
      return customerToJson(res.customer);
    },
  );
}
