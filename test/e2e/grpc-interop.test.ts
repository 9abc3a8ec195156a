import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { Health, HealthCheckRequestSchema, HealthCheckResponse_ServingStatus } from "@corridor/proto/grpc/health/v1/health_pb.js";
import type { ServiceName } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { rpcName, serviceProbes } from "../support/service-probes.js";
import { skipReason, startTestSystem, type TestSystem } from "./harness.js";

// The services speak real gRPC to a stock client: @grpc/grpc-js, a generic client (no runtime proto
// loading) with the generated messages' binary codecs, over h2c, against each split process's port.
// Split mode only (the e2e-embedded project excludes this file: embedded services have no ports).

/** A unary call through grpc-js's generic client: path, binary codecs of the generated schemas. */
function unary<I extends DescMessage, O extends DescMessage>(client: grpc.Client, path: string, input: I, output: O, request: MessageShape<I>): Promise<MessageShape<O>> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      path,
      (req: MessageShape<I>) => Buffer.from(toBinary(input, req)),
      (bytes: Buffer) => fromBinary(output, bytes),
      request,
      new grpc.Metadata(),
      { deadline: Date.now() + 10_000 },
      (err, res) => (err ? reject(err) : resolve(res!)),
    );
  });
}

describe.skipIf(skipReason())("gRPC interop: a stock @grpc/grpc-js client against every service", () => {
  let system: TestSystem;
  let platformId: string;
  const clients: grpc.Client[] = [];
  const clientFor = (service: ServiceName) => {
    const url = new URL(inject("splitSystem")!.serviceUrls[service]);
    const GenericClient = grpc.makeGenericClientConstructor({}, service);
    const client = new GenericClient(`${url.hostname}:${url.port}`, grpc.credentials.createInsecure());
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    system = await startTestSystem();
    platformId = (await system.createPlatform({ name: "grpc interop" })).platformId;
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await system?.stop();
  });

  it.each(serviceProbes.map((p) => [p.service, p] as const))("%s answers one RPC and its grpc.health.v1 Check", async (service, probe) => {
    const client = clientFor(service);
    const health = await unary(client, `/${Health.typeName}/${Health.method.check.name}`, HealthCheckRequestSchema, Health.method.check.output, create(HealthCheckRequestSchema, { service: "" }));
    expect(health.status).toBe(HealthCheckResponse_ServingStatus.SERVING);

    const res = await unary(client, `/${rpcName(probe)}`, probe.method.input, probe.method.output, create(probe.method.input, probe.request(platformId)));
    expect(res.$typeName).toBe(probe.method.output.typeName);
  });

  it("a refusal arrives as a gRPC status with its code", async () => {
    const probe = serviceProbes.find((p) => p.service === "auth-sessions")!;
    const err = await unary(clientFor("auth-sessions"), `/${rpcName(probe)}`, probe.method.input, probe.method.output, create(probe.method.input, probe.request("Platform:00000000-0000-7000-8000-000000000000"))).catch((e: grpc.ServiceError) => e);
    expect((err as grpc.ServiceError).code).toBe(grpc.status.NOT_FOUND);
  });
});
