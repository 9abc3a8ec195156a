import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { Permission } from "@corridor/proto/corridor/auth_sessions/v1/token_pb.js";
import { topics } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectPublicError, fieldsOf, startHarness, ts, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("Authenticate", () => {
  it("answers the principal and the secret's SHA-256 for a valid credential", async () => {
    const p = await h.newPlatform({ environment: Environment.PRODUCTION });
    const who = await h.auth.authenticate({ clientId: p.clientId, clientSecret: p.clientSecret });
    expect(who.platformId).toBe(p.platformId);
    expect(who.tokenId).toBe(p.tokenId);
    expect(who.environment).toBe(Environment.PRODUCTION);
    expect(who.permissions).toEqual([Permission.VIEW, Permission.TRANSACT, Permission.MANAGE]);
    expect(who.secretSha256).toBe(createHash("sha256").update(p.clientSecret).digest("hex"));
  });

  it("rejects a wrong secret with 401 UNAUTHORIZED", async () => {
    const p = await h.newPlatform();
    const call = h.auth.authenticate({ clientId: p.clientId, clientSecret: p.clientSecret + "x" });
    await expectPublicError(call, "UNAUTHENTICATED", "UNAUTHORIZED");
    await expect(call).rejects.toSatisfy((e) => ConnectError.from(e).code === Code.Unauthenticated);
  });

  it("rejects an unknown client id and empty credentials with 401", async () => {
    await expectPublicError(h.auth.authenticate({ clientId: "cli_nobody", clientSecret: "whatever" }), "UNAUTHENTICATED", "UNAUTHORIZED");
    await expectPublicError(h.auth.authenticate({ clientId: "", clientSecret: "" }), "UNAUTHENTICATED", "UNAUTHORIZED");
  });

  it("rejects a deleted token's credential with 401", async () => {
    const p = await h.newPlatform();
    const created = await h.auth.createToken({ platformId: p.platformId, name: "doomed", permissions: [Permission.VIEW] });
    await h.auth.authenticate({ clientId: created.token!.clientId, clientSecret: created.clientSecret });
    await h.auth.deleteToken({ platformId: p.platformId, tokenId: created.token!.id });
    await expectPublicError(
      h.auth.authenticate({ clientId: created.token!.clientId, clientSecret: created.clientSecret }),
      "UNAUTHENTICATED",
      "UNAUTHORIZED",
    );
  });
});

describe("CreateToken", () => {
  it("creates a token with a fresh client id and a 32-byte base64url secret", async () => {
    const p = await h.newPlatform();
    const res = await h.auth.createToken({ platformId: p.platformId, name: "ops", permissions: [Permission.VIEW, Permission.TRANSACT] });
    expect(res.token).toMatchObject({ platformId: p.platformId, name: "ops", permissions: [Permission.VIEW, Permission.TRANSACT] });
    expect(res.token!.id).toMatch(/^Token:/);
    expect(res.token!.clientId).toMatch(/^cli_[A-Za-z0-9_-]{22}$/);
    expect(Buffer.from(res.clientSecret, "base64url")).toHaveLength(32);
    const who = await h.auth.authenticate({ clientId: res.token!.clientId, clientSecret: res.clientSecret });
    expect(who.permissions).toEqual([Permission.VIEW, Permission.TRANSACT]);
  });

  it("never stores the secret in clear", async () => {
    const p = await h.newPlatform();
    const res = await h.auth.createToken({ platformId: p.platformId, name: "hidden", permissions: [Permission.VIEW] });
    const rows = await h.db.root.withSchema("auth_sessions").selectFrom("tokens").selectAll().where("id", "=", res.token!.id).execute();
    expect(JSON.stringify(rows)).not.toContain(res.clientSecret);
  });

  it.each([
    ["an empty name", { name: "", permissions: [Permission.VIEW] }, "name"],
    ["a blank name", { name: "   ", permissions: [Permission.VIEW] }, "name"],
    ["a 256-character name", { name: "n".repeat(256), permissions: [Permission.VIEW] }, "name"],
    ["no permissions", { name: "x", permissions: [] }, "permissions"],
    ["a duplicate permission", { name: "x", permissions: [Permission.VIEW, Permission.VIEW] }, "permissions"],
    ["an unspecified permission", { name: "x", permissions: [Permission.UNSPECIFIED] }, "permissions"],
    ["an unknown permission", { name: "x", permissions: [99 as Permission] }, "permissions"],
  ])("rejects %s with 400 INVALID_INPUT naming the field", async (_what, input, field) => {
    const p = await h.newPlatform();
    const err = await expectPublicError(h.auth.createToken({ platformId: p.platformId, ...input }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(err)).toContain(field);
  });

  it("accepts a 255-character name", async () => {
    const p = await h.newPlatform();
    const res = await h.auth.createToken({ platformId: p.platformId, name: "n".repeat(255), permissions: [Permission.MANAGE] });
    expect(res.token!.name).toHaveLength(255);
  });
});

describe("ListTokens", () => {
  it("walks every live token newest first across pages with a constant totalCount", async () => {
    const p = await h.newPlatform();
    const ids = [p.tokenId];
    for (let i = 0; i < 6; i++) {
      // Two tokens per instant, so the id tie-breaker is exercised at page boundaries.
      if (i % 2 === 0) h.clock.advance(1000);
      const res = await h.auth.createToken({ platformId: p.platformId, name: `t${i}`, permissions: [Permission.VIEW] });
      ids.push(res.token!.id);
    }
    const seen: string[] = [];
    let cursor = "";
    for (let page = 0; page < 10; page++) {
      const res = await h.auth.listTokens({ platformId: p.platformId, page: { limit: 3, cursor } });
      expect(res.pageInfo!.totalCount).toBe(7n);
      seen.push(...res.tokens.map((t) => t.id));
      if (!res.pageInfo!.hasMore) {
        expect(res.pageInfo!.nextCursor).toBe("");
        break;
      }
      cursor = res.pageInfo!.nextCursor;
    }
    // uuidv7 ids grow with creation, so newest first is the reverse of creation order.
    expect(seen).toEqual([...ids].reverse());
  });

  it("applies the default page size of 20", async () => {
    const p = await h.newPlatform();
    for (let i = 0; i < 21; i++) await h.auth.createToken({ platformId: p.platformId, name: `d${i}`, permissions: [Permission.VIEW] });
    const res = await h.auth.listTokens({ platformId: p.platformId });
    expect(res.tokens).toHaveLength(20);
    expect(res.pageInfo).toMatchObject({ hasMore: true, totalCount: 22n });
  });

  it("filters by exact name", async () => {
    const p = await h.newPlatform();
    for (const name of ["alpha", "alpha", "alphabet", "beta"]) {
      await h.auth.createToken({ platformId: p.platformId, name, permissions: [Permission.VIEW] });
    }
    const res = await h.auth.listTokens({ platformId: p.platformId, name: "alpha" });
    expect(res.tokens.map((t) => t.name)).toEqual(["alpha", "alpha"]);
    expect(res.pageInfo!.totalCount).toBe(2n);
  });

  it("filters by creation time with inclusive bounds", async () => {
    const p = await h.newPlatform();
    h.clock.set("2030-01-01T00:00:00.000Z");
    await h.auth.createToken({ platformId: p.platformId, name: "jan", permissions: [Permission.VIEW] });
    h.clock.set("2030-02-01T00:00:00.000Z");
    await h.auth.createToken({ platformId: p.platformId, name: "feb", permissions: [Permission.VIEW] });
    h.clock.set("2030-03-01T00:00:00.000Z");
    await h.auth.createToken({ platformId: p.platformId, name: "mar", permissions: [Permission.VIEW] });

    const both = await h.auth.listTokens({
      platformId: p.platformId,
      created: { after: ts("2030-01-01T00:00:00.000Z"), before: ts("2030-02-01T00:00:00.000Z") },
    });
    expect(both.tokens.map((t) => t.name)).toEqual(["feb", "jan"]);
    expect(both.pageInfo!.totalCount).toBe(2n);

    const from = await h.auth.listTokens({ platformId: p.platformId, created: { after: ts("2030-02-01T00:00:00.000Z") } });
    expect(from.tokens.map((t) => t.name)).toEqual(["mar", "feb"]);
  });

  it("filters by last-change time with inclusive bounds", async () => {
    const p = await h.newPlatform();
    h.clock.set("2031-05-01T00:00:00.000Z");
    await h.auth.createToken({ platformId: p.platformId, name: "may", permissions: [Permission.VIEW] });
    h.clock.set("2031-06-01T00:00:00.000Z");
    await h.auth.createToken({ platformId: p.platformId, name: "june", permissions: [Permission.VIEW] });
    const res = await h.auth.listTokens({ platformId: p.platformId, updated: { before: ts("2031-05-01T00:00:00.000Z") } });
    // The bootstrap token was created (and last changed) before May 2031 too.
    expect(res.tokens.map((t) => t.name)).toEqual(["may", "bootstrap"]);
    const after = await h.auth.listTokens({ platformId: p.platformId, updated: { after: ts("2031-06-01T00:00:00.000Z") } });
    expect(after.tokens.map((t) => t.name)).toEqual(["june"]);
  });

  it("leaves deleted tokens out of pages and the count", async () => {
    const p = await h.newPlatform();
    const a = await h.auth.createToken({ platformId: p.platformId, name: "a", permissions: [Permission.VIEW] });
    await h.auth.createToken({ platformId: p.platformId, name: "b", permissions: [Permission.VIEW] });
    await h.auth.deleteToken({ platformId: p.platformId, tokenId: a.token!.id });
    const res = await h.auth.listTokens({ platformId: p.platformId });
    expect(res.tokens.map((t) => t.name)).toEqual(["b", "bootstrap"]);
    expect(res.pageInfo!.totalCount).toBe(2n);
  });

  it("rejects an out-of-range limit and a foreign cursor with 400 INVALID_INPUT", async () => {
    const p = await h.newPlatform();
    expect(fieldsOf(await expectPublicError(h.auth.listTokens({ platformId: p.platformId, page: { limit: 101 } }), "INVALID", "INVALID_INPUT"))).toEqual(["limit"]);
    expect(fieldsOf(await expectPublicError(h.auth.listTokens({ platformId: p.platformId, page: { limit: -1 } }), "INVALID", "INVALID_INPUT"))).toEqual(["limit"]);
    expect(fieldsOf(await expectPublicError(h.auth.listTokens({ platformId: p.platformId, page: { cursor: "garbage" } }), "INVALID", "INVALID_INPUT"))).toEqual(["cursor"]);
  });
});

describe("GetToken and DeleteToken", () => {
  it("reads a live token and answers 404 TOKEN_NOT_FOUND once it is deleted", async () => {
    const p = await h.newPlatform();
    const created = await h.auth.createToken({ platformId: p.platformId, name: "reader", permissions: [Permission.VIEW] });
    const got = await h.auth.getToken({ platformId: p.platformId, tokenId: created.token!.id });
    expect(got.token).toEqual(created.token);

    h.clock.advance(5000);
    const deleted = await h.auth.deleteToken({ platformId: p.platformId, tokenId: created.token!.id });
    expect(deleted.token!.id).toBe(created.token!.id);
    await expectPublicError(h.auth.getToken({ platformId: p.platformId, tokenId: created.token!.id }), "NOT_FOUND", "TOKEN_NOT_FOUND");
    await expectPublicError(h.auth.deleteToken({ platformId: p.platformId, tokenId: created.token!.id }), "NOT_FOUND", "TOKEN_NOT_FOUND");
  });

  it("answers 404 for another platform's token and leaves it untouched", async () => {
    const a = await h.newPlatform({ name: "A" });
    const b = await h.newPlatform({ name: "B" });
    const mine = await h.auth.createToken({ platformId: a.platformId, name: "mine", permissions: [Permission.VIEW] });
    await expectPublicError(h.auth.getToken({ platformId: b.platformId, tokenId: mine.token!.id }), "NOT_FOUND", "TOKEN_NOT_FOUND");
    await expectPublicError(h.auth.deleteToken({ platformId: b.platformId, tokenId: mine.token!.id }), "NOT_FOUND", "TOKEN_NOT_FOUND");
    const listB = await h.auth.listTokens({ platformId: b.platformId });
    expect(listB.tokens.map((t) => t.id)).not.toContain(mine.token!.id);
    expect((await h.auth.getToken({ platformId: a.platformId, tokenId: mine.token!.id })).token!.id).toBe(mine.token!.id);
    await h.auth.authenticate({ clientId: mine.token!.clientId, clientSecret: mine.clientSecret });
  });

  it("emits TokenRevoked to the platform tokens topic when a token is deleted", async () => {
    const p = await h.newPlatform();
    const created = await h.auth.createToken({ platformId: p.platformId, name: "revoked", permissions: [Permission.VIEW] });
    await h.auth.deleteToken({ platformId: p.platformId, tokenId: created.token!.id });
    const revoked = (await h.outboxEvents()).filter((e) => e.event.payload.case === "tokenRevoked" && e.key === p.platformId);
    expect(revoked).toHaveLength(1);
    // Read by no service: not on the topic the ledger, customers-kyc and notifications read.
    expect(revoked[0]!.topic).toBe(topics.platformTokens);
    expect(revoked[0]!.event.eventId).toMatch(/^Event:/);
    expect(revoked[0]!.event.platformId).toBe(p.platformId);
    expect(revoked[0]!.event.payload.value).toMatchObject({ token: { id: created.token!.id, clientId: created.token!.clientId } });
  });
});
