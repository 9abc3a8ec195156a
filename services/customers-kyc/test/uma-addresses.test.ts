import { create } from "@bufbuild/protobuf";
import { inTransaction } from "@corridor/kit";
import { PlatformConfigSchema } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { PlatformConfigUpdatedSchema, PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { AddressSchema, CustomerInputSchema } from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { customerEvents } from "../src/events/customer-events.js";
import { platformUmaConsumer } from "../src/events/platform-consumer.js";
import { SCHEMA } from "../src/server.js";
import { startHarness, type Harness } from "./harness.js";

/**
 * Customers of a platform that gets a UMA domain after they were created (issue 29, item 6: the
 * production platforms created before CORRIDOR_UMA_DOMAIN) get their default address from the
 * corridor.platforms.v1 PlatformConfigUpdated that announces the domain.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

let n = 0;
const individual = (platformCustomerId = `uma-${++n}`) =>
  create(CustomerInputSchema, {
    customerType: "INDIVIDUAL",
    platformCustomerId,
    fullName: "Alice Smith",
    birthDate: "1990-04-01",
    nationality: "US",
    address: create(AddressSchema, { line1: "1 Main St", postalCode: "94105", country: "US" }),
  });

const consumer = platformUmaConsumer({ clock: { now: () => h.clock.now() }, events: customerEvents });
let eventSeq = 0;
const configUpdated = (platformId: string, umaDomain: string) =>
  create(PlatformEventSchema, {
    eventId: `Event:test-${++eventSeq}`,
    platformId,
    payload: { case: "configUpdated", value: create(PlatformConfigUpdatedSchema, { config: create(PlatformConfigSchema, { platformId, umaDomain }) }) },
  });
const deliver = (e: ReturnType<typeof configUpdated>) => inTransaction(h.db.forSchema(SCHEMA), (trx) => consumer.handle(e, trx));

describe("default UMA addresses once a platform has a domain", () => {
  it("gives every live customer without an address $<handle>@<domain> (a suffix when taken), emits CUSTOMER_UPDATED, and keeps addresses already held", async () => {
    const platformId = h.platform({ environment: "PRODUCTION", umaDomain: "" });
    const a = (await h.client.createCustomer({ platformId, customer: individual("Alice.Smith") })).customer!;
    const b = (await h.client.createCustomer({ platformId, customer: individual("bob") })).customer!;
    const held = (await h.client.createCustomer({ platformId, customer: { ...individual("carol"), umaAddress: "$alice.smith@old-bank-1234abcd.pay.example.com" } })).customer!;
    const gone = (await h.client.createCustomer({ platformId, customer: individual("dave") })).customer!;
    await h.client.deleteCustomer({ platformId, customerId: gone.id });
    expect([a.umaAddress, b.umaAddress]).toEqual(["", ""]);

    const start = (await h.events()).length;
    const domain = "old-bank-1234abcd.pay.example.com";
    await deliver(configUpdated(platformId, domain));
    const get = async (id: string) => (await h.client.getCustomer({ platformId, customerId: id })).customer!;
    // $alice.smith is taken by carol: alice gets the short suffix of her id, as at creation.
    expect((await get(a.id)).umaAddress).toBe(`$alice.smith-${a.id.slice(-6)}@${domain}`);
    expect((await get(b.id)).umaAddress).toBe(`$bob@${domain}`);
    expect((await get(held.id)).umaAddress).toBe("$alice.smith@old-bank-1234abcd.pay.example.com");
    expect((await get(gone.id)).umaAddress).toBe("");
    const events = (await h.events()).slice(start);
    expect(events.map((e) => [e.type, e.key]).sort()).toEqual([["CUSTOMER_UPDATED", a.id], ["CUSTOMER_UPDATED", b.id]].sort());

    // A later change of domain moves no address already given.
    await deliver(configUpdated(platformId, "pay.newdomain.example"));
    expect((await get(b.id)).umaAddress).toBe(`$bob@${domain}`);
  });

  it("ignores a config update without a domain", async () => {
    expect(consumer.relevant!(configUpdated("Platform:x", ""))).toBe(false);
    expect(consumer.relevant!(configUpdated("Platform:x", "pay.example.com"))).toBe(true);
  });
});
