import { topics } from "@corridor/kit";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { Permission } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectPublicError, fieldsOf, startHarness, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("CreatePlatform", () => {
  it("creates the platform with a bootstrap token that may do everything", async () => {
    const res = await h.admin.createPlatform({ name: "Acme", environment: Environment.SANDBOX, isRegulatedFinancialInstitution: true });
    expect(res.platform).toMatchObject({ name: "Acme", environment: Environment.SANDBOX, isRegulatedFinancialInstitution: true });
    expect(res.platform!.id).toMatch(/^Platform:/);
    expect(res.token).toMatchObject({
      platformId: res.platform!.id,
      name: "bootstrap",
      permissions: [Permission.VIEW, Permission.TRANSACT, Permission.MANAGE],
    });
    const who = await h.auth.authenticate({ clientId: res.token!.clientId, clientSecret: res.clientSecret });
    expect(who.platformId).toBe(res.platform!.id);
    expect((await h.auth.getPlatform({ platformId: res.platform!.id })).platform).toEqual(res.platform);
  });

  it("emits PlatformCreated with the platform and its configuration", async () => {
    const res = await h.admin.createPlatform({ name: "Evented", environment: Environment.PRODUCTION });
    const events = (await h.outboxEvents()).filter((e) => e.key === res.platform!.id);
    expect(events.map((e) => e.event.payload.case)).toEqual(["platformCreated"]);
    expect(events[0]!.topic).toBe(topics.platforms);
    const { config } = await h.auth.getPlatformConfig({ platformId: res.platform!.id });
    expect(events[0]!.event.payload.value).toEqual(expect.objectContaining({ platform: res.platform, config }));
  });

  it("uses fixed bootstrap credentials and refuses a client id already in use with 409 CONFLICT", async () => {
    const fixed = { clientId: "sandbox-bootstrap", clientSecret: "sandbox-secret-0123456789" };
    const res = await h.admin.createPlatform({ name: "Fixed", environment: Environment.SANDBOX, ...fixed });
    expect(res.token!.clientId).toBe(fixed.clientId);
    expect(res.clientSecret).toBe(fixed.clientSecret);
    expect((await h.auth.authenticate(fixed)).platformId).toBe(res.platform!.id);

    const before = (await h.admin.listPlatforms({})).platforms.length;
    await expectPublicError(h.admin.createPlatform({ name: "Again", environment: Environment.SANDBOX, ...fixed }), "CONFLICT", "CONFLICT");
    expect((await h.admin.listPlatforms({})).platforms).toHaveLength(before);
  });

  it("refuses the client id of a deleted token too", async () => {
    const fixed = { clientId: "reused-after-delete", clientSecret: "s3cret-s3cret" };
    const res = await h.admin.createPlatform({ name: "First", environment: Environment.SANDBOX, ...fixed });
    await h.auth.deleteToken({ platformId: res.platform!.id, tokenId: res.token!.id });
    await expectPublicError(h.admin.createPlatform({ name: "Second", environment: Environment.SANDBOX, ...fixed }), "CONFLICT", "CONFLICT");
  });

  it.each([
    ["an empty name", { name: "", environment: Environment.SANDBOX }, "name"],
    ["no environment", { name: "x", environment: Environment.UNSPECIFIED }, "environment"],
    ["a client id with a colon", { name: "x", environment: Environment.SANDBOX, clientId: "a:b" }, "clientId"],
    ["a secret with a space", { name: "x", environment: Environment.SANDBOX, clientSecret: "a b" }, "clientSecret"],
  ])("rejects %s with 400 INVALID_INPUT", async (_what, input, field) => {
    const err = await expectPublicError(h.admin.createPlatform(input), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(err)).toEqual([field]);
  });
});

describe("ListPlatforms and GetPlatform", () => {
  it("lists every platform oldest first", async () => {
    h.clock.advance(1000);
    const a = await h.admin.createPlatform({ name: "Older", environment: Environment.SANDBOX });
    h.clock.advance(1000);
    const b = await h.admin.createPlatform({ name: "Newer", environment: Environment.PRODUCTION });
    const ids = (await h.admin.listPlatforms({})).platforms.map((p) => p.id);
    expect(ids.indexOf(a.platform!.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(a.platform!.id)).toBeLessThan(ids.indexOf(b.platform!.id));
    expect(ids[ids.length - 1]).toBe(b.platform!.id);
  });

  it("answers 404 PLATFORM_NOT_FOUND for an unknown platform", async () => {
    await expectPublicError(h.auth.getPlatform({ platformId: "Platform:missing" }), "NOT_FOUND", "PLATFORM_NOT_FOUND");
  });

  it("answers 404 when creating a token for an unknown platform", async () => {
    await expectPublicError(h.auth.createToken({ platformId: "Platform:missing", name: "x", permissions: [Permission.VIEW] }), "NOT_FOUND", "PLATFORM_NOT_FOUND");
  });
});
