import { createClient } from "@connectrpc/connect";
import { SERVICE_NAMES, type ServiceName, type TransportFor } from "@corridor/kit";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@corridor/proto/grpc/health/v1/health_pb.js";
import type { FastifyInstance } from "fastify";
import { Type } from "typebox";

const READY_TIMEOUT_MS = 2_000;

const ServiceStatuses = Type.Record(Type.String(), Type.String({ description: "SERVING, NOT_SERVING, UNKNOWN, SERVICE_UNKNOWN or UNREACHABLE." }), {
  description: "grpc.health.v1 status of each service.",
});

/**
 * Probes outside the versioned API: liveness says the process answers, readiness says every
 * service the gateway depends on answers grpc.health.v1 Check with SERVING.
 */
export function healthRoutes(app: FastifyInstance, transportFor: TransportFor, isDraining: () => boolean = () => false): void {
  const clients = SERVICE_NAMES.map((name) => [name, createClient(Health, transportFor(name))] as const);

  app.get(
    "/healthz",
    {
      config: { auth: "none", rateLimit: false },
      schema: {
        description: "Liveness: the gateway process answers.",
        response: { 200: Type.Object({ status: Type.Literal("ok", { description: "Always ok." }) }, { description: "Alive." }) },
      },
    },
    async () => ({ status: "ok" as const }),
  );

  app.get(
    "/readyz",
    {
      config: { auth: "none", rateLimit: false },
      schema: {
        description: "Readiness: every service answers grpc.health.v1 SERVING; 503 names the ones that do not, or says the gateway is draining.",
        response: {
          200: Type.Object(
            { status: Type.Literal("ready", { description: "Every service serves." }), services: ServiceStatuses },
            { description: "Ready." },
          ),
          503: Type.Object(
            {
              status: Type.Integer({ description: "503." }),
              code: Type.String({ description: "NOT_READY." }),
              message: Type.String({ description: "Which services are not serving." }),
              details: Type.Object(
                {
                  notServing: Type.Array(Type.String({ description: "A service name." }), { description: "Services not serving." }),
                  services: ServiceStatuses,
                },
                { description: "Per-service status." },
              ),
            },
            { description: "Not ready, in the error shape." },
          ),
        },
      },
    },
    async (_request, reply) => {
      if (isDraining()) {
        return reply.code(503).send({ status: 503, code: "NOT_READY", message: "The gateway is shutting down", details: { notServing: [], services: {} } });
      }
      const results = await Promise.all(
        clients.map(async ([name, client]): Promise<[ServiceName, string]> => {
          try {
            const res = await client.check({ service: "" }, { timeoutMs: READY_TIMEOUT_MS });
            return [name, Status[res.status] ?? "UNKNOWN"];
          } catch {
            return [name, "UNREACHABLE"];
          }
        }),
      );
      const services = Object.fromEntries(results);
      const notServing = results.filter(([, s]) => s !== "SERVING").map(([n]) => n);
      if (notServing.length === 0) return { status: "ready" as const, services };
      return reply.code(503).send({
        status: 503,
        code: "NOT_READY",
        message: `Not serving: ${notServing.join(", ")}`,
        details: { notServing, services },
      });
    },
  );
}
