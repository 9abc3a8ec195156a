import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import type { RunningConnector } from "@corridor/connector";
import { sepaConnector } from "@corridor/connector-sepa-iso20022";
import { ManualClock } from "@corridor/kit";
import { KycAdminService } from "@corridor/proto/corridor/customers_kyc/v1/kyc_admin_service_pb.js";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { QuotesFxAdminService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_admin_service_pb.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { testBank } from "../../connectors/sepa-iso20022/test/test-bank.js";
import { E2E_WALLET_ENCRYPTION_KEY } from "../infra/split-setup.js";
import { otpCodeOf, remoteMailbox, startMailCatcher, type MailCatcher, type Mailbox } from "../support/mail-catcher.js";
import { startRateFeed, type RateFeed } from "../support/rate-feed.js";
import { newClientKeyPair, openSealed } from "../support/wallet-client.js";
import { E2E_OIDC_AUDIENCES, E2E_OIDC_JWKS_CACHE_MS, OidcProviderClient, startOidcProvider, type RunningOidcProvider } from "../support/oidc-provider.js";
import { testConnector } from "../support/test-connector.js";
import { business, individual, uniq } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { iban, txStatus, usdAccountInfo } from "./ledger-helpers.js";

/**
 * Issue 25's production journey, through the public API and the operator's admin RPCs (what
 * `npm run admin` calls), in both run modes: the operator creates a PRODUCTION platform and binds
 * its rails; the platform onboards an individual and a business (with an owner) whose KYC goes
 * through the hosted page with documents, and the operator approves the individual and the owner
 * and rejects the business; rates come from an ECB-format feed quotes-fx pulls; a USD → EUR quote
 * is priced from it, executed and paid out by the SEPA connector (pain.001 files a test bank reads
 * with its own parser and answers with pain.002); a wallet's EMAIL_OTP code arrives by real SMTP and
 * becomes a session; an OAUTH credential verifies with a real OpenID provider's ID tokens. Every change is an event the platform's webhooks are made of (GET /events);
 * bad input is answered in the error shape. The customer's dollars arrive by a transfer-in over a
 * test connector bound to (USD, ACH): the ACH connector's own journey is test/e2e/ach-nacha.test.ts.
 */
describe.skipIf(skipReason())(`a production platform end to end (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let feed: RateFeed | undefined;
  let provider: RunningOidcProvider | undefined;
  let idp: OidcProviderClient;
  let catcher: MailCatcher | undefined;
  let mailbox: Mailbox;
  let sepa: RunningConnector;
  let kyc: Client<typeof KycAdminService>;
  const bank = testBank({});
  for (const d of ["inbox", "outbox", "archive"]) mkdirSync(join(bank.root, d), { recursive: true });
  // The SEPA connector's clock: the test moves it past the bank's cut-offs.
  const sepaClock = new ManualClock(new Date());
  const funding = testConnector("journey-ach");

  beforeAll(async () => {
    if (mode === "embedded") {
      // Embedded services read process.env when built (split: test/infra/split-setup.ts sets the same).
      feed = await startRateFeed();
      process.env.CORRIDOR_FX_RATE_FEED_URL = feed.url;
      process.env.CORRIDOR_FX_RATE_FEED_FORMAT = "ecb-xml";
      catcher = await startMailCatcher();
      process.env.CORRIDOR_SMTP_URL = catcher.smtpUrl;
      process.env.CORRIDOR_WALLET_ENCRYPTION_KEY = E2E_WALLET_ENCRYPTION_KEY;
      mailbox = catcher;
      // A real OpenID provider on loopback HTTPS, trusted by discovery as an operator configures it.
      provider = await startOidcProvider();
      process.env.CORRIDOR_OIDC_ISSUERS = JSON.stringify([{ issuer: provider.issuer, audience: E2E_OIDC_AUDIENCES }]);
      process.env.CORRIDOR_OIDC_CA_FILE = provider.caFile;
      process.env.CORRIDOR_OIDC_ALLOW_LOOPBACK = "true";
      process.env.CORRIDOR_OIDC_JWKS_CACHE_MS = String(E2E_OIDC_JWKS_CACHE_MS);
      idp = new OidcProviderClient({ issuer: provider.issuer, caPem: provider.caPem });
    } else {
      mailbox = remoteMailbox(inject("splitMailboxUrl")!);
      idp = new OidcProviderClient(inject("splitOidcProvider")!);
    }
    system = await startTestSystem();
    kyc = createClient(KycAdminService, system.transportFor("customers-kyc"));
    sepa = await system.startConnector({ ...sepaConnector, build: (ctx) => sepaConnector.build({ ...ctx, clock: sepaClock }) }, {
      SEPA_DEBTOR_NAME: "Corridor Operator GmbH",
      SEPA_DEBTOR_IBAN: "DE89370400440532013000",
      SEPA_FILE_DROP_DIR: bank.root,
      SEPA_POLL_MS: "25",
    });
    await system.startConnector(funding.definition);

    // The operator: a production platform and its rails.
    p = await system.createPlatform({ environment: "PRODUCTION", name: "production journey" });
    const ledger = createClient(LedgerAdminService, system.transportFor("ledger"));
    await ledger.bindPlatformRail({ platformId: p.platformId, currency: "EUR", paymentRail: "SEPA", connector: sepaConnector.name });
    await ledger.bindPlatformRail({ platformId: p.platformId, currency: "USD", paymentRail: "ACH", connector: funding.definition.name });
  }, 180_000);
  afterAll(async () => {
    await system?.stop();
    await feed?.close();
    await catcher?.close();
    await provider?.close();
  });

  const PDF = Buffer.from("%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n");
  const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
  const form = (fields: Record<string, string>, file: { bytes: Buffer; type: string; name: string }) => {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    f.append("file", new Blob([file.bytes], { type: file.type }), file.name);
    return f;
  };
  const events = async (type: string, id: string) =>
    (await p.call("GET", `/events?type=${type}&limit=100`)).body.data.filter((e: { payload: { data: { id: string } } }) => e.payload.data.id === id);
  const expectEvent = (type: string, id: string) => eventually(async () => ((await events(type, id)).length > 0 ? true : undefined));
  const reviewOf = async (subjectId: string) => {
    const { reviews } = await kyc.listReviews({ platformId: p.platformId });
    const r = reviews.find((x) => x.subjectId === subjectId && x.status === "SUBMITTED");
    expect(r, `an open review of ${subjectId}`).toBeDefined();
    return r!;
  };
  /** The customer fills the hosted KYC page (with a document) and submits it. */
  const hostedKyc = async (customerId: string) => {
    const link = await p.call("POST", `/customers/${customerId}/kyc-link`);
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    const page = new URL(link.body.kycUrl).pathname;
    const upload = await system.raw("POST", `${page}/documents`, { body: form({ documentType: "PROOF_OF_ADDRESS", country: "US" }, { bytes: JPEG, type: "image/jpeg", name: "bill.jpg" }) });
    expect(upload.status).toBe(200);
    const done = await system.raw("POST", page, { body: "", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(done.status).toBe(200);
  };

  let person: { id: string };

  it("onboards an individual and a business with its owner through the hosted KYC page and the operator's review", async () => {
    person = (await p.call("POST", "/customers", individual({ platformCustomerId: uniq("journey-ind") }))).body;
    const passport = await p.call("POST", "/documents", form({ documentHolder: person.id, documentType: "PASSPORT", country: "US", side: "FRONT" }, { bytes: PDF, type: "application/pdf", name: "passport.pdf" }));
    expect(passport.status, JSON.stringify(passport.body)).toBe(201);
    await hostedKyc(person.id);
    expect((await p.call("GET", `/customers/${person.id}`)).body.kycStatus).toBe("PENDING");
    await expectEvent("CUSTOMER_KYC_PENDING", person.id);

    const biz = (await p.call("POST", "/customers", business({ platformCustomerId: uniq("journey-biz") }))).body;
    const owner = await p.call("POST", "/beneficial-owners", {
      customerId: biz.id,
      roles: ["UBO"],
      ownershipPercentage: 100,
      personalInfo: { firstName: "Olga", lastName: "Owner", birthDate: "1980-01-01", nationality: "US", address: { line1: "1 Main St", postalCode: "94105", country: "US" }, idType: "SSN", identifier: "123-45-6789" },
    });
    expect(owner.status, JSON.stringify(owner.body)).toBe(201);
    expect((await p.call("POST", "/documents", form({ documentHolder: owner.body.id, documentType: "PASSPORT", country: "US", side: "FRONT" }, { bytes: PDF, type: "application/pdf", name: "owner.pdf" }))).status).toBe(201);
    await hostedKyc(biz.id);

    // The operator decides: the individual approved; the owner approved, then the business rejected.
    await kyc.decideReview({ reviewId: (await reviewOf(person.id)).id, decision: "APPROVE" });
    await kyc.decideReview({ reviewId: (await reviewOf(owner.body.id)).id, decision: "APPROVE" });
    await kyc.decideReview({ reviewId: (await reviewOf(biz.id)).id, decision: "REJECT", reason: "registration number does not match the registry" });
    expect((await p.call("GET", `/customers/${person.id}`)).body.kycStatus).toBe("APPROVED");
    expect((await p.call("GET", `/beneficial-owners/${owner.body.id}`)).body.kycStatus).toBe("APPROVED");
    expect((await p.call("GET", `/customers/${biz.id}`)).body.kybStatus).toBe("REJECTED");
    await expectEvent("CUSTOMER_KYC_APPROVED", person.id);
    await expectEvent("CUSTOMER_KYB_REJECTED", biz.id);
    // The rejection is final, in the error shape.
    const again = await p.call("POST", "/verifications", { customerId: biz.id });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ status: 400, code: "CUSTOMER_ALREADY_REJECTED", message: expect.any(String) });
  });

  it("prices from the pulled feed, executes a USD → EUR quote and pays it out by SEPA", async () => {
    // The rates quotes-fx pulled from the feed (1.08 USD per euro), shown with their source.
    const table = await eventually(async () => {
      const { rates } = await createClient(QuotesFxAdminService, system.transportFor("quotes-fx")).listRates({});
      return rates.find((r) => r.currency === "EUR" && r.source === "feed") ? rates : undefined;
    });
    expect(table.find((r) => r.currency === "EUR")).toMatchObject({ usdValue: "1.08", fresh: true });
    const shown = await p.call("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR");
    expect(shown.status, JSON.stringify(shown.body)).toBe(200);

    // The customer's dollars arrive by a pull from their bank (over the test connector bound to USD ACH).
    const usd = await eventually(async () => {
      const res = await p.call("GET", `/customers/internal-accounts?customerId=${encodeURIComponent(person.id)}&currency=USD`);
      return res.status === 200 ? res.body.data.find((a: { type: string }) => a.type === "INTERNAL_FIAT") : undefined;
    });
    const bankAccount = await p.call("POST", "/customers/external-accounts", { customerId: person.id, currency: "USD", accountInfo: usdAccountInfo("417") });
    expect(bankAccount.status, JSON.stringify(bankAccount.body)).toBe(201);
    const pull = await p.call("POST", "/transfer-in", { source: { accountId: bankAccount.body.id }, destination: { accountId: usd.id }, amount: 50_000 });
    expect(pull.status, JSON.stringify(pull.body)).toBe(201);
    await txStatus(p, pull.body.id, "COMPLETED");

    const payee = await p.call("POST", "/customers/external-accounts", {
      customerId: person.id,
      currency: "EUR",
      accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000"), beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Alice Smith" } },
    });
    expect(payee.status, JSON.stringify(payee.body)).toBe(201);
    const bad = await p.call("POST", "/quotes", { source: { sourceType: "ACCOUNT", accountId: usd.id }, destination: { destinationType: "ACCOUNT", accountId: payee.body.id }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: -5 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 400, code: "INVALID_INPUT" });

    const quote = await p.call("POST", "/quotes", { source: { sourceType: "ACCOUNT", accountId: usd.id }, destination: { destinationType: "ACCOUNT", accountId: payee.body.id }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 10_800 });
    expect(quote.status, JSON.stringify(quote.body)).toBe(201);
    // 1.08 × the built-in 0.2% markup; priced from the feed's rate, not the sandbox table.
    expect(quote.body.exchangeRate).toBe(1.08216);
    const executed = await p.call("POST", `/quotes/${quote.body.id}/execute`);
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
    const txId = executed.body.transactionId ?? quote.body.transactionId;

    // The connector files the payout at the next cut-off; the bank reads the pain.001 and accepts it.
    const settled = await eventually(
      async () => {
        sepaClock.advance(6 * 3600_000);
        bank.answer(sepaClock.now().toISOString().slice(0, 19));
        const tx = (await p.call("GET", `/transactions/${txId}`)).body;
        return tx?.status === "COMPLETED" ? tx : undefined;
      },
      60_000,
    );
    expect(settled).toMatchObject({ type: "OUTGOING", status: "COMPLETED", receivedAmount: { currency: { code: "EUR" }, amount: quote.body.totalReceivingAmount } });
    const transfers = bank.received.flatMap((f) => f.transfers);
    expect(transfers.filter((t) => t.creditorIban === iban("DE", "370400440532013000"))).toHaveLength(1);
    // pain.001 carries major units: the bank read exactly the quote's receiving amount.
    expect(transfers[0]!.amount).toBe((quote.body.totalReceivingAmount / 100).toFixed(2));
    await expectEvent("OUTGOING_PAYMENT_COMPLETED", txId);
    expect(await sepa.db.selectFrom("connector_instructions").select("transaction_id").where("transaction_id", "=", txId).execute()).toHaveLength(1);
  });

  it("delivers an EMAIL_OTP code by real SMTP and turns it into a session", async () => {
    const account = await eventually(async () => {
      const res = await p.call("GET", `/customers/internal-accounts?customerId=${encodeURIComponent(person.id)}&type=EMBEDDED_WALLET`);
      return res.status === 200 && res.body.data.length > 0 ? res.body.data[0] : undefined;
    });
    const email = `${uniq("journey")}@example.com`;
    const created = await p.call("POST", "/auth/credentials", { type: "EMAIL_OTP", accountId: account.id, email });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const code = otpCodeOf((await eventually(async () => (await mailbox.mailsTo(email)).at(-1)))!);
    const verify = (otp: string, client = newClientKeyPair()) => p.call("POST", `/auth/credentials/${created.body.id}/verify`, { type: "EMAIL_OTP", otp, clientPublicKey: client.clientPublicKey });
    const wrong = await verify(code === "000000" ? "111111" : "000000");
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    const client = newClientKeyPair();
    const session = await verify(code, client);
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(session.body).toMatchObject({ accountId: account.id, type: "EMAIL_OTP", expiresAt: expect.any(String) });
    expect(await openSealed(session.body.encryptedSessionSigningKey, client)).toHaveLength(32);
  });

  it("registers and verifies an OAUTH credential with a real OpenID provider's ID tokens", async () => {
    const customer = (await p.call("POST", "/customers", individual({ platformCustomerId: uniq("journey-oauth") }))).body;
    const account = await eventually(async () => {
      const res = await p.call("GET", `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&type=EMBEDDED_WALLET`);
      return res.status === 200 && res.body.data.length > 0 ? res.body.data[0] : undefined;
    });
    const sub = uniq("journey-sub");
    const created = await p.call("POST", "/auth/credentials", { type: "OAUTH", accountId: account.id, oidcToken: await idp.idToken(sub) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const client = newClientKeyPair();
    const session = await p.call("POST", `/auth/credentials/${created.body.id}/verify`, { type: "OAUTH", oidcToken: await idp.idToken(sub), clientPublicKey: client.clientPublicKey });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(await openSealed(session.body.encryptedSessionSigningKey, client)).toHaveLength(32);
    const forged = await p.call("POST", `/auth/credentials/${created.body.id}/verify`, { type: "OAUTH", oidcToken: "sandbox-valid-oidc-token", clientPublicKey: client.clientPublicKey });
    expect(forged.status).toBe(401);
    expect(forged.body).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
  });
});
