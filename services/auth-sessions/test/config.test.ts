import { timestampDate } from "@bufbuild/protobuf/wkt";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { topics } from "@corridor/kit";
import { Environment, SupportedCurrencySchema, type SupportedCurrency } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectPublicError, fieldsOf, startHarness, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const currency = (over: MessageInitShape<typeof SupportedCurrencySchema> = {}): SupportedCurrency =>
  create(SupportedCurrencySchema, {
    currencyCode: "EUR",
    minAmount: 100n,
    maxAmount: 1_000_000n,
    requiredCounterpartyFields: [{ name: "FULL_NAME", mandatory: true }],
    enabledTransactionTypes: ["OUTGOING", "INCOMING"],
    ...over,
  });

describe("the configuration a platform starts with", () => {
  it("gives a sandbox platform USD and its own sandbox UMA domain", async () => {
    const p = await h.newPlatform({ name: "Acme Pay!" });
    const { config } = await h.auth.getPlatformConfig({ platformId: p.platformId });
    expect(config!.id).toMatch(/^PlatformConfig:/);
    expect(config!.platformId).toBe(p.platformId);
    expect(config!.umaDomain).toMatch(/^acme-pay-[0-9a-f]{8}\.sandbox\.uma\.money$/);
    expect(config!.webhookEndpoint).toBe("");
    expect(config!.isRegulatedFinancialInstitution).toBe(false);
    expect(config!.supportedCurrencies).toHaveLength(1);
    expect(config!.supportedCurrencies[0]).toMatchObject({
      currencyCode: "USD",
      minAmount: 1n,
      maxAmount: 100_000_000_000n,
      enabledTransactionTypes: ["OUTGOING", "INCOMING"],
    });
  });

  it("copies the regulated flag from the platform and gives a production platform its own UMA domain under the operator's (default uma.localhost)", async () => {
    const p = await h.newPlatform({ name: "Acme Bank", environment: Environment.PRODUCTION, regulated: true });
    const { config } = await h.auth.getPlatformConfig({ platformId: p.platformId });
    expect(config!.isRegulatedFinancialInstitution).toBe(true);
    expect(config!.umaDomain).toBe(`acme-bank-${p.platformId.replace(/[^0-9a-f]/gi, "").slice(-8).toLowerCase()}.uma.localhost`);
  });

  it("answers 404 for a platform that does not exist", async () => {
    await expectPublicError(h.auth.getPlatformConfig({ platformId: "Platform:nope" }), "NOT_FOUND", "PLATFORM_CONFIG_NOT_FOUND");
    await expectPublicError(h.auth.updatePlatformConfig({ platformId: "Platform:nope", webhookEndpoint: "" }), "NOT_FOUND", "PLATFORM_CONFIG_NOT_FOUND");
  });
});

describe("UpdatePlatformConfig", () => {
  it("changes only the fields that are set and moves updatedAt", async () => {
    const p = await h.newPlatform();
    const before = (await h.auth.getPlatformConfig({ platformId: p.platformId })).config!;
    h.clock.advance(60_000);
    const { config } = await h.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: "https://hooks.example.com/corridor" });
    expect(config!.webhookEndpoint).toBe("https://hooks.example.com/corridor");
    expect(config!.umaDomain).toBe(before.umaDomain);
    expect(config!.supportedCurrencies).toEqual(before.supportedCurrencies);
    expect(config!.createdAt).toEqual(before.createdAt);
    expect(Number(config!.updatedAt!.seconds - before.updatedAt!.seconds)).toBe(60);
    expect((await h.auth.getPlatformConfig({ platformId: p.platformId })).config).toEqual(config);
  });

  it.each(["http://localhost:3000/hooks", "http://127.0.0.1/hooks", "http://[::1]:8080/x", "https://example.com"])(
    "accepts the webhook endpoint %s",
    async (url) => {
      const p = await h.newPlatform();
      const { config } = await h.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: url });
      expect(config!.webhookEndpoint).toBe(url);
    },
  );

  it.each(["http://example.com/hooks", "ftp://example.com", "not a url", "/relative", "https://user:pw@example.com/"])(
    "rejects the webhook endpoint %s with 400 naming webhookEndpoint",
    async (url) => {
      const p = await h.newPlatform();
      const err = await expectPublicError(h.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: url }), "INVALID", "INVALID_INPUT");
      expect(fieldsOf(err)).toContain("webhookEndpoint");
    },
  );

  it.each([
    ["https://169.254.169.254/latest/meta-data/", "NON_PUBLIC_ADDRESS"],
    ["https://[::ffff:169.254.169.254]/", "NON_PUBLIC_ADDRESS"],
    ["https://2130706433/", "NON_PUBLIC_ADDRESS"],
    ["https://0x7f000001/", "NON_PUBLIC_ADDRESS"],
    ["https://0177.0.0.1/", "NON_PUBLIC_ADDRESS"],
    ["https://127.1/", "NON_PUBLIC_ADDRESS"],
    ["https://10.0.0.1/", "NON_PUBLIC_ADDRESS"],
    ["https://192.168.1.1/", "NON_PUBLIC_ADDRESS"],
    ["https://metadata.google.internal/", "INTERNAL_HOSTNAME"],
    ["https://localhost./", "INTERNAL_HOSTNAME"],
    ["http://127.0.0.1:5432", "NON_PUBLIC_ADDRESS"],
    ["http://localhost:3000/hooks", "INTERNAL_HOSTNAME"],
    ["10.0.0.1", "URL_INVALID"],
  ])("refuses a production platform the webhook endpoint %s, naming rule %s, and changes nothing", async (url, rule) => {
    const p = await h.newPlatform({ environment: Environment.PRODUCTION });
    const before = (await h.auth.getPlatformConfig({ platformId: p.platformId })).config!;
    const err = await expectPublicError(h.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: url }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(err)).toEqual(["webhookEndpoint"]);
    expect(err.message).toContain(`rule ${rule}`);
    expect((await h.auth.getPlatformConfig({ platformId: p.platformId })).config).toEqual(before);
  });

  it("accepts a production platform's public https endpoint", async () => {
    const p = await h.newPlatform({ environment: Environment.PRODUCTION });
    const { config } = await h.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: "https://hooks.example.com/corridor" });
    expect(config!.webhookEndpoint).toBe("https://hooks.example.com/corridor");
  });

  it("refuses a sandbox platform's metadata and private endpoints although loopback is allowed", async () => {
    const p = await h.newPlatform();
    for (const url of ["https://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "https://[::ffff:127.0.0.1]/"]) {
      const err = await expectPublicError(h.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: url }), "INVALID", "INVALID_INPUT");
      expect(err.message, url).toContain("rule NON_PUBLIC_ADDRESS");
    }
  });

  it("gives every change a strictly later updatedAt, even within one millisecond", async () => {
    const p = await h.newPlatform();
    // The harness clock does not move between these calls.
    const first = await h.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: "https://a.example.com/h" });
    const second = await h.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: "https://b.example.com/h" });
    const ms = (c: typeof first) => timestampDate(c.config!.updatedAt!).getTime();
    expect(ms(second)).toBeGreaterThan(ms(first));
  });

  it("clears the webhook endpoint and the UMA domain with empty strings", async () => {
    const p = await h.newPlatform();
    await h.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: "https://example.com/h" });
    const { config } = await h.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: "", umaDomain: "" });
    expect(config!.webhookEndpoint).toBe("");
    expect(config!.umaDomain).toBe("");
  });

  it("accepts a hostname as UMA domain (stored in lower case) and rejects anything else", async () => {
    const p = await h.newPlatform();
    const { config } = await h.auth.updatePlatformConfig({ platformId: p.platformId, umaDomain: "Pay.Example.COM" });
    expect(config!.umaDomain).toBe("pay.example.com");
    for (const bad of ["localhost", "exa mple.com", "-bad.example.com", "https://example.com", "example.com/path", "1.2.3.4"]) {
      const err = await expectPublicError(h.auth.updatePlatformConfig({ platformId: p.platformId, umaDomain: bad }), "INVALID", "INVALID_INPUT");
      expect(fieldsOf(err)).toEqual(["umaDomain"]);
    }
  });

  it("replaces the supported currencies with a valid list, including an empty one", async () => {
    const p = await h.newPlatform();
    const list = [currency(), currency({ currencyCode: "USDC", minAmount: 0n, maxAmount: 9_000_000_000_000_000n, enabledTransactionTypes: ["OUTGOING"] })];
    const { config } = await h.auth.updatePlatformConfig({ platformId: p.platformId, supportedCurrencies: { currencies: list } });
    expect(config!.supportedCurrencies).toEqual(list);
    const emptied = await h.auth.updatePlatformConfig({ platformId: p.platformId, supportedCurrencies: { currencies: [] } });
    expect(emptied.config!.supportedCurrencies).toEqual([]);
  });

  it.each([
    ["min above max", [currency({ minAmount: 10n, maxAmount: 5n })], "supportedCurrencies[0].minAmount"],
    ["a negative min", [currency({ minAmount: -1n })], "supportedCurrencies[0].minAmount"],
    ["a max above 9000000000000000", [currency({ maxAmount: 9_000_000_000_000_001n })], "supportedCurrencies[0].maxAmount"],
    ["a lower-case code", [currency({ currencyCode: "usd" })], "supportedCurrencies[0].currencyCode"],
    ["a duplicate code", [currency(), currency()], "supportedCurrencies[1].currencyCode"],
    ["an unknown transaction type", [currency({ enabledTransactionTypes: ["SIDEWAYS"] })], "supportedCurrencies[0].enabledTransactionTypes"],
    ["a repeated transaction type", [currency({ enabledTransactionTypes: ["INCOMING", "INCOMING"] })], "supportedCurrencies[0].enabledTransactionTypes"],
    ["an empty counterparty field name", [currency({ requiredCounterpartyFields: [{ name: "", mandatory: true }] })], "supportedCurrencies[0].requiredCounterpartyFields[0].name"],
  ])("rejects %s with 400 naming the field and changes nothing", async (_what, currencies, field) => {
    const p = await h.newPlatform();
    const before = (await h.auth.getPlatformConfig({ platformId: p.platformId })).config;
    const err = await expectPublicError(
      h.auth.updatePlatformConfig({ platformId: p.platformId, supportedCurrencies: { currencies } }),
      "INVALID",
      "INVALID_INPUT",
    );
    expect(fieldsOf(err)).toContain(field);
    expect((err.details?.errors as { reason: string }[])[0]!.reason).toEqual(expect.any(String));
    expect((await h.auth.getPlatformConfig({ platformId: p.platformId })).config).toEqual(before);
  });

  it("lists every invalid field in one error", async () => {
    const p = await h.newPlatform();
    const err = await expectPublicError(
      h.auth.updatePlatformConfig({
        platformId: p.platformId,
        umaDomain: "nope",
        webhookEndpoint: "http://example.com",
        supportedCurrencies: { currencies: [currency({ minAmount: 5n, maxAmount: 1n })] },
      }),
      "INVALID",
      "INVALID_INPUT",
    );
    expect(fieldsOf(err).sort()).toEqual(["supportedCurrencies[0].minAmount", "umaDomain", "webhookEndpoint"]);
  });

  it("emits PlatformConfigUpdated with the new config through the outbox, keyed by platform", async () => {
    const p = await h.newPlatform();
    const { config } = await h.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: "https://example.com/events" });
    const events = (await h.outboxEvents()).filter((e) => e.key === p.platformId && e.event.payload.case === "configUpdated");
    expect(events).toHaveLength(1);
    const [e] = events;
    expect(e!.topic).toBe(topics.platforms);
    expect(e!.event.eventId).toMatch(/^Event:/);
    expect(e!.event.platformId).toBe(p.platformId);
    expect(e!.event.payload.value).toMatchObject({ config: { webhookEndpoint: "https://example.com/events", id: config!.id } });
  });

  it("emits nothing when an update is rejected or changes no field", async () => {
    const p = await h.newPlatform();
    await expectPublicError(h.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: "http://example.com" }), "INVALID", "INVALID_INPUT");
    await h.auth.updatePlatformConfig({ platformId: p.platformId });
    const events = (await h.outboxEvents()).filter((e) => e.key === p.platformId && e.event.payload.case === "configUpdated");
    expect(events).toHaveLength(0);
  });
});

describe("the platform's passkey relying party", () => {
  it("starts unset (the deployment's relying party applies)", async () => {
    const p = await h.newPlatform();
    const { config } = await h.auth.getPlatformConfig({ platformId: p.platformId });
    expect(config!.passkeyRelyingPartyId).toBe("");
    expect(config!.passkeyOrigins).toEqual([]);
  });

  it("sets an RP id with origins on it and its subdomains (stored in lower case, as origins), announces it, and clears both with an empty RP id", async () => {
    const p = await h.newPlatform();
    const { config } = await h.auth.updatePlatformConfig({
      platformId: p.platformId,
      passkeyRelyingPartyId: "Wallet.Example.COM",
      passkeyOrigins: { origins: ["https://wallet.example.com", "https://App.Wallet.example.com:8443"] },
    });
    expect(config!.passkeyRelyingPartyId).toBe("wallet.example.com");
    expect(config!.passkeyOrigins).toEqual(["https://wallet.example.com", "https://app.wallet.example.com:8443"]);
    const [event] = (await h.outboxEvents()).filter((e) => e.key === p.platformId && e.event.payload.case === "configUpdated");
    expect(event!.event.payload.value).toMatchObject({ config: { passkeyRelyingPartyId: "wallet.example.com" } });

    // Only the origins change; the RP id stays.
    const moved = await h.auth.updatePlatformConfig({ platformId: p.platformId, passkeyOrigins: { origins: ["https://pay.wallet.example.com"] } });
    expect(moved.config!.passkeyRelyingPartyId).toBe("wallet.example.com");
    expect(moved.config!.passkeyOrigins).toEqual(["https://pay.wallet.example.com"]);

    const cleared = await h.auth.updatePlatformConfig({ platformId: p.platformId, passkeyRelyingPartyId: "" });
    expect(cleared.config!.passkeyRelyingPartyId).toBe("");
    expect(cleared.config!.passkeyOrigins).toEqual([]);
  });

  it("accepts localhost and 127.0.0.1 over plain http for development", async () => {
    const p = await h.newPlatform();
    const local = await h.auth.updatePlatformConfig({ platformId: p.platformId, passkeyRelyingPartyId: "localhost", passkeyOrigins: { origins: ["http://localhost:5173", "https://localhost"] } });
    expect(local.config!.passkeyOrigins).toEqual(["http://localhost:5173", "https://localhost"]);
    const loopback = await h.auth.updatePlatformConfig({ platformId: p.platformId, passkeyRelyingPartyId: "127.0.0.1", passkeyOrigins: { origins: ["http://127.0.0.1:3000"] } });
    expect(loopback.config!.passkeyOrigins).toEqual(["http://127.0.0.1:3000"]);
  });

  it.each([
    ["an RP id that is not a hostname", { passkeyRelyingPartyId: "https://wallet.example.com", passkeyOrigins: { origins: ["https://wallet.example.com"] } }, ["passkeyRelyingPartyId"]],
    ["an origin on another domain", { passkeyRelyingPartyId: "wallet.example.com", passkeyOrigins: { origins: ["https://wallet.example.com", "https://evil.example"] } }, ["passkeyOrigins[1]"]],
    ["an origin on a parent domain", { passkeyRelyingPartyId: "wallet.example.com", passkeyOrigins: { origins: ["https://example.com"] } }, ["passkeyOrigins[0]"]],
    ["a look-alike suffix", { passkeyRelyingPartyId: "wallet.example.com", passkeyOrigins: { origins: ["https://evilwallet.example.com"] } }, ["passkeyOrigins[0]"]],
    ["plain http off localhost", { passkeyRelyingPartyId: "wallet.example.com", passkeyOrigins: { origins: ["http://wallet.example.com"] } }, ["passkeyOrigins[0]"]],
    ["an origin with a path", { passkeyRelyingPartyId: "wallet.example.com", passkeyOrigins: { origins: ["https://wallet.example.com/login"] } }, ["passkeyOrigins[0]"]],
    ["a duplicate origin", { passkeyRelyingPartyId: "wallet.example.com", passkeyOrigins: { origins: ["https://wallet.example.com", "https://WALLET.example.com"] } }, ["passkeyOrigins[1]"]],
    ["an RP id without origins", { passkeyRelyingPartyId: "wallet.example.com" }, ["passkeyOrigins"]],
    ["origins without an RP id", { passkeyOrigins: { origins: ["https://wallet.example.com"] } }, ["passkeyOrigins"]],
  ])("rejects %s with 400 naming the field and changes nothing", async (_what, patch, fields) => {
    const p = await h.newPlatform();
    const before = (await h.auth.getPlatformConfig({ platformId: p.platformId })).config;
    const err = await expectPublicError(h.auth.updatePlatformConfig({ platformId: p.platformId, ...patch }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(err)).toEqual(fields);
    expect((await h.auth.getPlatformConfig({ platformId: p.platformId })).config).toEqual(before);
  });

  it("checks stored origins against a new RP id", async () => {
    const p = await h.newPlatform();
    await h.auth.updatePlatformConfig({ platformId: p.platformId, passkeyRelyingPartyId: "a.example", passkeyOrigins: { origins: ["https://a.example"] } });
    const err = await expectPublicError(h.auth.updatePlatformConfig({ platformId: p.platformId, passkeyRelyingPartyId: "b.example" }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(err)).toEqual(["passkeyOrigins[0]"]);
  });
});

describe("UpdatePlatformConfig where the operator turned loopback webhooks off", () => {
  let strict: Harness;
  beforeAll(async () => {
    strict = await startHarness({ env: { CORRIDOR_WEBHOOK_ALLOW_LOOPBACK: "false", CORRIDOR_WEBHOOK_ALLOWED_RANGES: "10.20.0.0/16" } });
  });
  afterAll(async () => {
    await strict?.close();
  });

  it("refuses a sandbox platform's loopback endpoint", async () => {
    const p = await strict.newPlatform();
    for (const url of ["http://127.0.0.1:3000/hooks", "http://localhost:3000/hooks", "https://[::1]/hooks"]) {
      const err = await expectPublicError(strict.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: url }), "INVALID", "INVALID_INPUT");
      expect(fieldsOf(err), url).toEqual(["webhookEndpoint"]);
    }
  });

  it("accepts a production platform's https endpoint in a range the operator allowlists, not http", async () => {
    const p = await strict.newPlatform({ environment: Environment.PRODUCTION });
    const { config } = await strict.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: "https://10.20.0.9/hooks" });
    expect(config!.webhookEndpoint).toBe("https://10.20.0.9/hooks");
    const err = await expectPublicError(strict.auth.updatePlatformConfig({ platformId: p.platformId, webhookEndpoint: "http://10.20.0.9/hooks" }), "INVALID", "INVALID_INPUT");
    expect(err.message).toContain("rule HTTPS_REQUIRED");
  });
});
