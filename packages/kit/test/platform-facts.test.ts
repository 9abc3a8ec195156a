import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { Environment, PlatformConfigSchema, PlatformSchema } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { describe, expect, it } from "vitest";
import { platformFactsClient } from "../src/clients/platform-facts.js";
import { expectRefusal, fakeService } from "../src/testing/index.js";
import { errors } from "../src/errors.js";

describe("platformFactsClient", () => {
  const updatedAt = new Date("2025-10-13T10:00:00.123Z");
  let getPlatformCalls = 0;
  const transport = fakeService(AuthSessionsService, {
    async getPlatform(req) {
      getPlatformCalls++;
      if (req.platformId === "missing") throw errors.notFound("Platform", req.platformId);
      return { platform: create(PlatformSchema, { id: req.platformId, environment: Environment.PRODUCTION }) };
    },
    async getPlatformConfig(req) {
      return {
        config: create(PlatformConfigSchema, {
          platformId: req.platformId,
          umaDomain: "pay.example",
          webhookEndpoint: "https://hooks.example/w",
          isRegulatedFinancialInstitution: true,
          updatedAt: timestampFromDate(updatedAt),
          supportedCurrencies: [{ currencyCode: "USD", minAmount: 1n, maxAmount: 100n, enabledTransactionTypes: ["OUTGOING"], requiredCounterpartyFields: [{ name: "FULL_NAME", mandatory: true }] }],
        }),
      };
    },
  });

  it("answers environment and config as plain values, remembering the environment", async () => {
    const client = platformFactsClient(() => transport);
    const facts = await client.facts("p1");
    expect(facts).toMatchObject({
      environment: "PRODUCTION",
      umaDomain: "pay.example",
      isRegulated: true,
      webhookEndpoint: "https://hooks.example/w",
      updatedAt,
      version: BigInt(updatedAt.getTime()) * 1_000_000n,
      supportedCurrencies: [{ currencyCode: "USD", minAmount: 1n, maxAmount: 100n, enabledTransactionTypes: ["OUTGOING"], requiredCounterpartyFields: [{ name: "FULL_NAME", mandatory: true }], providerRequiredCustomerFields: [] }],
    });
    await client.environment("p1");
    expect(getPlatformCalls).toBe(1);
  });

  it("passes a refusal through", async () => {
    await expectRefusal(platformFactsClient(() => transport).environment("missing"), "NOT_FOUND", "PLATFORM_NOT_FOUND");
  });
});
