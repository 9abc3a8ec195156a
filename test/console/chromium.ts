import { accessSync, constants } from "node:fs";

/**
 * The Chromium the browser suite drives: CORRIDOR_CHROMIUM, else Debian's package (`apt-get
 * install chromium`, which .ci/run does when it is missing) or a Chrome on the usual paths. Nothing
 * is downloaded: playwright-core only drives a browser that is already on the machine.
 */
export function findChromium(): { path: string; reason: "" } | { path: undefined; reason: string } {
  if (process.env.CORRIDOR_BROWSER_TESTS === "off") return { path: undefined, reason: "CORRIDOR_BROWSER_TESTS=off" };
  const candidates = [process.env.CORRIDOR_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"].filter((p): p is string => !!p);
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      return { path, reason: "" };
    } catch {
      // not there
    }
  }
  return {
    path: undefined,
    reason: `no Chromium on this machine (looked for ${candidates.join(", ")}; install Debian's package with \`apt-get install chromium\`, or set CORRIDOR_CHROMIUM)`,
  };
}

/** In CI the suite must run: a missing browser is then a failure, not a skip (as for the container suites). */
export const browserRequired = process.env.CI === "true" && process.env.CORRIDOR_BROWSER_TESTS !== "off";
