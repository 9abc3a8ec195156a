import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId } from "@corridor/kit";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { RailNoticeSchema } from "@corridor/proto/corridor/ledger/v1/rail_notices_pb.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_BANK } from "../src/domain/funding.js";
import { referencesIn, sameBankAccount } from "../src/domain/deposits.js";
import { balanceSums, publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

// Issue 24 item 5 (docs/connectors.md "Notices", docs/operations.md "Deposits in suspense"):
// INCOMING_CREDIT notices credit the internal account their funding reference names, or wait in
// suspense; ACCOUNT_CORRECTION notices correct the external account. On PostgreSQL.
describe("deposits and notifications of change from rail notices", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    // Production accounts are paid into the operator's bank (without one they have no funding instructions).
    h = await startLedgerHarness({ env: { LEDGER_FUNDING_BANK_ACCOUNTS: JSON.stringify([{ currency: "USD", bankName: "Operator Bank", accountNumber: "000123456789", routingNumber: "121042882" }]) } });
  });
  afterAll(async () => h?.close());

  const CONNECTOR = "ach-test";

  async function production(opts: { bind?: boolean } = {}) {
    const platformId = await h.newPlatform({ environment: Environment.PRODUCTION });
    if (opts.bind ?? true) await h.admin.bindPlatformRail({ platformId, currency: "USD", paymentRail: "ACH", connector: CONNECTOR });
    const { accounts } = await h.ledger.listInternalAccounts({ platformId, owner: "PLATFORM", currency: "USD" });
    const account = accounts[0]!;
    const info = account.fundingPaymentInstructions[0]!.accountOrWalletInfo as unknown as { reference: string; accountNumber: string };
    return { platformId, account, reference: info.reference, fundingAccount: info.accountNumber };
  }

  const credit = (o: { bankEntryId?: string; eventId?: string; amount?: bigint; currency?: string; reference: string; creditedAccount?: string; connector?: string; environment?: string }) =>
    create(RailNoticeSchema, {
      eventId: o.eventId ?? newId("Event"),
      occurredAt: timestampFromDate(h.clock.now()),
      connector: o.connector ?? CONNECTOR,
      environment: o.environment ?? "PRODUCTION",
      bankEntryId: o.bankEntryId ?? newId("Event"),
      notice: {
        case: "incomingCredit",
        value: {
          amount: o.amount ?? 2_500n,
          currency: o.currency ?? "USD",
          paymentRail: "ACH",
          creditedAccount: o.creditedAccount ?? SANDBOX_BANK.accountNumber,
          creditedRouting: SANDBOX_BANK.routingNumber,
          reference: o.reference,
          senderName: "ACME PAYROLL",
          senderAccount: "1234567890",
          valueDate: "2026-01-02",
        },
      },
    });
  const deliver = (m: ReturnType<typeof credit>) => h.deliver("rail-notices", m);
  const balance = async (platformId: string, accountId: string) => (await h.ledger.getInternalAccount({ platformId, accountId })).account!.balance;
  const incoming = async (platformId: string) => (await h.ledger.listTransactions({ platformId, type: "INCOMING" })).transactions;
  const suspense = async (status = "ALL") => (await h.admin.listSuspenseItems({ status, limit: 500 })).items;

  it("references are found in remittance text; bank accounts compare as banks write them", () => {
    expect(referencesIn("PAYMENT dep-ABCDEFGH23 thanks")).toEqual(["DEP-ABCDEFGH23"]);
    expect(referencesIn("DEP-ABCDEFGH23 DEP-ABCDEFGH23")).toHaveLength(1);
    expect(referencesIn("DEP-ABCDEFGH23 DEP-ZZZZZZZZ22")).toHaveLength(2);
    expect(referencesIn("no reference")).toEqual([]);
    expect(sameBankAccount("000123456789", "123456789")).toBe(true);
    expect(sameBankAccount("DE89 3704 0044 0532 0130 00", "DE89370400440532013000")).toBe(true);
    expect(sameBankAccount("123456789", "123456788")).toBe(false);
    expect(sameBankAccount("", "")).toBe(false);
  });

  it("a matched credit is an INCOMING transaction with its webhooks, from RAIL_CLEARING; the books balance", async () => {
    const p = await production();
    const before = (await h.ledgerEvents()).length;
    await deliver(credit({ reference: `PAYROLL ${p.reference}`, amount: 2_500n }));
    expect(await balance(p.platformId, p.account.id)).toBe(2_500n);
    const [tx] = await incoming(p.platformId);
    expect(tx).toMatchObject({ type: "INCOMING", status: "COMPLETED", amount: 2_500n, currency: { code: "USD" } });
    const events = (await h.ledgerEvents()).slice(before).filter((e) => e.platformId === p.platformId).map((e) => e.eventType);
    expect(events).toEqual(expect.arrayContaining(["INCOMING_PAYMENT_COMPLETED", "INTERNAL_ACCOUNT_BALANCE_UPDATED"]));
    for (const [currency, sum] of await balanceSums(h.db, p.platformId)) expect(sum, currency).toBe(0n);
    const item = (await suspense("CREDITED")).find((i) => i.transactionId === tx!.id)!;
    expect(item).toMatchObject({ status: "CREDITED", internalAccountId: p.account.id, platformId: p.platformId, suspenseReason: "" });
  });

  it("the same bank entry again, under another event id, credits nothing more", async () => {
    const p = await production();
    const bankEntryId = newId("Event");
    await deliver(credit({ bankEntryId, reference: p.reference, amount: 700n }));
    await deliver(credit({ bankEntryId, reference: p.reference, amount: 700n }));
    const same = credit({ bankEntryId, reference: p.reference, amount: 700n });
    await deliver(same);
    await deliver(same);
    expect(await balance(p.platformId, p.account.id)).toBe(700n);
    expect(await incoming(p.platformId)).toHaveLength(1);
  });

  it("what cannot be matched waits in suspense, with why, and credits nobody", async () => {
    const p = await production();
    const unbound = await production({ bind: false });
    const sandbox = await h.newPlatform({ environment: Environment.SANDBOX });
    const sandboxRef = ((await h.ledger.listInternalAccounts({ platformId: sandbox, owner: "PLATFORM", currency: "USD" })).accounts[0]!.fundingPaymentInstructions[0]!.accountOrWalletInfo as unknown as { reference: string }).reference;
    const cases: [ReturnType<typeof credit>, string][] = [
      [credit({ reference: "INVOICE 42" }), "UNKNOWN_REFERENCE"],
      [credit({ reference: "DEP-ABCDEFGH23" }), "UNKNOWN_REFERENCE"],
      [credit({ reference: `${p.reference} ${unbound.reference}` }), "AMBIGUOUS_REFERENCE"],
      [credit({ reference: p.reference, creditedAccount: "99999999" }), "ACCOUNT_MISMATCH"],
      [credit({ reference: p.reference, currency: "EUR" }), "CURRENCY_MISMATCH"],
      [credit({ reference: unbound.reference }), "RAIL_NOT_BOUND"],
      [credit({ reference: sandboxRef }), "NOT_PRODUCTION"],
    ];
    for (const [m, reason] of cases) {
      await deliver(m);
      const item = (await suspense("SUSPENSE")).find((i) => i.bankEntryId === m.bankEntryId);
      expect(item, reason).toMatchObject({ status: "SUSPENSE", suspenseReason: reason, transactionId: "" });
    }
    expect(await balance(p.platformId, p.account.id)).toBe(0n);
    expect(await balance(unbound.platformId, unbound.account.id)).toBe(0n);
    // A sandbox connector's notice is not a deposit at all.
    const fromSandbox = credit({ reference: p.reference, connector: "sandbox", environment: "SANDBOX" });
    await deliver(fromSandbox);
    expect((await suspense()).some((i) => i.bankEntryId === fromSandbox.bankEntryId)).toBe(false);
  });

  it("the operator assigns an item once; a second assignment or a return of a credited item is refused", async () => {
    const p = await production();
    const other = await production();
    const m = credit({ reference: "JOHN SMITH RENT", amount: 1_234n });
    await deliver(m);
    const item = (await suspense("SUSPENSE")).find((i) => i.bankEntryId === m.bankEntryId)!;
    expect(await publicError(h.admin.assignSuspenseItem({ id: item.id, internalAccountId: "" }))).toMatchObject({ code: "INVALID_INPUT" });
    expect(await publicError(h.admin.assignSuspenseItem({ id: newId("RailNotice"), internalAccountId: p.account.id }))).toMatchObject({ code: "SUSPENSE_ITEM_NOT_FOUND" });
    const assigned = (await h.admin.assignSuspenseItem({ id: item.id, internalAccountId: p.account.id, note: "ticket 7" })).item!;
    expect(assigned).toMatchObject({ status: "CREDITED", internalAccountId: p.account.id, note: "ticket 7" });
    expect((await h.admin.assignSuspenseItem({ id: item.id, internalAccountId: p.account.id })).item!.transactionId).toBe(assigned.transactionId);
    expect(await publicError(h.admin.assignSuspenseItem({ id: item.id, internalAccountId: other.account.id }))).toMatchObject({ code: "SUSPENSE_ITEM_NOT_OPEN" });
    expect(await publicError(h.admin.returnSuspenseItem({ id: item.id }))).toMatchObject({ code: "SUSPENSE_ITEM_NOT_OPEN" });
    expect(await balance(p.platformId, p.account.id)).toBe(1_234n);
    expect(await balance(other.platformId, other.account.id)).toBe(0n);
    const [tx] = await incoming(p.platformId);
    expect(tx).toMatchObject({ id: assigned.transactionId, status: "COMPLETED", amount: 1_234n });
    for (const [currency, sum] of await balanceSums(h.db, p.platformId)) expect(sum, currency).toBe(0n);
  });

  it("an assignment to an account that cannot take it changes nothing", async () => {
    const p = await production();
    const m = credit({ reference: "EURO?", currency: "EUR" });
    await deliver(m);
    const item = (await suspense("SUSPENSE")).find((i) => i.bankEntryId === m.bankEntryId)!;
    expect(await publicError(h.admin.assignSuspenseItem({ id: item.id, internalAccountId: p.account.id }))).toMatchObject({ code: "SUSPENSE_ITEM_NOT_ASSIGNABLE" });
    expect((await h.admin.getSuspenseItem({ id: item.id })).item!.status).toBe("SUSPENSE");
  });

  // Rail contract 1.3: a return goes to the connector that reported the credit as a RETURN instruction.
  const returnsOf = async (itemId: string) => (await h.railInstructions()).filter((r) => r.kind === "RETURN" && r.returnedCredit?.suspenseItemId === itemId);
  const fromConnector = { connector: CONNECTOR, environment: "PRODUCTION" };
  const trial = async () => new Map((await h.admin.getTrialBalance({ platformId: "" })).currencies.map((c) => [c.currency, c]));
  const expectTrialExact = async () => {
    for (const c of (await trial()).values()) {
      expect(c.balanceSum, c.currency).toBe(0n);
      expect(c.mismatchedAccountCount, c.currency).toBe(0n);
    }
  };

  it("return: one RETURN instruction to the reporting connector; COMPLETED makes it RETURNED; repeats change nothing; no money moves", async () => {
    const p = await production();
    const before = await balanceSums(h.db, p.platformId);
    const m = credit({ reference: "WRONG BANK", amount: 4_321n });
    await deliver(m);
    const item = (await suspense("SUSPENSE")).find((i) => i.bankEntryId === m.bankEntryId)!;
    expect(await publicError(h.admin.returnSuspenseItem({ id: item.id, reason: "R99" }))).toMatchObject({ code: "INVALID_INPUT" });
    expect(await returnsOf(item.id)).toHaveLength(0);
    const requested = (await h.admin.returnSuspenseItem({ id: item.id, note: "sender asked", reason: "r17" })).item!;
    expect(requested).toMatchObject({ status: "RETURN_REQUESTED", returnReason: "R17", note: "sender asked" });
    expect(requested.returnTransactionId).toMatch(/^Transaction:/);
    // A second call (any reason) answers the item as it is and emits nothing more.
    expect((await h.admin.returnSuspenseItem({ id: item.id })).item!).toMatchObject({ status: "RETURN_REQUESTED", returnTransactionId: requested.returnTransactionId, returnReason: "R17" });
    expect(await publicError(h.admin.returnSuspenseItem({ id: item.id, returned: true }))).toMatchObject({ code: "SUSPENSE_ITEM_NOT_OPEN" });
    expect(await publicError(h.admin.assignSuspenseItem({ id: item.id, internalAccountId: p.account.id }))).toMatchObject({ code: "SUSPENSE_ITEM_NOT_OPEN" });
    const sent = await returnsOf(item.id);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      topic: `corridor.rails.${CONNECTOR}.v1`,
      connector: CONNECTOR,
      environment: "PRODUCTION",
      direction: "PAYOUT",
      kind: "RETURN",
      transactionId: requested.returnTransactionId,
      amount: 4_321n,
      currency: "USD",
      paymentRail: "ACH",
      returnedCredit: { bankEntryId: m.bankEntryId, reason: "R17", senderName: "ACME PAYROLL", senderAccount: "1234567890", reference: "WRONG BANK", creditedAccount: SANDBOX_BANK.accountNumber, valueDate: "2026-01-02" },
    });
    // Outcomes: from another connector ignored; PROCESSING nothing; COMPLETED → RETURNED; again, or a late FAILED, nothing.
    await h.outcome("", requested.returnTransactionId, "COMPLETED", "", newId("Event"), { connector: "other-connector", environment: "PRODUCTION" });
    expect((await h.admin.getSuspenseItem({ id: item.id })).item!.status).toBe("RETURN_REQUESTED");
    await h.outcome("", requested.returnTransactionId, "PROCESSING", "", newId("Event"), fromConnector);
    expect((await h.admin.getSuspenseItem({ id: item.id })).item!.status).toBe("RETURN_REQUESTED");
    const done = newId("Event");
    await h.outcome("", requested.returnTransactionId, "COMPLETED", "", done, fromConnector);
    expect((await h.admin.getSuspenseItem({ id: item.id })).item!.status).toBe("RETURNED");
    await h.outcome("", requested.returnTransactionId, "COMPLETED", "", done, fromConnector);
    await h.outcome("", requested.returnTransactionId, "FAILED", "R01", newId("Event"), fromConnector);
    expect((await h.admin.getSuspenseItem({ id: item.id })).item!).toMatchObject({ status: "RETURNED", returnDetail: "" });
    expect((await h.admin.returnSuspenseItem({ id: item.id })).item!.status).toBe("RETURNED");
    expect(await publicError(h.admin.assignSuspenseItem({ id: item.id, internalAccountId: p.account.id }))).toMatchObject({ code: "SUSPENSE_ITEM_NOT_OPEN" });
    expect(await returnsOf(item.id)).toHaveLength(1);
    // Nothing was booked for the credit in suspense, nor for its return: balances as before, trial balance exact.
    expect(await balanceSums(h.db, p.platformId)).toEqual(before);
    expect(await balance(p.platformId, p.account.id)).toBe(0n);
    await expectTrialExact();
  });

  it("return: FAILED or REJECTED puts it back in suspense (RETURN_FAILED, the reason kept); a new return is a new instruction; it can be assigned instead", async () => {
    const p = await production();
    const m = credit({ reference: "NO SUCH REF", amount: 900n });
    await deliver(m);
    const item = (await suspense("SUSPENSE")).find((i) => i.bankEntryId === m.bankEntryId)!;
    const first = (await h.admin.returnSuspenseItem({ id: item.id })).item!;
    expect(first.returnReason).toBe("R23");
    const failed = newId("Event");
    await h.outcome("", first.returnTransactionId, "FAILED", "BANK_REJECTED", failed, fromConnector);
    expect((await h.admin.getSuspenseItem({ id: item.id })).item!).toMatchObject({ status: "RETURN_FAILED", returnDetail: "FAILED: BANK_REJECTED" });
    expect((await suspense("RETURN_FAILED")).map((i) => i.id)).toContain(item.id);
    // The same outcome redelivered, or a COMPLETED for that failed attempt, changes nothing.
    await h.outcome("", first.returnTransactionId, "FAILED", "BANK_REJECTED", failed, fromConnector);
    await h.outcome("", first.returnTransactionId, "COMPLETED", "", newId("Event"), fromConnector);
    expect((await h.admin.getSuspenseItem({ id: item.id })).item!.status).toBe("RETURN_FAILED");
    // Returned again: a second instruction with a new transaction id; REJECTED fails it too.
    const second = (await h.admin.returnSuspenseItem({ id: item.id, reason: "R03" })).item!;
    expect(second).toMatchObject({ status: "RETURN_REQUESTED", returnReason: "R03", returnDetail: "" });
    expect(second.returnTransactionId).not.toBe(first.returnTransactionId);
    expect((await returnsOf(item.id)).map((r) => r.transactionId)).toEqual([first.returnTransactionId, second.returnTransactionId]);
    await h.outcome("", first.returnTransactionId, "COMPLETED", "", newId("Event"), fromConnector);
    expect((await h.admin.getSuspenseItem({ id: item.id })).item!.status).toBe("RETURN_REQUESTED");
    await h.outcome("", second.returnTransactionId, "REJECTED", "UNSUPPORTED", newId("Event"), fromConnector);
    expect((await h.admin.getSuspenseItem({ id: item.id })).item!).toMatchObject({ status: "RETURN_FAILED", returnDetail: "REJECTED: UNSUPPORTED" });
    // The operator places it instead: credited once.
    expect((await h.admin.assignSuspenseItem({ id: item.id, internalAccountId: p.account.id })).item!.status).toBe("CREDITED");
    expect(await balance(p.platformId, p.account.id)).toBe(900n);
    expect(await publicError(h.admin.returnSuspenseItem({ id: item.id }))).toMatchObject({ code: "SUSPENSE_ITEM_NOT_OPEN" });
    expect(await returnsOf(item.id)).toHaveLength(2);
    for (const [currency, sum] of await balanceSums(h.db, p.platformId)) expect(sum, currency).toBe(0n);
    await expectTrialExact();
  });

  it("returned by hand (outside Corridor): SUSPENSE or RETURN_FAILED → RETURNED with no instruction", async () => {
    await production();
    const m = credit({ reference: "HAND" });
    await deliver(m);
    const item = (await suspense("SUSPENSE")).find((i) => i.bankEntryId === m.bankEntryId)!;
    expect((await h.admin.returnSuspenseItem({ id: item.id, returned: true, note: "wired back by the bank desk" })).item!).toMatchObject({ status: "RETURNED", note: "wired back by the bank desk", returnTransactionId: "" });
    expect((await h.admin.returnSuspenseItem({ id: item.id })).item!.status).toBe("RETURNED");
    expect(await returnsOf(item.id)).toHaveLength(0);
  });

  it("concurrent returns of one item emit exactly one instruction", async () => {
    await production();
    const m = credit({ reference: "RACE" });
    await deliver(m);
    const item = (await suspense("SUSPENSE")).find((i) => i.bankEntryId === m.bankEntryId)!;
    const answers = await Promise.all(Array.from({ length: 5 }, () => h.admin.returnSuspenseItem({ id: item.id })));
    expect(new Set(answers.map((a) => a.item!.returnTransactionId)).size).toBe(1);
    expect(await returnsOf(item.id)).toHaveLength(1);
  });

  it("property: duplicate and concurrent notices and assignments never credit twice", async () => {
    const p = await production();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ entry: fc.integer({ min: 0, max: 3 }), sameEvent: fc.boolean(), matched: fc.boolean(), assignAlso: fc.boolean() }), { minLength: 1, maxLength: 8 }),
        async (steps) => {
          const run = newId("Event");
          const amounts = [101n, 202n, 303n, 404n];
          const events = new Map<number, ReturnType<typeof credit>>();
          const start = await balance(p.platformId, p.account.id);
          const work = steps.map(async (s) => {
            const m = s.sameEvent && events.has(s.entry) ? events.get(s.entry)! : credit({ bankEntryId: `${run}-${s.entry}`, amount: amounts[s.entry]!, reference: s.entry % 2 === 0 ? p.reference : "NO REF" });
            events.set(s.entry, m);
            await deliver(m).catch(() => undefined); // a concurrent duplicate may lose the race on the unique key: the host redelivers, nothing applied
            if (s.assignAlso) {
              const item = (await suspense("ALL")).find((i) => i.bankEntryId === m.bankEntryId);
              if (item) await h.admin.assignSuspenseItem({ id: item.id, internalAccountId: p.account.id }).catch(() => undefined);
            }
          });
          await Promise.all(work);
          // Redeliver every first message once more (the host's retry after a lost race).
          for (const m of events.values()) await deliver(m);
          const items = (await suspense("ALL")).filter((i) => i.bankEntryId.startsWith(run));
          expect(items.length).toBe(new Set(steps.map((s) => s.entry)).size);
          const credited = items.filter((i) => i.status === "CREDITED").reduce((a, i) => a + i.amount, 0n);
          expect((await balance(p.platformId, p.account.id)) - start).toBe(credited);
          // Every entry with the account's reference was credited, exactly once.
          for (const i of items) if (i.reference === p.reference) expect(i.status).toBe("CREDITED");
        },
      ),
      { numRuns: 15 },
    );
    for (const [currency, sum] of await balanceSums(h.db, p.platformId)) expect(sum, currency).toBe(0n);
  });

  describe("notifications of change", () => {
    const correction = (o: { platformId: string; transactionId: string; code: string; corrected: Record<string, string>; connector?: string; bankEntryId?: string }) =>
      create(RailNoticeSchema, {
        eventId: newId("Event"),
        occurredAt: timestampFromDate(h.clock.now()),
        connector: o.connector ?? CONNECTOR,
        environment: "PRODUCTION",
        bankEntryId: o.bankEntryId ?? newId("Event"),
        notice: { case: "accountCorrection", value: { transactionId: o.transactionId, platformId: o.platformId, code: o.code, corrected: o.corrected, correctedData: Object.values(o.corrected).join(" ") } },
      });

    async function paidOut() {
      const p = await production();
      await deliver(credit({ reference: p.reference, amount: 10_000n }));
      const ext = (await h.ledger.createExternalAccount({ platformId: p.platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo("1111222233") })).account!;
      const tx = (await h.ledger.transferOut({ transfer: { platformId: p.platformId, sourceAccountId: p.account.id, destinationAccountId: ext.id, amount: 100n } })).result!.transaction!;
      return { ...p, ext, tx };
    }
    const externalInfo = async (platformId: string, id: string) => (await h.ledger.getExternalAccount({ platformId, owner: "PLATFORM", accountId: id })).account!.accountInfo as Record<string, unknown>;

    it("C03 corrects routing and account number, once, with EXTERNAL_ACCOUNT_UPDATED", async () => {
      const o = await paidOut();
      const before = (await h.ledgerEvents()).length;
      const m = correction({ platformId: o.platformId, transactionId: o.tx.id, code: "C03", corrected: { routingNumber: "011000015", accountNumber: "99887766" } });
      await h.deliver("rail-notices", m);
      await h.deliver("rail-notices", create(RailNoticeSchema, { ...m, eventId: newId("Event") }));
      const info = await externalInfo(o.platformId, o.ext.id);
      expect(info).toMatchObject({ routingNumber: "011000015", accountNumber: "99887766", bankAccountType: "CHECKING" });
      const events = (await h.ledgerEvents()).slice(before).filter((e) => e.eventType === "EXTERNAL_ACCOUNT_UPDATED");
      expect(events).toHaveLength(1);
      expect(events[0]!.payload.case).toBe("externalAccountChanged");
      expect(events[0]!.payload.value).toMatchObject({ changeCode: "C03", transactionId: o.tx.id, changedFields: ["accountNumber", "routingNumber"] });
    });

    it("C05 with a savings transaction code makes the account SAVINGS", async () => {
      const o = await paidOut();
      await h.deliver("rail-notices", correction({ platformId: o.platformId, transactionId: o.tx.id, code: "C05", corrected: { transactionCode: "32", accountType: "SAVINGS" } }));
      expect((await externalInfo(o.platformId, o.ext.id)).bankAccountType).toBe("SAVINGS");
    });

    it("refused corrections change nothing and send nothing", async () => {
      const o = await paidOut();
      const before = (await h.ledgerEvents()).length;
      const refused = [
        correction({ platformId: o.platformId, transactionId: o.tx.id, code: "C02", corrected: { routingNumber: "123456789" } }), // bad check digit
        correction({ platformId: o.platformId, transactionId: o.tx.id, code: "C04", corrected: { name: "JANE DOE" } }), // nothing the account holds
        correction({ platformId: o.platformId, transactionId: o.tx.id, code: "C01", corrected: { accountNumber: "5555" }, connector: "other-bank" }), // not its transaction
        correction({ platformId: o.platformId, transactionId: newId("Transaction"), code: "C01", corrected: { accountNumber: "5555" } }),
      ];
      for (const m of refused) await h.deliver("rail-notices", m);
      expect(await externalInfo(o.platformId, o.ext.id)).toMatchObject({ routingNumber: "021000021", accountNumber: "1111222233" });
      expect((await h.ledgerEvents()).slice(before).filter((e) => e.eventType === "EXTERNAL_ACCOUNT_UPDATED")).toHaveLength(0);
      const rows = await h.db.forSchema<any>("ledger").selectFrom("account_corrections").select(["status", "detail"]).where("bank_entry_id", "in", refused.map((m) => m.bankEntryId)).execute();
      expect(rows.map((r: { status: string }) => r.status)).toEqual(["REFUSED", "REFUSED", "REFUSED", "REFUSED"]);
      // The operator sees them without SQL (LedgerAdminService.ListAccountCorrections, `npm run admin -- noc list`).
      const listed = (await h.admin.listAccountCorrections({})).corrections.filter((c) => refused.some((m) => m.bankEntryId === c.bankEntryId));
      expect(listed.map((c) => [c.code, c.status, c.detail !== ""]).sort()).toEqual([["C01", "REFUSED", true], ["C01", "REFUSED", true], ["C02", "REFUSED", true], ["C04", "REFUSED", true]]);
      expect((await h.admin.listAccountCorrections({ status: "APPLIED" })).corrections.filter((c) => refused.some((m) => m.bankEntryId === c.bankEntryId))).toEqual([]);
      expect((await h.admin.listAccountCorrections({ connector: "other-bank" })).corrections.map((c) => c.code)).toEqual(["C01"]);
      await expect(h.admin.listAccountCorrections({ status: "BOGUS" })).rejects.toThrow(/status/);
    });
  });
});

describe("deposits with the operator's bank account configured (LEDGER_FUNDING_BANK_ACCOUNTS)", () => {
  let h: LedgerHarness;
  const BANK = { currency: "USD", bankName: "Operator Bank", accountNumber: "9876543210", routingNumber: "121042882" };
  beforeAll(async () => {
    h = await startLedgerHarness({ env: { LEDGER_FUNDING_BANK_ACCOUNTS: JSON.stringify([BANK]) } });
  });
  afterAll(async () => h?.close());

  it("production accounts name the operator's bank with their own reference, sandbox accounts the sandbox bank; credits match the configured account only", async () => {
    const platformId = await h.newPlatform({ environment: Environment.PRODUCTION });
    await h.admin.bindPlatformRail({ platformId, currency: "USD", paymentRail: "ACH", connector: "ach-test" });
    const account = (await h.ledger.listInternalAccounts({ platformId, owner: "PLATFORM", currency: "USD" })).accounts[0]!;
    const info = account.fundingPaymentInstructions[0]!.accountOrWalletInfo as unknown as Record<string, string>;
    expect(info).toMatchObject({ accountType: "USD_ACCOUNT", accountNumber: BANK.accountNumber, routingNumber: BANK.routingNumber, bankName: BANK.bankName, reference: expect.stringMatching(/^DEP-/) });
    const sandbox = await h.newPlatform({ environment: Environment.SANDBOX });
    const sandboxInfo = (await h.ledger.listInternalAccounts({ platformId: sandbox, owner: "PLATFORM", currency: "USD" })).accounts[0]!.fundingPaymentInstructions[0]!.accountOrWalletInfo as unknown as Record<string, string>;
    expect(sandboxInfo.accountNumber).toBe(SANDBOX_BANK.accountNumber);

    const notice = (creditedAccount: string) =>
      create(RailNoticeSchema, {
        eventId: newId("Event"),
        occurredAt: timestampFromDate(h.clock.now()),
        connector: "ach-test",
        environment: "PRODUCTION",
        bankEntryId: newId("Event"),
        notice: { case: "incomingCredit", value: { amount: 900n, currency: "USD", paymentRail: "ACH", creditedAccount, reference: info.reference!, senderName: "X", valueDate: "2026-01-02" } },
      });
    const wrong = notice(SANDBOX_BANK.accountNumber);
    await h.deliver("rail-notices", wrong);
    expect((await h.admin.listSuspenseItems({ status: "SUSPENSE" })).items.find((i) => i.bankEntryId === wrong.bankEntryId)).toMatchObject({ suspenseReason: "ACCOUNT_MISMATCH" });
    await h.deliver("rail-notices", notice("0009876543210"));
    expect((await h.ledger.getInternalAccount({ platformId, accountId: account.id })).account!.balance).toBe(900n);
  });
});


describe("production accounts without the operator's bank", () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => h?.close());

  it("have no funding instructions (never the sandbox's made-up bank account or Spark address); sandbox accounts keep theirs", async () => {
    const platformId = await h.newPlatform({ environment: Environment.PRODUCTION });
    const { accounts } = await h.ledger.listInternalAccounts({ platformId, owner: "PLATFORM" });
    expect(accounts.length).toBeGreaterThan(0);
    for (const a of accounts) expect(a.fundingPaymentInstructions).toEqual([]);
    const sandbox = await h.newPlatform({ environment: Environment.SANDBOX });
    const usd = (await h.ledger.listInternalAccounts({ platformId: sandbox, owner: "PLATFORM", currency: "USD" })).accounts[0]!;
    expect((usd.fundingPaymentInstructions[0]!.accountOrWalletInfo as unknown as Record<string, string>).accountNumber).toBe(SANDBOX_BANK.accountNumber);
  });
});
