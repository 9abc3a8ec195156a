import { AppError, appErrorFromConnect } from "@corridor/kit";
import type { FastifyReply } from "fastify";
import { httpStatusOf } from "../http-status.js";

/**
 * What the hosted pages (the KYC link's, kyc-links.ts; the liveness check's, liveness-page.ts)
 * share: their HTML, the headers every page is sent with, and how a refused service call is shown.
 * The pages have no credentials (the token in the URL is the credential) and live outside the
 * versioned API.
 */

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

export function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.4rem}button{font-size:1rem;padding:.6rem 1.2rem;cursor:pointer}.muted{color:#666;font-size:.9rem}
ul{padding-left:1.2rem}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

export function send(reply: FastifyReply, status: number, html: string) {
  return reply
    .code(status)
    .header("content-type", "text/html; charset=utf-8")
    .header("cache-control", "no-store")
    .header("referrer-policy", "no-referrer")
    .header("x-content-type-options", "nosniff")
    .header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    .send(html);
}

/** How a page words its refusals: a title per error code, and what to do next. */
export interface RefusalWording {
  titles: Record<string, string>;
  /** The title of an upload the service refused (INVALID_INPUT, UNSUPPORTED_MEDIA_TYPE), and what to do instead. */
  rejectedUpload: { title: string; hint: string };
  /** What to do after any other refusal. */
  hint: string;
}

/** A refusal of the page's service call as an HTML page at its status; anything else (5xx included) is rethrown. */
export function refusalPage(reply: FastifyReply, err: unknown, wording: RefusalWording) {
  const refusal = err instanceof AppError ? err : appErrorFromConnect(err);
  if (!refusal) throw err;
  const status = httpStatusOf(refusal);
  if (status >= 500) throw err;
  if (refusal.code === "INVALID_INPUT" || refusal.code === "UNSUPPORTED_MEDIA_TYPE") {
    const reasons = ((refusal.details.errors ?? []) as { reason?: string }[]).map((e) => `<li>${escapeHtml(String(e.reason))}</li>`).join("");
    return send(reply, status, htmlPage(wording.rejectedUpload.title, `<p>${escapeHtml(refusal.message)}</p>${reasons ? `<ul>${reasons}</ul>` : ""}<p class="muted">${escapeHtml(wording.rejectedUpload.hint)}</p>`));
  }
  const title = wording.titles[refusal.code] ?? "Verification is not possible right now";
  return send(reply, status, htmlPage(title, `<p>${escapeHtml(refusal.message)}</p><p class="muted">${escapeHtml(wording.hint)}</p>`));
}
