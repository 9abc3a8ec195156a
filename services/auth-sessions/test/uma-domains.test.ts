import { ManualClock, configVersion, type ConfigBoard } from "@corridor/kit";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { down, up } from "../migrations/20261227000000_production_uma_domains.js";
import { loadWalletAuthConfig } from "../src/config.js";
import { readOver, transactOver } from "../src/data/store.js";
import type { AuthSessionsDatabase } from "../src/data/tables.js";
import { createAuthSessions } from "../src/domain/auth-sessions.js";
import { defaultUmaDomain } from "../src/domain/defaults.js";
import { platformEvents } from "../src/events/platform-events.js";
import { SCHEMA } from "../src/server.js";
import { startHarness, type Harness } from "./harness.js";

/**
 * Production platforms' UMA identity (issue 29, item 6): a domain of their own under the operator's
 * CORRIDOR_UMA_DOMAIN at creation, and for those created before, a queue filled by the migration
 * and drained by the uma-domain-backfill worker through the config-change path.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { CORRIDOR_UMA_DOMAIN: "Pay.Example.COM" } });
});
afterAll(async () => {
  await h?.close();
});

const suffixOf = (platformId: string) => platformId.replace(/[^0-9a-f]/gi, "").slice(-8).toLowerCase();

describe("CORRIDOR_UMA_DOMAIN", () => {
  it("defaults to uma.localhost, is stored lower case, and refuses what is not a hostname of two labels or more", () => {
    expect(loadWalletAuthConfig({}).CORRIDOR_UMA_DOMAIN).toBe("uma.localhost");
    expect(loadWalletAuthConfig({ CORRIDOR_UMA_DOMAIN: "Pay.Example.COM" }).CORRIDOR_UMA_DOMAIN).toBe("pay.example.com");
    for (const bad of ["localhost", "https://pay.example.com", "pay..example.com", "-pay.example.com", `${"a".repeat(60)}.`.repeat(4) + "com"]) {
      expect(() => loadWalletAuthConfig({ CORRIDOR_UMA_DOMAIN: bad }), bad).toThrow(/CORRIDOR_UMA_DOMAIN/);
    }
  });

  it("gives a new production platform <slug>-<8 hex>.<operator domain>, and a sandbox platform still its sandbox.uma.money one", async () => {
    const prod = await h.newPlatform({ name: "Northwind Payments", environment: Environment.PRODUCTION });
    expect((await h.auth.getPlatformConfig({ platformId: prod.platformId })).config!.umaDomain).toBe(`northwind-payments-${suffixOf(prod.platformId)}.pay.example.com`);
    const sandbox = await h.newPlatform({ name: "Northwind Payments" });
    expect((await h.auth.getPlatformConfig({ platformId: sandbox.platformId })).config!.umaDomain).toBe(`northwind-payments-${suffixOf(sandbox.platformId)}.sandbox.uma.money`);
  });

  it("keeps every default domain a valid hostname of at most 253 characters (longest slug, longest operator domain)", () => {
    const operator = `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(59)}.io`;
    expect(operator.length).toBeLessThanOrEqual(190);
    const d = defaultUmaDomain({ id: "Platform:0190f0e2-0000-7000-8000-00000000abcd", name: "x".repeat(300), environment: "PRODUCTION" }, operator);
    expect(d.length).toBeLessThanOrEqual(253);
    expect(d.split(".").every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l))).toBe(true);
  });
});

describe("production platforms created before CORRIDOR_UMA_DOMAIN", () => {
  const db = () => h.db.forSchema<AuthSessionsDatabase>(SCHEMA);
  const marks: string[] = [];
  const published: [string, bigint][] = [];
  const board: Pick<ConfigBoard, "markChanging" | "publish" | "offer"> = {
    markChanging: async (id) => void marks.push(id),
    publish: async (id, v) => void published.push([id, v]),
    offer: async () => {},
  };
  const auth = () =>
    createAuthSessions({ transact: transactOver(db(), platformEvents), read: readOver(db()), clock: new ManualClock("2026-01-01T00:00:00.000Z"), operatorUmaDomain: "pay.example.com", board });

  /** A production platform as this service made them before: no UMA domain. */
  async function legacyProduction(name: string) {
    const p = await h.newPlatform({ name, environment: Environment.PRODUCTION });
    await db().updateTable("platform_configs").set({ uma_domain: "" }).where("platform_id", "=", p.platformId).execute();
    return p.platformId;
  }
  const domainOf = async (platformId: string) => (await h.auth.getPlatformConfig({ platformId })).config!.umaDomain;
  const queued = async () => (await db().selectFrom("uma_domain_backfill").select("platform_id").execute()).map((r) => r.platform_id);

  it("the migration queues exactly the production platforms without a domain; the worker's pass gives each its default through the config-change path and empties the queue", async () => {
    const legacy = await legacyProduction("Old Bank");
    const ownDomain = await h.newPlatform({ name: "Own Domain", environment: Environment.PRODUCTION });
    await h.auth.updatePlatformConfig({ platformId: ownDomain.platformId, umaDomain: "pay.owndomain.example" });
    const sandboxCleared = await h.newPlatform({ name: "Sandbox Cleared" });
    await h.auth.updatePlatformConfig({ platformId: sandboxCleared.platformId, umaDomain: "" });

    await down(db());
    await up(db());
    const q = await queued();
    expect(q).toContain(legacy);
    expect(q).not.toContain(ownDomain.platformId);
    expect(q).not.toContain(sandboxCleared.platformId);

    const before = (await h.outboxEvents()).length;
    expect(await auth().backfillUmaDomains()).toBe(q.length);
    expect(await domainOf(legacy)).toBe(`old-bank-${suffixOf(legacy)}.pay.example.com`);
    expect(await domainOf(ownDomain.platformId)).toBe("pay.owndomain.example");
    expect(await domainOf(sandboxCleared.platformId)).toBe("");
    expect(await queued()).toEqual([]);
    expect(await auth().backfillUmaDomains()).toBe(0);

    // Announced like any config change: PLATFORM_CONFIG_UPDATED with the domain, and the board told.
    const updates = (await h.outboxEvents()).slice(before).filter((e) => e.key === legacy);
    expect(updates.map((e) => e.headers["event-type"])).toEqual(["PLATFORM_CONFIG_UPDATED"]);
    const ev = updates[0]!.event;
    expect(ev.payload.case === "configUpdated" && ev.payload.value.config?.umaDomain).toBe(`old-bank-${suffixOf(legacy)}.pay.example.com`);
    expect(marks).toContain(legacy);
    const { config } = await h.auth.getPlatformConfig({ platformId: legacy });
    expect(published).toContainEqual([legacy, configVersion(new Date(Number(config!.updatedAt!.seconds) * 1000 + config!.updatedAt!.nanos / 1e6))]);
  });

  it("leaves a queued platform alone when it set a domain of its own before the worker came", async () => {
    const legacy = await legacyProduction("Quick Bank");
    await db().insertInto("uma_domain_backfill").values({ platform_id: legacy, queued_at: new Date() }).execute();
    await h.auth.updatePlatformConfig({ platformId: legacy, umaDomain: "pay.quick.example" });
    const before = (await h.outboxEvents()).length;
    await auth().backfillUmaDomains();
    expect(await domainOf(legacy)).toBe("pay.quick.example");
    expect(await queued()).not.toContain(legacy);
    expect((await h.outboxEvents()).slice(before).filter((e) => e.key === legacy)).toEqual([]);
  });
});

