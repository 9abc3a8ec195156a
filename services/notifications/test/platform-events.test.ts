import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock, topics } from "@corridor/kit";
import { findSettings } from "../src/data/settings-repo.js";
import {
  configUpdated,
  newPlatformId,
  openTestDatabase,
  platformCreated,
  startNotifications,
  tokenRevoked,
  type NotificationsUnderTest,
} from "./support.js";

describe("corridor.platforms.v1 consumer", () => {
  const clock = new ManualClock("2025-10-13T10:00:00.000Z");
  let close: () => Promise<void>;
  let n: NotificationsUnderTest;

  beforeAll(async () => {
    const db = await openTestDatabase();
    close = db.close;
    n = await startNotifications(db.handle, clock);
  });
  afterAll(async () => close());

  it("listens to the platforms topic and names events by their event_id", () => {
    const event = tokenRevoked(newPlatformId());
    expect(n.consumer.topic).toBe(topics.platforms);
    expect(n.consumer.eventId(event)).toBe(event.eventId);
  });

  it("creates the settings row with the endpoint and a whsec_ secret of 32 bytes on PlatformCreated", async () => {
    const platformId = newPlatformId();
    await n.deliver(platformCreated(platformId, "https://example.com/hooks", clock.now()));

    const stored = await findSettings(n.db, platformId);
    expect(stored?.webhookEndpoint).toBe("https://example.com/hooks");
    expect(stored?.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(stored!.secret.slice("whsec_".length), "base64")).toHaveLength(32);

    const { settings } = await n.client.getWebhookSettings({ platformId });
    expect(settings?.webhookEndpoint).toBe("https://example.com/hooks");
    expect(settings?.secret).toBe(stored?.secret);
  });

  it("updates the endpoint copy on PlatformConfigUpdated and keeps the secret", async () => {
    const platformId = newPlatformId();
    await n.deliver(platformCreated(platformId, "https://a.example.com/hooks", clock.now()));
    const before = await findSettings(n.db, platformId);

    await n.deliver(configUpdated(platformId, "https://b.example.com/hooks", new Date(clock.now().getTime() + 1000)));

    const after = await findSettings(n.db, platformId);
    expect(after?.webhookEndpoint).toBe("https://b.example.com/hooks");
    expect(after?.secret).toBe(before?.secret);
  });

  it("creates the row on a config update for a platform it never saw created", async () => {
    const platformId = newPlatformId();
    await n.deliver(configUpdated(platformId, "https://late.example.com/hooks", clock.now()));
    const stored = await findSettings(n.db, platformId);
    expect(stored?.webhookEndpoint).toBe("https://late.example.com/hooks");
    expect(stored?.secret).toMatch(/^whsec_/);
  });

  it("is a no-op when the same event is handled again", async () => {
    const platformId = newPlatformId();
    const event = configUpdated(platformId, "https://once.example.com/hooks", clock.now());
    await n.deliver(event);
    const first = await findSettings(n.db, platformId);

    clock.advance(60_000);
    await n.deliver(event);

    expect(await findSettings(n.db, platformId)).toEqual(first);
  });

  it("ignores a config update older than the one it already applied", async () => {
    const platformId = newPlatformId();
    const t0 = clock.now().getTime();
    await n.deliver(configUpdated(platformId, "https://newer.example.com/hooks", new Date(t0 + 5000)));
    await n.deliver(configUpdated(platformId, "https://older.example.com/hooks", new Date(t0 + 1000)));
    expect((await findSettings(n.db, platformId))?.webhookEndpoint).toBe("https://newer.example.com/hooks");
  });

  it("orders config updates by the full nanosecond precision of updated_at", async () => {
    const platformId = newPlatformId();
    const seconds = BigInt(Math.floor(clock.now().getTime() / 1000));
    await n.deliver(configUpdated(platformId, "https://first.example.com/hooks", { $typeName: "google.protobuf.Timestamp", seconds, nanos: 1000 }));
    await n.deliver(configUpdated(platformId, "https://second.example.com/hooks", { $typeName: "google.protobuf.Timestamp", seconds, nanos: 1001 }));
    expect((await findSettings(n.db, platformId))?.webhookEndpoint).toBe("https://second.example.com/hooks");
  });

  it("applies a PlatformCreated after lazy creation without replacing the secret already handed out", async () => {
    const platformId = newPlatformId();
    const { settings: lazy } = await n.client.getWebhookSettings({ platformId });
    expect(lazy?.webhookEndpoint).toBe("");

    await n.deliver(platformCreated(platformId, "https://example.com/created", clock.now()));

    const { settings } = await n.client.getWebhookSettings({ platformId });
    expect(settings?.webhookEndpoint).toBe("https://example.com/created");
    expect(settings?.secret).toBe(lazy?.secret);
  });

  it("does nothing on TokenRevoked", async () => {
    const platformId = newPlatformId();
    await n.deliver(tokenRevoked(platformId));
    expect(await findSettings(n.db, platformId)).toBeUndefined();
  });
});
