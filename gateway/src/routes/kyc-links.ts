import multipart from "@fastify/multipart";
import { errors } from "@corridor/kit";
import { isoFromTimestamp } from "@corridor/kit/rest-json";
import type { KycLinkPage } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { principalOf } from "../auth.js";
import type { ServiceClients } from "../clients.js";
import { errorResponses } from "../schemas/common.js";
import { CustomerIdParams } from "../schemas/customers.js";
import type { Api, RouteDeps } from "./types.js";
import { DOCUMENT_TYPES, MULTIPART_OPTIONS, readUpload } from "./documents.js";
import { escapeHtml, htmlPage, refusalPage, send, type RefusalWording } from "./hosted-page.js";

/** Where the hosted verification page lives: outside the versioned, Basic-auth API. */
export const KYC_PAGE_PREFIX = "/kyc";

const KycLinkBody = Type.Object(
  {
    redirectUrl: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: "Where the page sends the customer once done (an absolute http(s) URL); shown as a link on the result page." }),
    ),
    redirectUri: Type.Optional(
      Type.String({
        format: "uri",
        maxLength: 2048,
        // https only; http only to a loopback host, for local development (as Grid documents).
        pattern: "^(https://|http://(localhost|127\\.0\\.0\\.1|\\[::1\\])([:/?#]|$))",
        description:
          "Grid's name for redirectUrl: where the customer goes once the hosted flow is done. An https URL (http only to localhost / 127.0.0.1 / [::1], for local development); carried into the link flow as redirectUrl is (the result page links to it). Send one of the two.",
        examples: ["https://app.example.com/onboarding/completed"],
      }),
    ),
  },
  { additionalProperties: false, description: "Options of the link; the body may be omitted." },
);

const KycLinkSchema = Type.Object(
  {
    kycUrl: Type.String({ description: "The hosted verification page: hand it to the customer. Single use; it carries its own secret token." }),
    expiresAt: Type.String({ format: "date-time", description: "When the link stops working." }),
    customerId: Type.String({ description: "The customer the link verifies." }),
  },
  { description: "A single-use hosted verification link." },
);

const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 128, description: "The link token." }) });

/** The public origin the client reached this gateway at (X-Forwarded-* honoured when trustProxy is set). */
function originOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** Grid's POST /customers/{customerId}/kyc-link: the API side (HTTP Basic, MANAGE). */
export function kycLinkRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/customers/:customerId/kyc-link",
    {
      config: { permission: "MANAGE" },
      // Grid's SDK may send no body at all: no body means no options.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        summary: "Create a hosted verification link",
        description:
          "Issues a single-use hosted KYC/KYB page for the customer (the operator's KYC link flow), served by this Corridor at kycUrl without credentials; the token in the URL is the credential. It expires after CORRIDOR_KYC_LINK_TTL_SECONDS (default 24 h) and a new link voids the customer's older open ones. Creating it changes nothing; the customer's status changes only when the page is completed, which runs the verification (sandbox: the suffix rule of POST /verifications). A customer still missing data keeps its link open and the page lists what is missing. APPROVED or REJECTED customers → 400 CUSTOMER_ALREADY_APPROVED / CUSTOMER_ALREADY_REJECTED; deleted → 410 CUSTOMER_DELETED. Production platforms: completing the page submits the customer (and a business's owners) to the operator's KYC review and the status becomes PENDING until the operator decides (docs/kyc.md); a regulated production platform → 400 KYC_MANAGED_BY_PLATFORM (it sets kycStatus itself). Needs MANAGE.",
        tags: ["Customers"],
        params: CustomerIdParams,
        body: KycLinkBody,
        response: { 200: KycLinkSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const { redirectUrl, redirectUri } = request.body;
      if (redirectUrl !== undefined && redirectUri !== undefined && redirectUrl !== redirectUri) {
        throw errors.invalidInput([{ field: "body.redirectUri", reason: "differs from redirectUrl (the same option under Grid's name): send one" }]);
      }
      const res = await clients.customersKyc.createKycLink({ platformId, customerId: request.params.customerId, redirectUrl: redirectUri ?? redirectUrl ?? "" });
      return {
        kycUrl: `${originOf(request)}${KYC_PAGE_PREFIX}/${encodeURIComponent(res.token)}`,
        expiresAt: isoFromTimestamp(res.expiresAt),
        customerId: res.customerId,
      };
    },
  );
}

/** The page's documents: those uploaded so far and a form to add one. */
function documentsSection(p: KycLinkPage, token: string): string {
  const items = p.documents.map((d) => `<li>${escapeHtml(d.documentType)}${d.side ? ` (${escapeHtml(d.side)})` : ""}: ${escapeHtml(d.fileName)}</li>`).join("");
  const options = DOCUMENT_TYPES.map((t) => `<option value="${t}">${t.replace(/_/g, " ").toLowerCase()}</option>`).join("");
  return (
    `<h2>Documents</h2>${items ? `<ul id="documents">${items}</ul>` : `<p class="muted">No documents yet.</p>`}` +
    `<form method="post" enctype="multipart/form-data" action="${KYC_PAGE_PREFIX}/${encodeURIComponent(token)}/documents">` +
    `<p><label>Type <select name="documentType">${options}</select></label> <label>Side <select name="side"><option value="">—</option><option value="FRONT">front</option><option value="BACK">back</option></select></label></p>` +
    `<p><label>Issuing country <input name="country" maxlength="2" size="3" required></label></p>` +
    `<p><input type="file" name="file" accept="application/pdf,image/jpeg,image/png" required> <button type="submit">Upload</button></p>` +
    `<p class="muted">PDF, JPEG or PNG.</p></form>`
  );
}

const kindOf = (p: KycLinkPage) => (p.customerType === "BUSINESS" ? "business verification (KYB)" : "identity verification (KYC)");

/** How the KYC page words a refused service call. */
const KYC_REFUSALS: RefusalWording = {
  titles: {
    KYC_LINK_NOT_FOUND: "This verification link does not exist",
    KYC_LINK_USED: "This verification link was already used",
    KYC_LINK_EXPIRED: "This verification link has expired",
    CUSTOMER_DELETED: "This verification link is no longer valid",
    CUSTOMER_ALREADY_APPROVED: "Your verification is already complete",
    CUSTOMER_ALREADY_REJECTED: "Your verification was already decided",
  },
  rejectedUpload: { title: "This document was not accepted", hint: "Go back and choose another file." },
  hint: "Ask the service that sent you this link for a new one.",
};

/**
 * The hosted page (no credentials: the token in the URL is the credential). GET shows it; POST
 * completes it, which runs the verification once. Registered outside the versioned API.
 */
export async function kycPageRoutes(app: FastifyInstance, clients: ServiceClients): Promise<void> {
  await app.register(async (page) => {
    // The page's upload form posts multipart/form-data (a document); its submit button, urlencoded.
    await page.register(multipart, MULTIPART_OPTIONS);
    // The page's own form posts application/x-www-form-urlencoded; its fields are not read.
    page.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: 1024 }, (_request, _body, done) => done(null, {}));
    const config = { auth: "none" as const };
    const schema = { hide: true, params: TokenParams };

    page.get<{ Params: { token: string } }>(`${KYC_PAGE_PREFIX}/:token`, { config, schema }, async (request, reply) => {
      let p: KycLinkPage | undefined;
      try {
        p = (await clients.customersKyc.getKycLinkPage({ token: request.params.token })).page;
      } catch (err) {
        return refusalPage(reply, err, KYC_REFUSALS);
      }
      if (!p) throw new Error("customers-kyc answered without a page");
      const body =
        `<p>Hello ${escapeHtml(p.displayName || "there")}, please complete your ${kindOf(p)}.</p>` +
        `<p class="muted">Current status: ${escapeHtml(p.verificationStatus)}. This link works once and expires at ${escapeHtml(isoFromTimestamp(p.expiresAt))}.</p>` +
        documentsSection(p, request.params.token) +
        `<form method="post" action="${KYC_PAGE_PREFIX}/${encodeURIComponent(request.params.token)}"><button type="submit">Submit for verification</button></form>`;
      return send(reply, 200, htmlPage("Verify your identity", body));
    });

    // An upload from the page's form: stored as the customer's document, then back to the page.
    page.post<{ Params: { token: string } }>(`${KYC_PAGE_PREFIX}/:token/documents`, { config, schema }, async (request, reply) => {
      try {
        const document = await readUpload(request);
        await clients.customersKyc.uploadKycLinkDocument({ token: request.params.token, document });
      } catch (err) {
        return refusalPage(reply, err, KYC_REFUSALS);
      }
      return reply.code(303).header("location", `${KYC_PAGE_PREFIX}/${encodeURIComponent(request.params.token)}`).header("cache-control", "no-store").send();
    });

    page.post<{ Params: { token: string } }>(`${KYC_PAGE_PREFIX}/:token`, { config, schema }, async (request, reply) => {
      let done;
      try {
        done = await clients.customersKyc.completeKycLink({ token: request.params.token });
      } catch (err) {
        return refusalPage(reply, err, KYC_REFUSALS);
      }
      const p = done.page!;
      const v = done.verification!;
      const back = p.redirectUrl ? `<p><a href="${escapeHtml(p.redirectUrl)}">Continue</a></p>` : "";
      if (v.verificationStatus === "RESOLVE_ERRORS") {
        const items = v.errors.map((e) => `<li>${escapeHtml(e.reason)}</li>`).join("");
        return send(reply, 200, htmlPage("More information is needed", `<p>Your details are incomplete:</p><ul>${items}</ul><p class="muted">Once they are added, open this link again.</p>${back}`));
      }
      return send(reply, 200, htmlPage("Verification submitted", `<p>Your ${kindOf(p)} status is now <strong id="status">${escapeHtml(p.verificationStatus)}</strong>.</p>${back}`));
    });
  });
}

