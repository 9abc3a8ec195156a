import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient, type ConnectRouter } from "@connectrpc/connect";
import {
  ManualClock,
  createInProcessBus,
  createLogger,
  errors,
  newId,
  startInProcess,
  toConnectError,
  topics,
  type Bus,
  type InProcessSystem,
  type ServiceModule,
} from "@corridor/kit";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { CustomersKycService } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import { CustomerEventSchema } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import { register } from "tsx/esm/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// The sandbox is the rail connector under test here; tests may reach across workspace folders.
import { service as sandbox } from "../../sandbox/src/server.js";
import { service as ledger } from "../src/server.js";
import { balanceSums, openTestDatabase } from "./harness.js";

/** A German IBAN (valid mod-97 check digits) whose last characters are the BBAN's: the sandbox suffix. */
function germanIban(bban: string): string {
  const digits = [...`${bban}DE00`].map((ch) => (/[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch)).join("");
  const rem = [...digits].reduce((r, d) => (r * 10 + Number(d)) % 97, 0);
  return `DE${String(98 - rem).padStart(2, "0")}${bban}`;
}

/**
 * The quote payout suffix table end to end inside one process: the ledger's QUOTE_PAYOUT goes over
 * the bus to the sandbox rail simulator, whose outcomes (some scheduled on the platform's sandbox
 * clock) come back to the ledger. customers-kyc and auth-sessions are fakes.
 */
describe("quote payouts through the sandbox rail", () => {
  const clock = new ManualClock("2026-01-01T00:00:00.000Z");
  const customers = new Map<string, string>();
  let system: InProcessSystem;
  let bus: Bus;
  let drop: () => Promise<void>;
  let db: Awaited<ReturnType<typeof openTestDatabase>>["db"];

  const empty = mkdtempSync(join(tmpdir(), "corridor-fake-"));
  const fake = (name: "auth-sessions" | "customers-kyc", routes: (router: ConnectRouter) => void): ServiceModule => ({
    name,
    schema: `fake_${name.replace("-", "_")}`,
    migrationsDir: empty,
    build: () => ({ routes, consumers: [], workers: [] }),
  });

  beforeAll(async () => {
    register();
    ({ db, drop } = await openTestDatabase());
    bus = createInProcessBus();
    system = await startInProcess({
      modules: [
        fake("auth-sessions", (router) =>
          router.service(AuthSessionsService, {
            async getPlatform(req: { platformId: string }) {
              return { platform: { id: req.platformId, name: "p", environment: Environment.SANDBOX } };
            },
          } as never),
        ),
        fake("customers-kyc", (router) =>
          router.service(CustomersKycService, {
            async getCustomerSummary(req: { platformId: string; customerId: string }) {
              if (customers.get(req.customerId) !== req.platformId) throw toConnectError(errors.notFound("Customer", req.customerId));
              return { customer: { customerId: req.customerId, platformId: req.platformId, platformCustomerId: "pc", currencies: ["USD"], verificationStatus: "APPROVED", customerType: "INDIVIDUAL" } };
            },
          } as never),
        ),
        ledger,
        sandbox,
      ],
      db,
      bus,
      clock,
      log: createLogger("quotes-sandbox-test", "silent"),
      env: { SANDBOX_SCHEDULE_POLL_MS: "20" },
    });
  });
  afterAll(async () => {
    await system?.stop();
    await bus?.close();
    await drop?.();
  });

  const ledgerClient = () => createClient(LedgerService, system.transportFor("ledger"));
  const sandboxClient = () => createClient(SandboxService, system.transportFor("sandbox"));

  /** Publishes as the owning service's relay would; resolves once every consumer processed it. */
  async function publish<D extends DescMessage>(topic: string, key: string, schema: D, message: MessageShape<D> & { eventId: string }) {
    await bus.publish([{ topic, key, value: toBinary(schema, message), headers: { "event-id": message.eventId } }]);
  }

  async function world() {
    const platformId = newId("Platform");
    const customerId = newId("Customer");
    customers.set(customerId, platformId);
    await publish(
      topics.platforms,
      platformId,
      PlatformEventSchema,
      create(PlatformEventSchema, {
        eventId: newId("Event"),
        occurredAt: timestampFromDate(clock.now()),
        platformId,
        payload: { case: "platformCreated", value: { platform: { id: platformId, environment: Environment.SANDBOX }, config: { platformId, supportedCurrencies: [{ currencyCode: "USD" }, { currencyCode: "EUR" }] } } },
      }),
    );
    await publish(
      topics.customerRecords,
      platformId,
      CustomerEventSchema,
      create(CustomerEventSchema, {
        eventId: newId("Event"),
        occurredAt: timestampFromDate(clock.now()),
        platformId,
        payload: { case: "customerCreated", value: { customer: { customerId, platformId, platformCustomerId: "pc", currencies: ["USD"], verificationStatus: "APPROVED" } } },
      }),
    );
    const l = ledgerClient();
    const usd = (await l.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId, currency: "USD" })).accounts.find((a) => a.type === "INTERNAL_FIAT")!;
    await l.fundInternalAccount({ platformId, accountId: usd.id, amount: 10_000n });
    return { platformId, customerId, usd };
  }

  async function pay(w: { platformId: string; customerId: string; usd: { id: string } }, destination: { suffix?: string; uma?: string }) {
    const l = ledgerClient();
    let dest: { type: string; accountId?: string; umaAddress?: string };
    if (destination.uma) dest = { type: "UMA_ADDRESS", umaAddress: destination.uma };
    else {
      const accountInfo = { accountType: "EUR_ACCOUNT", iban: germanIban(`370400440532013${destination.suffix}`) };
      const ext = (await l.createExternalAccount({ platformId: w.platformId, owner: "CUSTOMER", customerId: w.customerId, currency: "EUR", accountInfo })).account!;
      dest = { type: "EXTERNAL_ACCOUNT", accountId: ext.id };
    }
    const tx = (
      await l.createQuoteTransaction({
        platformId: w.platformId,
        quoteId: newId("Quote"),
        customerId: w.customerId,
        source: { type: "INTERNAL_ACCOUNT", accountId: w.usd.id },
        destination: dest,
        sendingCurrency: "USD",
        totalSendingAmount: 1_000n,
        receivingCurrency: "EUR",
        totalReceivingAmount: 900n,
        feesIncluded: 10n,
        exchangeRate: "1.1",
      })
    ).transaction!;
    await l.executeQuoteTransaction({ platformId: w.platformId, transactionId: tx.id });
    return tx.id;
  }

  const state = async (platformId: string, id: string) => {
    const t = (await ledgerClient().getTransaction({ platformId, transactionId: id })).transaction!;
    return { status: t.status, failureReason: t.failureReason, refund: t.refund?.status ?? null };
  };
  const balance = async (platformId: string, id: string) => (await ledgerClient().getInternalAccount({ platformId, accountId: id })).account!.available;
  /** Waits until the simulator has scheduled the transaction's later outcomes (before moving the clock). */
  const scheduled = (id: string) =>
    expect
      .poll(async () => (await db.forSchema<any>(sandbox.schema).selectFrom("scheduled_actions").select("payload").where("status", "=", "PENDING").execute()).filter((r: any) => r.payload.transactionId === id).length, {
        timeout: 5_000,
        interval: 20,
      })
      .toBeGreaterThan(0);
  const settle = (platformId: string, id: string, expected: Record<string, unknown>) => expect.poll(() => state(platformId, id), { timeout: 5_000, interval: 20 }).toEqual(expected);

  it("runs every suffix of the quote table to its outcome, refunding what failed", async () => {
    const w = await world();
    const cases: [string, Record<string, unknown>, bigint][] = [
      ["000", { status: "COMPLETED", failureReason: "", refund: null }, -1000n],
      ["002", { status: "FAILED", failureReason: "QUOTE_EXECUTION_FAILED", refund: null }, 0n],
      ["004", { status: "FAILED", failureReason: "OFFRAMP_FAILED", refund: "COMPLETED" }, 0n],
      ["006", { status: "FAILED", failureReason: "OFFRAMP_FAILED", refund: "COMPLETED" }, 0n],
      ["007", { status: "FAILED", failureReason: "OFFRAMP_FAILED", refund: "FAILED" }, -1000n],
    ];
    let expectedBalance = 10_000n;
    for (const [suffix, expected, delta] of cases) {
      const id = await pay(w, { suffix });
      await settle(w.platformId, id, expected);
      expectedBalance += delta;
      expect(await balance(w.platformId, w.usd.id), `after suffix ${suffix}`).toBe(expectedBalance);
    }
    for (const [currency, sum] of await balanceSums(db, w.platformId)) expect(sum, currency).toBe(0n);
  });

  it("completes suffix 003 only after 6 minutes of sandbox clock", async () => {
    const w = await world();
    const id = await pay(w, { suffix: "003" });
    await scheduled(id);
    expect(await state(w.platformId, id)).toEqual({ status: "PROCESSING", failureReason: "", refund: null });
    await sandboxClient().advanceClock({ platformId: w.platformId, seconds: 359n });
    expect((await state(w.platformId, id)).status).toBe("PROCESSING");
    await sandboxClient().advanceClock({ platformId: w.platformId, seconds: 1n });
    await settle(w.platformId, id, { status: "COMPLETED", failureReason: "", refund: null });
  });

  it("completes suffix 005, then the bank's return a minute later fails and refunds it", async () => {
    const w = await world();
    const id = await pay(w, { suffix: "005" });
    await settle(w.platformId, id, { status: "COMPLETED", failureReason: "", refund: null });
    await scheduled(id);
    expect(await balance(w.platformId, w.usd.id)).toBe(9_000n);
    await sandboxClient().advanceClock({ platformId: w.platformId, seconds: 60n });
    await settle(w.platformId, id, { status: "FAILED", failureReason: "OFFRAMP_FAILED", refund: "COMPLETED" });
    expect(await balance(w.platformId, w.usd.id)).toBe(10_000n);
  });

  it("pays UMA addresses by scenario: success, long pending, compliance failure with refund", async () => {
    const w = await world();
    const ok = await pay(w, { uma: "$success.eur@sandbox.uma.money" });
    const slow = await pay(w, { uma: "$pending.long.usd@sandbox.uma.money" });
    const fail = await pay(w, { uma: "$fail.compliance.usd@sandbox.uma.money" });
    await settle(w.platformId, ok, { status: "COMPLETED", failureReason: "", refund: null });
    await settle(w.platformId, fail, { status: "FAILED", failureReason: "PAY_REQUEST_FAILED", refund: "COMPLETED" });
    await scheduled(slow);
    await sandboxClient().advanceClock({ platformId: w.platformId, seconds: 23n * 3600n });
    expect((await state(w.platformId, slow)).status).toBe("PROCESSING");
    await sandboxClient().advanceClock({ platformId: w.platformId, seconds: 3600n });
    await settle(w.platformId, slow, { status: "COMPLETED", failureReason: "", refund: null });
    expect(await balance(w.platformId, w.usd.id)).toBe(8_000n);
  });

  it("reaches REFUNDED (suffix 008, $refunded.*), LNURLP_FAILED and MISSING_MANDATORY_PAYEE_DATA with the money back (issue 10)", async () => {
    const w = await world();
    const cases: [{ suffix?: string; uma?: string }, Record<string, unknown>][] = [
      [{ suffix: "008" }, { status: "REFUNDED", failureReason: "OFFRAMP_FAILED", refund: "COMPLETED" }],
      [{ uma: "$refunded.usd@sandbox.uma.money" }, { status: "REFUNDED", failureReason: "OFFRAMP_FAILED", refund: "COMPLETED" }],
      [{ uma: "$fail.lnurlp.usd@sandbox.uma.money" }, { status: "FAILED", failureReason: "LNURLP_FAILED", refund: "COMPLETED" }],
      [{ uma: "$fail.payeedata.usd@sandbox.uma.money" }, { status: "FAILED", failureReason: "MISSING_MANDATORY_PAYEE_DATA", refund: "COMPLETED" }],
    ];
    for (const [destination, expected] of cases) {
      const id = await pay(w, destination);
      await settle(w.platformId, id, expected);
      expect(await balance(w.platformId, w.usd.id), JSON.stringify(destination)).toBe(10_000n);
    }
    for (const [currency, sum] of await balanceSums(db, w.platformId)) expect(sum, currency).toBe(0n);
  });
});
