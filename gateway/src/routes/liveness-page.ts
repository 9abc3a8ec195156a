import multipart from "@fastify/multipart";
import { errors } from "@corridor/kit";
import { isoFromTimestamp } from "@corridor/kit/rest-json";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { ServiceClients } from "../clients.js";
import { HttpError } from "../http-status.js";
import { multipartRefusal } from "../multipart.js";
import { escapeHtml, htmlPage, refusalPage, send, type RefusalWording } from "./hosted-page.js";

/**
 * The hosted liveness page of an SCA factor reset (docs/sca.md, "Factor reset"): the reset's
 * verificationLink. No credentials: the token in the URL is the credential (never logged; the
 * kit's log scrubber removes it from request URLs). A production platform's end user uploads a
 * selfie for the operator's review; a sandbox platform's page has pass / fail controls instead.
 */
export const LIVENESS_PAGE_PREFIX = "/liveness";

/** A selfie is a photo: 10 MiB at most (the service checks the limit and the bytes again). */
const SELFIE_CEILING_BYTES = 10 * 1024 * 1024;

const DecisionBody = Type.Object({ outcome: Type.String({ maxLength: 8, description: "PASS or FAIL." }) }, { description: "The sandbox page's control." });
const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 128, description: "The liveness page's token." }) });

/** How the liveness page words a refused service call. */
const LIVENESS_REFUSALS: RefusalWording = {
  titles: {
    LIVENESS_CHECK_NOT_FOUND: "This verification link does not exist",
    LIVENESS_CHECK_EXPIRED: "This verification link has expired",
    LIVENESS_CHECK_SUBMITTED: "Your photo was already submitted",
    INVALID_STATE_TRANSITION: "This check was already decided",
  },
  rejectedUpload: { title: "This photo was not accepted", hint: "Go back and take another photo." },
  hint: "Ask the service that sent you this link to start again.",
};

const STATUS_TEXT: Record<string, string> = {
  AWAITING_SUBMISSION: "waiting for your photo",
  SUBMITTED: "submitted: a person is reviewing it",
  APPROVED: "passed",
  REJECTED: "failed",
};

/** One file part named `file` (the selfie); no other parts. */
async function readSelfie(request: FastifyRequest): Promise<{ contentType: string; content: Buffer }> {
  if (!request.isMultipart()) throw new HttpError(415, "UNSUPPORTED_MEDIA_TYPE", "Send the photo as multipart/form-data (the file in `file`)", {});
  let file: { contentType: string; content: Buffer } | undefined;
  const unknown: string[] = [];
  try {
    for await (const part of request.parts()) {
      if (part.type === "file" && part.fieldname === "file" && !file) file = { contentType: part.mimetype ?? "", content: await part.toBuffer() };
      else {
        if (part.type === "file") await part.toBuffer();
        unknown.push(part.fieldname);
      }
    }
  } catch (err) {
    multipartRefusal(err, { fileField: "file", ceilingBytes: SELFIE_CEILING_BYTES, what: "a selfie upload" });
  }
  const problems = unknown.map((f) => ({ field: f, reason: "is not a field of a selfie upload" }));
  if (!file) problems.push({ field: "file", reason: "is required (a file part named file)" });
  if (problems.length) throw errors.invalidInput(problems);
  return file!;
}

export async function livenessPageRoutes(app: FastifyInstance, clients: ServiceClients): Promise<void> {
  await app.register(async (page) => {
    await page.register(multipart, { limits: { fileSize: SELFIE_CEILING_BYTES, files: 1, fields: 2, fieldSize: 64, parts: 3, headerPairs: 100 }, throwFileSizeLimit: true });
    // The sandbox controls post application/x-www-form-urlencoded: outcome=PASS|FAIL.
    page.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: 256 }, (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))));
    const config = { auth: "none" as const };
    const schema = { hide: true, params: TokenParams };
    const here = (token: string) => `${LIVENESS_PAGE_PREFIX}/${encodeURIComponent(token)}`;

    page.get<{ Params: { token: string } }>(`${LIVENESS_PAGE_PREFIX}/:token`, { config, schema }, async (request, reply) => {
      let p;
      try {
        p = await clients.liveness.getLivenessPage({ token: request.params.token });
      } catch (err) {
        return refusalPage(reply, err, LIVENESS_REFUSALS);
      }
      const status = `<p>Status: <strong id="status">${escapeHtml(p.status)}</strong> (${escapeHtml(STATUS_TEXT[p.status] ?? p.status)}). This link works until ${escapeHtml(isoFromTimestamp(p.expiresAt))}.</p>`;
      let body = status;
      if (p.status === "AWAITING_SUBMISSION" && p.environment === "SANDBOX") {
        body +=
          `<p>Sandbox: no real check is made. Choose the outcome.</p>` +
          `<form method="post" action="${here(request.params.token)}/decision"><button type="submit" name="outcome" value="PASS">Pass liveness</button> ` +
          `<button type="submit" name="outcome" value="FAIL">Fail liveness</button></form>`;
      } else if (p.status === "AWAITING_SUBMISSION") {
        body +=
          `<p>Take a clear photo of your face (a selfie), in good light and without sunglasses. A person compares it with the identity documents you gave when you signed up.</p>` +
          `<form method="post" enctype="multipart/form-data" action="${here(request.params.token)}/selfie">` +
          `<p><input type="file" name="file" accept="image/jpeg,image/png" capture="user" required> <button type="submit">Submit photo</button></p>` +
          `<p class="muted">JPEG or PNG, at most 10 MiB.</p></form>`;
      }
      return send(reply, 200, htmlPage("Confirm it is you", body));
    });

    page.post<{ Params: { token: string } }>(`${LIVENESS_PAGE_PREFIX}/:token/selfie`, { config, schema: { ...schema, consumes: ["multipart/form-data"] } }, async (request, reply) => {
      try {
        const selfie = await readSelfie(request);
        await clients.liveness.submitLivenessSelfie({ token: request.params.token, contentType: selfie.contentType, content: selfie.content });
      } catch (err) {
        return refusalPage(reply, err, LIVENESS_REFUSALS);
      }
      return reply.code(303).header("location", here(request.params.token)).header("cache-control", "no-store").send();
    });

    page.post<{ Params: { token: string }; Body: { outcome?: string } }>(`${LIVENESS_PAGE_PREFIX}/:token/decision`, { config, schema: { ...schema, consumes: ["application/x-www-form-urlencoded"], body: DecisionBody } }, async (request, reply) => {
      try {
        await clients.liveness.decideSandboxLiveness({ token: request.params.token, outcome: String(request.body?.outcome ?? "") });
      } catch (err) {
        return refusalPage(reply, err, LIVENESS_REFUSALS);
      }
      return reply.code(303).header("location", here(request.params.token)).header("cache-control", "no-store").send();
    });
  });
}
