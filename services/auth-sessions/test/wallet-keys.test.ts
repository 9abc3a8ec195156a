import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { create } from "@bufbuild/protobuf";
import { createRouterTransport } from "@connectrpc/connect";
import { appErrorInterceptor, createProcessLogger, errors, topics } from "@corridor/kit";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { InternalAccountSchema } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { CardFundingSourceSchema, CardSchema } from "@corridor/proto/corridor/ledger/v1/cards_pb.js";
import { CardsService } from "@corridor/proto/corridor/ledger/v1/cards_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newClientKeyPair, openSealed, stamp } from "../../../test/support/wallet-client.js";
import { ledgerAccounts } from "../src/clients/ledger-accounts.js";
import type { AuthSessionsDatabase } from "../src/data/tables.js";
import { walletTransactOver } from "../src/data/wallet.js";
import type { WalletStore } from "../src/domain/wallet/ports.js";
import { expectPublicError, startHarness, type Harness } from "./harness.js";

// Delegated keys sign EXECUTE_QUOTE (and only that) in place of a session; contact codes are never
// logged. Real Postgres (the unit harness), a fake ledger, the real mailer without a mail server.

const accounts = new Map<string, string>();
/** The fake ledger's card funding sources: id → its platform, card and wallet. */
const sources = new Map<string, { platformId: string; cardId: string; accountId: string }>();
const ledgerTransport = createRouterTransport(
  (router) => {
    router.service(LedgerService, {
      async getInternalAccount(req: { platformId: string; accountId: string }) {
        if (accounts.get(req.accountId) !== req.platformId) throw errors.notFound("InternalAccount", req.accountId);
        return { account: create(InternalAccountSchema, { id: req.accountId, platformId: req.platformId, type: "EMBEDDED_WALLET" }) };
      },
    } as never);
    router.service(CardsService, {
      async getCardFundingSource(req: { platformId: string; fundingSourceId: string }) {
        const s = sources.get(req.fundingSourceId);
        if (!s || s.platformId !== req.platformId) throw errors.notFound("CardFundingSource", req.fundingSourceId);
        return {
          fundingSource: create(CardFundingSourceSchema, { id: req.fundingSourceId, cardId: s.cardId, internalAccountId: s.accountId, accountType: "EMBEDDED_WALLET", status: "PENDING_AUTH" }),
          card: create(CardSchema, { id: s.cardId, platformId: s.platformId, state: "ACTIVE" }),
        };
      },
    } as never);
  },
  { router: { interceptors: [appErrorInterceptor] } },
);
const lines: string[] = [];
let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    accounts: ledgerAccounts(ledgerTransport),
    // No mailer: the real one, without CORRIDOR_SMTP_URL, logging into `lines`.
    log: createProcessLogger(
      "auth-sessions-test",
      "trace",
      new Writable({
        write(chunk, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    ),
  });
});
afterAll(async () => {
  await h?.close();
});

async function sandboxWallet() {
  const p = await h.newPlatform({ environment: Environment.SANDBOX });
  const accountId = `InternalAccount:${randomUUID()}`;
  accounts.set(accountId, p.platformId);
  const fundingSourceId = `CardFundingSource:${randomUUID()}`;
  sources.set(fundingSourceId, { platformId: p.platformId, cardId: `Card:${randomUUID()}`, accountId });
  return { platformId: p.platformId, accountId, fundingSourceId };
}

/** The funding source made with the wallet. */
const sourceOf = (accountId: string) => [...sources.entries()].find(([, s]) => s.accountId === accountId)![0];

/** A sandbox EMAIL_OTP session (magic OTP) and its secret key. */
async function session(platformId: string, accountId: string) {
  await h.wallet.createCredential({ platformId, accountId, type: "EMAIL_OTP", email: `u-${randomUUID()}@example.com` });
  const [c] = (await h.wallet.listCredentials({ platformId, accountId })).authMethods;
  const client = newClientKeyPair();
  const s = (await h.wallet.verifyCredential({ platformId, credentialId: c!.id, type: "EMAIL_OTP", otp: "000000", clientPublicKey: client.clientPublicKey })).session!;
  return { sessionId: s.id, key: await openSealed(s.encryptedSessionSigningKey, client) };
}

const signed = (key: Uint8Array, c: { payloadToSign: string; requestId: string }) => ({ requestId: c.requestId, signature: stamp(c.payloadToSign, key) });

async function activeKey(platformId: string, accountId: string, key: Uint8Array) {
  const body = { platformId, fundingSourceId: sourceOf(accountId), nickname: "k" };
  const leg1 = await h.walletKeys.createDelegatedKey(body);
  const leg2 = await h.walletKeys.createDelegatedKey({ ...body, signedRetry: signed(key, leg1.result.value as never) });
  const leg3 = await h.walletKeys.createDelegatedKey({ ...body, signedRetry: signed(key, leg2.result.value as never) });
  expect(leg3.result.case).toBe("key");
  return leg3.result.value as { id: string; status: string };
}

describe("delegated keys", () => {
  it("sign an EXECUTE_QUOTE retry sent without a signature while ACTIVE, single use, and no longer once revoked", async () => {
    const { platformId, accountId } = await sandboxWallet();
    const { key } = await session(platformId, accountId);
    const body = new TextEncoder().encode('{"quoteId":"Quote:1"}');
    const challenge = async () => (await h.wallet.createSignedChallenge({ platformId, accountId, operation: "EXECUTE_QUOTE", body })).challenge!;
    const c1 = await challenge();
    await expectPublicError(h.wallet.verifySignedRetry({ platformId, accountId, operation: "EXECUTE_QUOTE", signedRetry: { requestId: c1.requestId, signature: "" }, body }), "UNAUTHENTICATED", "WALLET_SIGNATURE_MISSING");

    const k = await activeKey(platformId, accountId, key);
    expect(k.status).toBe("ACTIVE");
    await h.wallet.verifySignedRetry({ platformId, accountId, operation: "EXECUTE_QUOTE", signedRetry: { requestId: c1.requestId, signature: "" }, body });
    await expectPublicError(h.wallet.verifySignedRetry({ platformId, accountId, operation: "EXECUTE_QUOTE", signedRetry: { requestId: c1.requestId, signature: "" }, body }), "UNAUTHENTICATED", "UNAUTHORIZED");
    // Another body than the challenge's: refused even with the key.
    const c2 = await challenge();
    await expectPublicError(
      h.wallet.verifySignedRetry({ platformId, accountId, operation: "EXECUTE_QUOTE", signedRetry: { requestId: c2.requestId, signature: "" }, body: new TextEncoder().encode("{}") }),
      "UNAUTHENTICATED",
      "WALLET_SIGNATURE_BODY_MISMATCH",
    );

    await h.walletKeys.revokeDelegatedKey({ platformId, id: k.id });
    const c3 = await challenge();
    await expectPublicError(h.wallet.verifySignedRetry({ platformId, accountId, operation: "EXECUTE_QUOTE", signedRetry: { requestId: c3.requestId, signature: "" }, body }), "UNAUTHENTICATED", "WALLET_SIGNATURE_MISSING");
  });

  it("sign nothing but EXECUTE_QUOTE: other signed operations of the wallet still need a session's signature", async () => {
    const { platformId, accountId } = await sandboxWallet();
    const { key } = await session(platformId, accountId);
    await activeKey(platformId, accountId, key);
    const body = new TextEncoder().encode("{}");
    const c = (await h.wallet.createSignedChallenge({ platformId, accountId, operation: "OTHER_OPERATION", body })).challenge!;
    await expectPublicError(h.wallet.verifySignedRetry({ platformId, accountId, operation: "OTHER_OPERATION", signedRetry: { requestId: c.requestId, signature: "" }, body }), "UNAUTHENTICATED", "WALLET_SIGNATURE_MISSING");
    const client = newClientKeyPair();
    const exp = await h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey });
    await expectPublicError(
      h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey, signedRetry: { requestId: (exp.result.value as { requestId: string }).requestId, signature: "" } }),
      "UNAUTHENTICATED",
      "UNAUTHORIZED",
    );
  });

  it("allow one ACTIVE key per wallet; an abandoned PENDING key blocks nothing", async () => {
    const { platformId, accountId } = await sandboxWallet();
    const { key } = await session(platformId, accountId);
    const body = { platformId, fundingSourceId: sourceOf(accountId), nickname: "abandoned" };
    const leg1 = await h.walletKeys.createDelegatedKey(body);
    await h.walletKeys.createDelegatedKey({ ...body, signedRetry: signed(key, leg1.result.value as never) });
    const k = await activeKey(platformId, accountId, key);
    await expectPublicError(h.walletKeys.createDelegatedKey(body), "CONFLICT", "DELEGATED_KEY_EXISTS");
    const listed = (await h.walletKeys.listDelegatedKeys({ platformId, accountId })).keys.map((x) => x.status).sort();
    expect(listed).toEqual(["ACTIVE", "PENDING"]);
    const pending = (await h.walletKeys.listDelegatedKeys({ platformId, accountId })).keys.find((x) => x.status === "PENDING")!;
    await expectPublicError(h.walletKeys.revokeDelegatedKey({ platformId, id: pending.id }), "INVALID", "DELEGATED_KEY_NOT_ACTIVE");
    await h.walletKeys.revokeDelegatedKey({ platformId, id: k.id });
  });

  it("are made for a card funding source: the key names its card and wallet, the ledger hears of activation and revocation, and a foreign or unknown source is 404", async () => {
    const { platformId, accountId, fundingSourceId } = await sandboxWallet();
    const { key } = await session(platformId, accountId);
    const k = (await activeKey(platformId, accountId, key)) as unknown as { id: string; cardId: string; accountId: string; fundingSourceId: string };
    const cardId = sources.get(fundingSourceId)!.cardId;
    expect(k).toMatchObject({ cardId, accountId, fundingSourceId });
    // The activation's DelegatedKeyChanged, on the ledger's topic, keyed by the funding source.
    expect(await keyEvents(fundingSourceId)).toEqual([
      { topic: topics.platformDelegatedKeys, key: fundingSourceId, type: "DELEGATED_KEY_CHANGED", platformId, change: { keyId: k.id, accountId, cardId, fundingSourceId, status: "ACTIVE" } },
    ]);
    const bySource = (await h.walletKeys.listDelegatedKeys({ platformId, fundingSourceId })).keys;
    expect(bySource.map((x) => x.id)).toEqual([k.id]);
    await expectPublicError(h.walletKeys.listDelegatedKeys({ platformId }), "INVALID", "INVALID_INPUT");
    await h.walletKeys.revokeDelegatedKey({ platformId, id: k.id });
    expect((await keyEvents(fundingSourceId)).map((e) => e.change.status)).toEqual(["ACTIVE", "REVOKED"]);
    // A refused revocation (the key is no longer ACTIVE) writes nothing.
    await expectPublicError(h.walletKeys.revokeDelegatedKey({ platformId, id: k.id }), "INVALID", "DELEGATED_KEY_NOT_ACTIVE");
    expect(await keyEvents(fundingSourceId)).toHaveLength(2);
    const other = await sandboxWallet();
    await expectPublicError(h.walletKeys.createDelegatedKey({ platformId: other.platformId, fundingSourceId, nickname: "x" }), "NOT_FOUND", "CARD_FUNDING_SOURCE_NOT_FOUND");
    await expectPublicError(h.walletKeys.createDelegatedKey({ platformId, fundingSourceId: "CardFundingSource:00000000-0000-7000-8000-000000000000", nickname: "x" }), "NOT_FOUND", "CARD_FUNDING_SOURCE_NOT_FOUND");
    await expectPublicError(h.walletKeys.createDelegatedKey({ platformId, fundingSourceId: "", nickname: "x" }), "INVALID", "INVALID_INPUT");
  });

  it("keep a key made before cards (no card, no funding source) readable by its wallet, signing, and revocable, answered without cardId", async () => {
    const { platformId, accountId, fundingSourceId } = await sandboxWallet();
    const { key } = await session(platformId, accountId);
    const k = await activeKey(platformId, accountId, key);
    // What migration 20270102000000 leaves a key made before it: both columns null.
    await h.db.forSchema<any>("auth_sessions").updateTable("wallet_delegated_keys").set({ card_id: null, funding_source_id: null }).where("id", "=", k.id).execute();
    const legacy = (await h.walletKeys.getDelegatedKey({ platformId, id: k.id })).key!;
    expect(legacy).toMatchObject({ id: k.id, accountId, status: "ACTIVE", cardId: "", fundingSourceId: "" });
    expect((await h.walletKeys.listDelegatedKeys({ platformId, accountId })).keys.map((x) => x.id)).toEqual([k.id]);
    expect((await h.walletKeys.listDelegatedKeys({ platformId, fundingSourceId })).keys).toEqual([]);
    const body = new TextEncoder().encode('{"quoteId":"Quote:legacy"}');
    const c = (await h.wallet.createSignedChallenge({ platformId, accountId, operation: "EXECUTE_QUOTE", body })).challenge!;
    await h.wallet.verifySignedRetry({ platformId, accountId, operation: "EXECUTE_QUOTE", signedRetry: { requestId: c.requestId, signature: "" }, body });
    const before = (await h.outboxEvents()).length;
    await h.walletKeys.revokeDelegatedKey({ platformId, id: k.id });
    expect((await h.walletKeys.getDelegatedKey({ platformId, id: k.id })).key!.status).toBe("REVOKED");
    // No funding source, nothing for the ledger: no event.
    expect((await h.outboxEvents()).length).toBe(before);
  });

  it("write their change into the outbox in the key's own transaction: committed together, or neither when it rolls back", async () => {
    const { platformId, accountId, fundingSourceId } = await sandboxWallet();
    const { key } = await session(platformId, accountId);
    const k = await activeKey(platformId, accountId, key);
    expect(await keyEvents(fundingSourceId)).toHaveLength(1);
    const transact = walletTransactOver(h.db.forSchema<AuthSessionsDatabase>("auth_sessions"));
    const revoke = (store: WalletStore) =>
      store.delegatedKeys.get(platformId, k.id, { forUpdate: true }).then(async (stored) => {
        const at = new Date(stored!.updatedAt.getTime() + 1000);
        await store.delegatedKeys.setStatus(platformId, k.id, "ACTIVE", "REVOKED", at);
        await store.events.delegatedKeyChanged({ ...stored!, status: "REVOKED", updatedAt: at });
      });
    // The revocation and its event, then a failure before the commit: the key stays ACTIVE and no event is left.
    await expect(
      transact(async (store) => {
        await revoke(store);
        throw new Error("fails before the commit");
      }),
    ).rejects.toThrow("fails before the commit");
    expect((await h.walletKeys.getDelegatedKey({ platformId, id: k.id })).key!.status).toBe("ACTIVE");
    expect((await keyEvents(fundingSourceId)).map((e) => e.change.status)).toEqual(["ACTIVE"]);
    // The same work committed: both.
    await transact(revoke);
    expect((await h.walletKeys.getDelegatedKey({ platformId, id: k.id })).key!.status).toBe("REVOKED");
    expect((await keyEvents(fundingSourceId)).map((e) => e.change.status)).toEqual(["ACTIVE", "REVOKED"]);
  });
});

/** The DelegatedKeyChanged events in auth-sessions' outbox for a funding source, oldest first. */
async function keyEvents(fundingSourceId: string) {
  return (await h.outboxEvents())
    .filter((r) => r.event.payload.case === "delegatedKeyChanged" && r.event.payload.value.fundingSourceId === fundingSourceId)
    .map((r) => {
      const v = r.event.payload.value as { keyId: string; accountId: string; cardId: string; fundingSourceId: string; status: string };
      return {
        topic: r.topic,
        key: r.key,
        type: r.headers["event-type"],
        platformId: r.event.platformId,
        change: { keyId: v.keyId, accountId: v.accountId, cardId: v.cardId, fundingSourceId: v.fundingSourceId, status: v.status },
      };
    });
}

describe("code delivery (contact verification)", () => {
  it("never writes a code to the log: sandbox without a mail server sends nothing, production is refused", async () => {
    const sandbox = await h.newPlatform({ environment: Environment.SANDBOX });
    const production = await h.newPlatform({ environment: Environment.PRODUCTION });
    const res = await h.codeDelivery.deliverCode({ platformId: sandbox.platformId, channel: "EMAIL", to: "a@example.com", code: "482913", customerId: "Customer:x" });
    expect(res.delivered).toBe(false);
    await expectPublicError(h.codeDelivery.deliverCode({ platformId: production.platformId, channel: "EMAIL", to: "a@example.com", code: "482913", customerId: "Customer:x" }), "INVALID", "EMAIL_DELIVERY_NOT_CONFIGURED");
    await expectPublicError(h.codeDelivery.deliverCode({ platformId: production.platformId, channel: "PHONE", to: "+15550100", code: "482913", customerId: "Customer:x" }), "INVALID", "SMS_DELIVERY_NOT_CONFIGURED");
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("\n")).not.toContain("482913");
  });
});
