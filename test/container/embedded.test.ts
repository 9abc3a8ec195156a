// The built image, started through @corridor/testcontainers as a platform's integration suite
// would: the all-in-one system in one container, in the host's network namespace (every byte on
// 127.0.0.1), with fixed sandbox credentials, driven through the public API end to end.
import { CorridorContainer, type StartedCorridorContainer } from "@corridor/testcontainers";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { apiClient, runSmoke, startReceiver, type Receiver } from "./smoke.js";

const image = inject("containerImage");
const reason = inject("containerSkipReason");
const required = inject("containerRequired");

describe.skipIf(!image && !required)(`the image through CorridorContainer (embedded)${image ? "" : ` — skipped: ${reason}`}`, () => {
  let corridor: StartedCorridorContainer;
  let receiver: Receiver;
  let startedInMs = 0;

  beforeAll(async () => {
    if (!image) throw new Error(`the container suites must run here (CI): ${reason}`);
    receiver = await startReceiver();
    const t0 = Date.now();
    corridor = await new CorridorContainer(image.tag)
      .withNetworkMode("host")
      .withCredentials("plat_container_smoke", "container-smoke-secret-0123456789")
      .withEnvironment({ NOTIFICATIONS_DELIVERY_POLL_MS: "200", LOG_LEVEL: "warn" })
      .start();
    startedInMs = Date.now() - t0;
  }, 180_000);
  afterAll(async () => {
    await corridor?.stop();
    await receiver?.close();
  });

  it("is ready on 127.0.0.1 with the credentials it was given, as the non-root user", async () => {
    expect(corridor.getBaseUrl()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(corridor.getApiUrl()).toBe(`${corridor.getBaseUrl()}/2025-10-13`);
    expect(corridor.getConsoleUrl()).toBe(`${corridor.getBaseUrl()}/console/`);
    // The image carries the console's built page (scripts/build.mjs RUNTIME_FILES).
    const consolePage = await fetch(corridor.getConsoleUrl());
    expect(consolePage.status).toBe(200);
    expect(consolePage.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await consolePage.text()).toContain("Corridor console");
    expect(corridor.getClientId()).toBe("plat_container_smoke");
    const ready = await fetch(`${corridor.getBaseUrl()}/readyz`);
    expect(ready.status).toBe(200);
    const config = await fetch(`${corridor.getApiUrl()}/config`, { headers: { authorization: corridor.getAuthorizationHeader() } });
    expect(config.status).toBe(200);
    // PID 1 is node itself (no shell in between), running as the image's user.
    const pid1 = await corridor.exec(["node", "-e", "const s = require('fs').readFileSync('/proc/1/status', 'utf8'); process.stdout.write(`${/Name:\\s+(\\S+)/.exec(s)[1]} ${/Uid:\\s+(\\d+)/.exec(s)[1]}`)"]);
    expect(pid1.output.trim()).toBe("node 1000");
    console.warn(`[container] embedded start-to-ready through CorridorContainer: ${startedInMs} ms`);
  });

  it("runs the smoke: customer, verify, fund, transfer out, clock advance, COMPLETED, webhooks on the host", async () => {
    await runSmoke(apiClient(corridor.getApiUrl(), corridor.getClientId(), corridor.getClientSecret()), receiver);
  }, 120_000);
});
