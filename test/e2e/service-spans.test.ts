import { createClient } from "@connectrpc/connect";
import { SpanKind, trace } from "@opentelemetry/api";
import { createLogger, installTestTracing, SERVICE_NAMES, type ReadableSpan } from "@corridor/kit";
import { startEmbedded, type EmbeddedSystem } from "@corridor/embedded";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFreshDatabase } from "../infra/databases.js";
import { rpcName, serviceProbes } from "../support/service-probes.js";

// Every service's routes keep the host's interceptors: a per-service router option would replace
// them and the service would emit no server spans (issue 15: customers-kyc did). Spans are
// collected in this process, so the system runs in-process (the e2e-split project excludes this file).
describe("server spans of every service", () => {
  const exporter = installTestTracing();
  let system: EmbeddedSystem;
  let fresh: Awaited<ReturnType<typeof createFreshDatabase>> | undefined;
  let platformId: string;

  beforeAll(async () => {
    fresh = process.env.DATABASE_URL ? await createFreshDatabase(process.env.DATABASE_URL, "corridor_spans", { migrated: true }) : undefined;
    system = await startEmbedded({ log: createLogger("spans-test", "warn"), databaseUrl: fresh?.url, httpHost: "127.0.0.1", httpPort: 0 });
    const admin = createClient(PlatformAdminService, system.transportFor("auth-sessions"));
    platformId = (await admin.createPlatform({ name: "spans", environment: Environment.SANDBOX })).platform!.id;
  });
  afterAll(async () => {
    await system?.stop();
    await fresh?.drop();
  });

  it("the probes cover every service", () => {
    expect(serviceProbes.map((p) => p.service).sort()).toEqual([...SERVICE_NAMES].sort());
  });

  it("puts one RPC of every service, server span under client span, in the caller's trace", async () => {
    exporter.reset();
    const tracer = trace.getTracer("service-spans-test");
    const traceId = await tracer.startActiveSpan("call every service", async (root) => {
      for (const p of serviceProbes) {
        const client = createClient(p.desc, system.transportFor(p.service)) as unknown as Record<string, (req: unknown) => Promise<unknown>>;
        await client[p.method.localName]!(p.request(platformId));
      }
      root.end();
      return root.spanContext().traceId;
    });

    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const parentOf = (s: ReadableSpan) => byId.get(s.parentSpanContext?.spanId ?? "");
    const seen = spans.map((s) => `${SpanKind[s.kind]}:${s.name}`).join(", ");
    for (const p of serviceProbes) {
      // A service may call another on the way (notifications asks the sandbox its clock), so an
      // RPC's name can appear more than once in the trace: the probe's own call is the one whose
      // client span the root opened.
      const servers = spans.filter((s) => s.kind === SpanKind.SERVER && s.name === rpcName(p));
      expect(servers.length, `${p.service}: a server span ${rpcName(p)} among ${seen}`).toBeGreaterThan(0);
      const server = servers.find((s) => parentOf(parentOf(s) ?? s)?.name === "call every service") ?? servers[0]!;
      const client = parentOf(server);
      expect(client?.kind, `${p.service}: the server span's parent is the caller's client span`).toBe(SpanKind.CLIENT);
      expect(parentOf(client!)?.name).toBe("call every service");
    }
  });
});
