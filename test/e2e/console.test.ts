import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mode, skipReason, startTestSystem, type TestSystem } from "./harness.js";

/** The gateway serves the console in every run mode (the journeys in a browser: test/console). */
describe.skipIf(skipReason())(`the console page (${mode})`, () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem();
  });
  afterAll(async () => system?.stop());

  it("answers /console/ and its assets without credentials, under a strict CSP; the page's API calls need the token", async () => {
    const page = await system.raw("GET", "/console/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const assets = [...String(page.body).matchAll(/(?:src|href)="(assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
    expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
    for (const asset of assets) {
      const res = await system.raw("GET", `/console/${asset}`);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    }
    expect((await system.raw("GET", "/2025-10-13/config")).status).toBe(401);
  });
});
