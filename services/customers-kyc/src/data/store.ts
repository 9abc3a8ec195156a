import { inTransaction } from "@corridor/kit";
import type { Kysely, Transaction } from "kysely";
import type { Store, Transact } from "../domain/ports.js";
import { countCustomers, findLiveCustomerByUma, getCustomer, insertCustomer, listCustomers, liveCustomersWithoutUma, updateCustomer } from "./customers.js";
import { getInvitation, insertInvitation, updateInvitation } from "./invitations.js";
import { completeKycLink, expireOpenKycLinks, getKycLinkByToken, insertKycLink } from "./kyc-links.js";
import { allOwnersOf, countOwners, getOwner, insertOwner, listOwners, updateOwner } from "./owners.js";
import {
  countDocuments,
  deleteDocument,
  getDocument,
  getDocumentContent,
  getReview,
  insertDocument,
  insertReview,
  listDocuments,
  listReviews,
  markDocumentsUsed,
  openReviewOf,
  replaceDocument,
  reviewsOfCustomer,
  updateReview,
} from "./reviews.js";
import type { CustomersKycDatabase } from "./tables.js";
import { countVerifications, getVerification, insertVerification, listVerifications, updateVerification } from "./verifications.js";

/** The repositories bound to one transaction, in the shape the domain's Store port asks for. */
export function repositories(trx: Transaction<CustomersKycDatabase>): Omit<Store, "events"> {
  return {
    customers: {
      insert: (c) => insertCustomer(trx, c),
      get: (platformId, id, opts) => getCustomer(trx, platformId, id, opts),
      update: (c) => updateCustomer(trx, c),
      findLiveByUma: (platformId, uma) => findLiveCustomerByUma(trx, platformId, uma),
      liveWithoutUma: (platformId, limit) => liveCustomersWithoutUma(trx, platformId, limit),
      list: (f, page) => listCustomers(trx, f, page),
      count: (f) => countCustomers(trx, f),
    },
    verifications: {
      insert: (v) => insertVerification(trx, v),
      update: (v) => updateVerification(trx, v),
      get: (platformId, id) => getVerification(trx, platformId, id),
      list: (f, page) => listVerifications(trx, f, page),
      count: (f) => countVerifications(trx, f),
    },
    owners: {
      insert: (o) => insertOwner(trx, o),
      get: (platformId, id, opts) => getOwner(trx, platformId, id, opts),
      update: (o) => updateOwner(trx, o),
      allOf: (platformId, customerId) => allOwnersOf(trx, platformId, customerId),
      list: (platformId, customerId, page) => listOwners(trx, platformId, customerId, page),
      count: (platformId, customerId) => countOwners(trx, platformId, customerId),
    },
    invitations: {
      insert: (i) => insertInvitation(trx, i),
      get: (platformId, code, opts) => getInvitation(trx, platformId, code, opts),
      update: (i) => updateInvitation(trx, i),
    },
    kycLinks: {
      insert: (l) => insertKycLink(trx, l),
      getByToken: (tokenSha256, opts) => getKycLinkByToken(trx, tokenSha256, opts),
      expireOpen: (platformId, customerId, now) => expireOpenKycLinks(trx, platformId, customerId, now),
      complete: (id, now) => completeKycLink(trx, id, now),
    },
    reviews: {
      insert: (r) => insertReview(trx, r),
      update: (r) => updateReview(trx, r),
      get: (id, opts) => getReview(trx, id, opts),
      openOf: (platformId, subjectId, opts) => openReviewOf(trx, platformId, subjectId, opts),
      ofCustomer: (platformId, customerId) => reviewsOfCustomer(trx, platformId, customerId),
      list: (f) => listReviews(trx, f),
    },
    documents: {
      insert: (d, content) => insertDocument(trx, d, content),
      replace: (d, content) => replaceDocument(trx, d, content),
      delete: (id) => deleteDocument(trx, id),
      get: (platformId, id, opts) => getDocument(trx, platformId, id, opts),
      content: (id) => getDocumentContent(trx, id),
      list: (f, page) => listDocuments(trx, f, page),
      count: (f) => countDocuments(trx, f),
      markUsed: (platformId, holders, reviewId) => markDocumentsUsed(trx, platformId, holders, reviewId),
    },
  };
}

/** A Transact over `db`: each unit of work gets repositories and an event sink on one transaction. */
export function transactOver(db: Kysely<CustomersKycDatabase>, events: (trx: Transaction<CustomersKycDatabase>) => Store["events"]): Transact {
  return (work) => inTransaction(db, (trx) => work({ ...repositories(trx), events: events(trx) }));
}
