import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId } from "@corridor/kit";
import { PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLedgerHarness, type LedgerHarness } from "./harness.js";

// The ledger's consumer of auth-sessions' DelegatedKeyChanged (corridor.platforms.delegated-keys.v1)
// on PostgreSQL, run as the host runs it (inbox transaction, once per event id): a card funding
// source's status follows its delegated keys, each change applied once, a stale one ignored.

let h: LedgerHarness;
beforeAll(async () => {
  h = await startLedgerHarness();
});
afterAll(async () => {
  await h?.close();
});

async function walletSource() {
  const platformId = await h.newPlatform();
  const customerId = await h.newCustomer(platformId, { currencies: ["USD"] });
  const accounts = (await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER" })).accounts;
  const wallet = accounts.find((a) => a.type === "EMBEDDED_WALLET")!.id;
  const { card } = await h.cards.createCard({ platformId, cardholderId: customerId, form: "VIRTUAL", fundingSources: [wallet] });
  const [source] = (await h.cards.listCardFundingSources({ platformId, cardId: card!.id })).fundingSources;
  return { platformId, cardId: card!.id, wallet, sourceId: source!.id };
}

function changed(s: { platformId: string; cardId: string; wallet: string; sourceId: string }, keyId: string, status: string, at = "2026-01-01T00:01:00Z", eventId = newId("Event")) {
  return create(PlatformEventSchema, {
    eventId,
    occurredAt: timestampFromDate(new Date(at)),
    platformId: s.platformId,
    payload: {
      case: "delegatedKeyChanged",
      value: { keyId, accountId: s.wallet, cardId: s.cardId, fundingSourceId: s.sourceId, status, updatedAt: timestampFromDate(new Date(at)) },
    },
  });
}

const statusOf = async (s: { platformId: string; sourceId: string }) => (await h.cards.getCardFundingSource({ platformId: s.platformId, fundingSourceId: s.sourceId })).fundingSource!.status;
const keyCopy = (keyId: string) => h.db.forSchema<any>("ledger").selectFrom("card_delegated_keys").selectAll().where("key_id", "=", keyId).executeTakeFirst();

describe("delegated-keys consumer", () => {
  it("makes the wallet's source ACTIVE once its key is, PENDING_AUTH once revoked, each event applied once and a stale one ignored", async () => {
    const s = await walletSource();
    expect(await statusOf(s)).toBe("PENDING_AUTH");
    const keyId = newId("DelegatedKey");

    const activated = changed(s, keyId, "ACTIVE", "2026-01-01T00:01:00Z");
    await h.deliver("delegated-keys", activated);
    expect(await statusOf(s)).toBe("ACTIVE");
    expect(await keyCopy(keyId)).toMatchObject({ funding_source_id: s.sourceId, status: "ACTIVE" });
    const sourceRow = () => h.db.forSchema<any>("ledger").selectFrom("card_funding_sources").select(["delegated", "updated_at"]).where("id", "=", s.sourceId).executeTakeFirstOrThrow();
    const afterActivation = await sourceRow();
    // The same event again (a redelivery): the inbox recognises it, nothing is written.
    await h.deliver("delegated-keys", activated);
    expect(await sourceRow()).toEqual(afterActivation);

    await h.deliver("delegated-keys", changed(s, keyId, "REVOKED", "2026-01-01T00:02:00Z"));
    expect(await statusOf(s)).toBe("PENDING_AUTH");
    // The activation again under another event id (an older change of the key): ignored.
    await h.deliver("delegated-keys", changed(s, keyId, "ACTIVE", "2026-01-01T00:01:00Z"));
    expect(await statusOf(s)).toBe("PENDING_AUTH");
    expect(await keyCopy(keyId)).toMatchObject({ status: "REVOKED" });

    // A second key: ACTIVE again, and the first key's stale revocation does not undo it.
    const second = newId("DelegatedKey");
    await h.deliver("delegated-keys", changed(s, second, "ACTIVE", "2026-01-01T00:03:00Z"));
    expect(await statusOf(s)).toBe("ACTIVE");
    await h.deliver("delegated-keys", changed(s, keyId, "REVOKED", "2026-01-01T00:02:00Z"));
    expect(await statusOf(s)).toBe("ACTIVE");
  });

  it("ignores a change for another platform's source or an unknown one, without failing the delivery", async () => {
    const s = await walletSource();
    const other = await h.newPlatform();
    const keyId = newId("DelegatedKey");
    await h.deliver("delegated-keys", changed({ ...s, platformId: other }, keyId, "ACTIVE"));
    await h.deliver("delegated-keys", changed({ ...s, sourceId: "CardFundingSource:00000000-0000-7000-8000-000000000000" }, keyId, "ACTIVE"));
    expect(await statusOf(s)).toBe("PENDING_AUTH");
    expect(await keyCopy(keyId)).toBeUndefined();
  });
});
