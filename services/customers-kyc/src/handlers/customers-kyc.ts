import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { errors } from "@corridor/kit";
import { PageInfoSchema } from "@corridor/proto/corridor/common/v1/paging_pb.js";
import {
  CancelInvitationResponseSchema,
  ClaimInvitationResponseSchema,
  CompleteKycLinkResponseSchema,
  CreateKycLinkResponseSchema,
  GetKycLinkPageResponseSchema,
  CreateBeneficialOwnerResponseSchema,
  CreateCustomerResponseSchema,
  CreateInvitationResponseSchema,
  CreateVerificationResponseSchema,
  CustomersKycService,
  DeleteCustomerResponseSchema,
  GetBeneficialOwnerResponseSchema,
  GetCustomerResponseSchema,
  GetCustomerSummaryResponseSchema,
  GetInvitationResponseSchema,
  GetVerificationResponseSchema,
  ListBeneficialOwnersResponseSchema,
  ListCustomersResponseSchema,
  ListVerificationsResponseSchema,
  UpdateBeneficialOwnerResponseSchema,
  UpdateCustomerResponseSchema,
  UploadDocumentResponseSchema,
  UploadKycLinkDocumentResponseSchema,
  GetDocumentResponseSchema,
  ListDocumentsResponseSchema,
  ReplaceDocumentResponseSchema,
  DeleteDocumentResponseSchema,
  SendContactVerificationResponseSchema,
  ConfirmContactVerificationResponseSchema,
} from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import type { ContactVerification } from "../domain/contact-verification.js";
import type { Customers } from "../domain/customers.js";
import type { Documents } from "../domain/documents.js";
import { documentInputFromPb, documentToPb } from "./documents.js";
import type { Invitations } from "../domain/invitations.js";
import type { KycLinks } from "../domain/kyc-links.js";
import type { Owners } from "../domain/owners.js";
import type { Page, VerificationStatus } from "../domain/types.js";
import { VERIFICATION_STATUSES } from "../domain/types.js";
import type { Verifications } from "../domain/verifications.js";
import {
  customerInputFromPb,
  customerToPb,
  invitationToPb,
  opt,
  ownerToPb,
  personalInfoFromPb,
  kycLinkPageToPb,
  summaryToPb,
  verificationToPb,
  windowFromPb,
} from "./mappers.js";

export interface UseCases {
  customers: Customers;
  verifications: Verifications;
  owners: Owners;
  invitations: Invitations;
  kycLinks: KycLinks;
  documents: Documents;
  contact: ContactVerification;
}

const pageInfo = (p: Page<unknown>) => create(PageInfoSchema, { hasMore: p.hasMore, nextCursor: p.nextCursor ?? "", totalCount: BigInt(p.totalCount) });
const pageReq = (page: { limit: number; cursor: string } | undefined) => ({ limit: page?.limit, cursor: page?.cursor || undefined });

/** CustomersKycService: maps each RPC onto the use cases and back. */
export function createCustomersKycHandler({ customers, verifications, owners, invitations, kycLinks, documents, contact }: UseCases): ServiceImpl<typeof CustomersKycService> {
  return {
    async getCustomerSummary(req) {
      return create(GetCustomerSummaryResponseSchema, { customer: summaryToPb(await customers.get(req.platformId, req.customerId)) });
    },
    async createCustomer(req) {
      return create(CreateCustomerResponseSchema, { customer: customerToPb(await customers.create(req.platformId, customerInputFromPb(req.customer))) });
    },
    async getCustomer(req) {
      return create(GetCustomerResponseSchema, { customer: customerToPb(await customers.get(req.platformId, req.customerId)) });
    },
    async updateCustomer(req) {
      const c = await customers.update(req.platformId, req.customerId, customerInputFromPb(req.patch));
      return create(UpdateCustomerResponseSchema, { customer: customerToPb(c) });
    },
    async deleteCustomer(req) {
      return create(DeleteCustomerResponseSchema, { customer: customerToPb(await customers.delete(req.platformId, req.customerId)) });
    },
    async listCustomers(req) {
      const type = opt(req.customerType);
      if (type !== undefined && type !== "INDIVIDUAL" && type !== "BUSINESS") {
        throw errors.invalidInput([{ field: "customerType", reason: "must be one of INDIVIDUAL, BUSINESS" }]);
      }
      const page = await customers.list(
        {
          platformId: req.platformId,
          platformCustomerId: opt(req.platformCustomerId),
          customerType: type,
          created: windowFromPb(req.created),
          updated: windowFromPb(req.updated),
          region: opt(req.region),
          currency: opt(req.currency),
          umaAddress: opt(req.umaAddress),
          includeDeleted: req.isIncludingDeleted,
        },
        pageReq(req.page),
      );
      return create(ListCustomersResponseSchema, { customers: page.items.map(customerToPb), pageInfo: pageInfo(page) });
    },

    async createVerification(req) {
      return create(CreateVerificationResponseSchema, { verification: verificationToPb(await verifications.create(req.platformId, req.customerId)) });
    },
    async getVerification(req) {
      return create(GetVerificationResponseSchema, { verification: verificationToPb(await verifications.get(req.platformId, req.verificationId)) });
    },
    async listVerifications(req) {
      const status = opt(req.verificationStatus);
      if (status !== undefined && !(VERIFICATION_STATUSES as readonly string[]).includes(status)) {
        throw errors.invalidInput([{ field: "verificationStatus", reason: `must be one of ${VERIFICATION_STATUSES.join(", ")}` }]);
      }
      const page = await verifications.list(
        { platformId: req.platformId, customerId: opt(req.customerId), verificationStatus: status as VerificationStatus | undefined },
        pageReq(req.page),
      );
      return create(ListVerificationsResponseSchema, { verifications: page.items.map(verificationToPb), pageInfo: pageInfo(page) });
    },

    async createBeneficialOwner(req) {
      const o = await owners.create(req.platformId, {
        customerId: req.customerId,
        roles: [...req.roles],
        ownershipPercentage: req.ownershipPercentage,
        personalInfo: personalInfoFromPb(req.personalInfo),
      });
      return create(CreateBeneficialOwnerResponseSchema, { beneficialOwner: ownerToPb(o) });
    },
    async getBeneficialOwner(req) {
      return create(GetBeneficialOwnerResponseSchema, { beneficialOwner: ownerToPb(await owners.get(req.platformId, req.beneficialOwnerId)) });
    },
    async updateBeneficialOwner(req) {
      const o = await owners.update(req.platformId, req.beneficialOwnerId, {
        roles: req.roles ? [...req.roles.roles] : undefined,
        ownershipPercentage: req.ownershipPercentage,
        personalInfo: req.personalInfo ? personalInfoFromPb(req.personalInfo) : undefined,
      });
      return create(UpdateBeneficialOwnerResponseSchema, { beneficialOwner: ownerToPb(o) });
    },
    async listBeneficialOwners(req) {
      if (!req.customerId) throw errors.invalidInput([{ field: "customerId", reason: "is required" }]);
      const page = await owners.list(req.platformId, req.customerId, pageReq(req.page));
      return create(ListBeneficialOwnersResponseSchema, { beneficialOwners: page.items.map(ownerToPb), pageInfo: pageInfo(page) });
    },

    async createInvitation(req) {
      const i = await invitations.create(req.platformId, {
        inviterUma: req.inviterUma,
        firstName: opt(req.firstName),
        amountToSend: req.amountToSend,
        amountCurrency: opt(req.amountCurrency),
        expiresAt: req.expiresAt ? timestampDate(req.expiresAt) : undefined,
      });
      return create(CreateInvitationResponseSchema, { invitation: invitationToPb(i) });
    },
    async getInvitation(req) {
      return create(GetInvitationResponseSchema, { invitation: invitationToPb(await invitations.get(req.platformId, req.code)) });
    },
    async claimInvitation(req) {
      return create(ClaimInvitationResponseSchema, { invitation: invitationToPb(await invitations.claim(req.platformId, req.code, req.inviteeUma)) });
    },
    async cancelInvitation(req) {
      return create(CancelInvitationResponseSchema, { invitation: invitationToPb(await invitations.cancel(req.platformId, req.code)) });
    },

    async createKycLink(req) {
      const link = await kycLinks.create(req.platformId, req.customerId, req.redirectUrl);
      return create(CreateKycLinkResponseSchema, { token: link.token, expiresAt: timestampFromDate(link.expiresAt), customerId: link.customerId });
    },

    async getKycLinkPage(req) {
      return create(GetKycLinkPageResponseSchema, { page: kycLinkPageToPb(await kycLinks.page(req.token)) });
    },

    async completeKycLink(req) {
      const done = await kycLinks.complete(req.token);
      return create(CompleteKycLinkResponseSchema, { page: kycLinkPageToPb(done.page), verification: verificationToPb(done.verification) });
    },
  
    async uploadKycLinkDocument(req) {
      return create(UploadKycLinkDocumentResponseSchema, { document: documentToPb(await kycLinks.uploadDocument(req.token, documentInputFromPb(req.document))) });
    },
    async uploadDocument(req) {
      return create(UploadDocumentResponseSchema, { document: documentToPb(await documents.upload(req.platformId, documentInputFromPb(req.document))) });
    },
    async getDocument(req) {
      return create(GetDocumentResponseSchema, { document: documentToPb(await documents.get(req.platformId, req.documentId)) });
    },
    async listDocuments(req) {
      const page = await documents.list(req.platformId, opt(req.documentHolder), pageReq(req.page));
      return create(ListDocumentsResponseSchema, { documents: page.items.map(documentToPb), pageInfo: pageInfo(page) });
    },
    async replaceDocument(req) {
      const input = { ...documentInputFromPb(req.document), documentHolder: undefined };
      return create(ReplaceDocumentResponseSchema, { document: documentToPb(await documents.replace(req.platformId, req.documentId, input)) });
    },
    async deleteDocument(req) {
      return create(DeleteDocumentResponseSchema, { document: documentToPb(await documents.delete(req.platformId, req.documentId)) });
    },
    async sendContactVerification(req) {
      await contact.send(req.platformId, req.customerId, req.channel);
      return create(SendContactVerificationResponseSchema, {});
    },
    async confirmContactVerification(req) {
      return create(ConfirmContactVerificationResponseSchema, { customer: customerToPb(await contact.confirm(req.platformId, req.customerId, req.channel, req.code)) });
    },
  };
}
