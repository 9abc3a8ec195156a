import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { Logger } from "@corridor/kit";
import type { FastifyInstance } from "fastify";

/** Where the console is served: outside the versioned API, like the probes. */
export const CONSOLE_PATH = "/console/";

/**
 * The console's built files (packages/console/public, committed; scripts/build.mjs copies them
 * beside the compiled code for the image, at the same path relative to this file).
 */
const PUBLIC_DIR = fileURLToPath(new URL("../../packages/console/public/", import.meta.url));

/**
 * The page loads only its own script and stylesheet and talks only to this origin's API: nothing
 * inline, nothing from elsewhere, never framed.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * Serves the sandbox console at /console/ (GET only, no authentication: the page itself holds no
 * data; it calls the public API with the token the person signs in with). index.html is
 * revalidated on every load (no-cache, ETag); the assets have content hashes in their names and
 * are cached for a year.
 */
export async function registerConsole(app: FastifyInstance, log: Logger, root: string = PUBLIC_DIR): Promise<void> {
  if (!existsSync(root)) {
    log.warn({ root }, "the console's built files are missing: /console/ is not served (node packages/console/build.mjs builds them)");
    return;
  }
  await app.register(async (scope) => {
    scope.addHook("onRoute", (route) => {
      route.config = { ...(route.config ?? {}), auth: "none" };
    });
    scope.addHook("onSend", async (request, reply, payload) => {
      if (!request.url.startsWith(CONSOLE_PATH.slice(0, -1))) return payload;
      reply.header("content-security-policy", CONSOLE_CSP);
      reply.header("x-content-type-options", "nosniff");
      reply.header("referrer-policy", "no-referrer");
      reply.header("x-frame-options", "DENY");
      reply.header("cross-origin-opener-policy", "same-origin");
      return payload;
    });
    // The page's relative asset paths need the trailing slash.
    scope.get(CONSOLE_PATH.slice(0, -1), { schema: { hide: true } }, async (_request, reply) => reply.redirect(CONSOLE_PATH, 301));
    await scope.register(fastifyStatic, {
      root,
      prefix: CONSOLE_PATH,
      decorateReply: false,
      redirect: false,
      index: ["index.html"],
      dotfiles: "deny",
      cacheControl: false,
      setHeaders: (reply, path) => {
        const immutable = path.includes("/assets/") || path.includes("\\assets\\");
        reply.header("cache-control", immutable ? "public, max-age=31536000, immutable" : "no-cache");
      },
    });
  });
}
