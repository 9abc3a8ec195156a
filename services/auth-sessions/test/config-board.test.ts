import { timestampDate } from "@bufbuild/protobuf/wkt";
import { configVersion, memoryConfigBoard, type ConfigBoard } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectPublicError, startHarness, type Harness } from "./harness.js";

// auth-sessions tells the platform-config board of every change (kit clients/config-board.ts):
// a mark before the transaction, the committed version after it, before the answer.
describe("UpdatePlatformConfig and the config board", () => {
  const real = memoryConfigBoard();
  const calls: string[] = [];
  let markFails = false;
  let publishFails = false;
  const board: ConfigBoard = {
    read: real.read,
    offer: real.offer,
    async markChanging(platformId) {
      calls.push(`mark ${platformId}`);
      if (markFails) throw new Error("redis down");
      await real.markChanging(platformId);
    },
    async publish(platformId, version) {
      calls.push(`publish ${platformId} ${version}`);
      if (publishFails) throw new Error("redis down");
      await real.publish(platformId, version);
    },
  };
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ configBoard: board });
  });
  afterAll(async () => {
    await h?.close();
  });
  const versionOf = async (platformId: string) => configVersion(timestampDate((await h.auth.getPlatformConfig({ platformId })).config!.updatedAt!));

  it("marks the platform changing, then publishes the committed version before answering", async () => {
    const p = await h.newPlatform();
    calls.length = 0;
    const res = await h.auth.updatePlatformConfig({ platformId: p.platformId, umaDomain: "pay.example" });
    const version = configVersion(timestampDate(res.config!.updatedAt!));
    expect(calls).toEqual([`mark ${p.platformId}`, `publish ${p.platformId} ${version}`]);
    expect(await board.read(p.platformId)).toEqual({ kind: "version", version });
  });

  it("offers the version GetPlatformConfig answers with to an empty board, and not over a change in progress", async () => {
    const p = await h.newPlatform();
    expect(await board.read(p.platformId)).toEqual({ kind: "unknown" });
    const version = await versionOf(p.platformId);
    expect(await board.read(p.platformId)).toEqual({ kind: "version", version });
    await real.markChanging(p.platformId);
    await versionOf(p.platformId);
    expect(await board.read(p.platformId)).toEqual({ kind: "changing" });
  });

  it("does not touch the board for a patch that changes nothing", async () => {
    const p = await h.newPlatform();
    calls.length = 0;
    expect((await h.auth.updatePlatformConfig({ platformId: p.platformId })).config).toBeDefined();
    expect(calls.filter((c) => !c.startsWith("offer"))).toEqual([]);
  });

  it("refuses a change the board cannot hear of (UNAVAILABLE) and leaves the config as it was", async () => {
    const p = await h.newPlatform();
    const before = await versionOf(p.platformId);
    markFails = true;
    try {
      await expectPublicError(h.auth.updatePlatformConfig({ platformId: p.platformId, umaDomain: "other.example" }), "UNAVAILABLE", "SERVICE_UNAVAILABLE");
    } finally {
      markFails = false;
    }
    const { config } = await h.auth.getPlatformConfig({ platformId: p.platformId });
    expect(config!.umaDomain).not.toBe("other.example");
    expect(await versionOf(p.platformId)).toBe(before);
  });

  it("publishes the version it left when the change is refused inside its transaction", async () => {
    const p = await h.newPlatform();
    const before = await versionOf(p.platformId);
    calls.length = 0;
    await expectPublicError(h.auth.updatePlatformConfig({ platformId: p.platformId, passkeyRelyingPartyId: "a.example", passkeyOrigins: { origins: ["https://b.example"] } }), "INVALID", "INVALID_INPUT");
    expect(calls).toEqual([`mark ${p.platformId}`, `publish ${p.platformId} ${before}`]);
    expect(await board.read(p.platformId)).toEqual({ kind: "version", version: before });
  });

  it("answers a committed change even when its publish fails, leaving the platform marked changing", async () => {
    const p = await h.newPlatform();
    publishFails = true;
    try {
      const res = await h.auth.updatePlatformConfig({ platformId: p.platformId, umaDomain: "later.example" });
      expect(res.config!.umaDomain).toBe("later.example");
    } finally {
      publishFails = false;
    }
    expect(await board.read(p.platformId)).toEqual({ kind: "changing" });
  });
});
