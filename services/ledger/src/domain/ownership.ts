import { randomBytes, randomInt } from "node:crypto";
import { errors, newId, type Clock, type Logger } from "@corridor/kit";
import { PAYMENT_RAILS, type AccountType } from "./account-info.js";
import { newReference } from "./funding.js";
import { SYSTEM_TYPES, type ExternalAccountRow, type MicroDepositRow, type OwnershipChallengeRow } from "./model.js";
import type { Directory, LedgerStore, LedgerTx } from "./ports.js";
import { candidateRails, type RailRouter } from "./rails.js";
import { SPARK_SIGNATURE_SCHEMES, sparkIdentityKey, verifySparkSignature, type SparkSignatureScheme } from "./spark-signatures.js";

/** How Corridor verifies bank accounts: two small credits whose amounts the customer confirms (a Corridor extension of Grid's route). */
export const MICRO_DEPOSITS = "MICRO_DEPOSITS";

/** How Corridor verifies Spark wallets (Grid's method): the wallet's identity key signs a message. */
export const WALLET_SIGNATURE = "WALLET_SIGNATURE";

/** Account types whose address encodes a key the owner can sign with (the WALLET_SIGNATURE ones). */
const KEYED_WALLETS: ReadonlySet<string> = new Set(["SPARK_WALLET"]);

/** Crypto account types: their default method is WALLET_SIGNATURE (a LIGHTNING one is then refused, naming why). */
const CRYPTO_ACCOUNTS: ReadonlySet<string> = new Set(["SPARK_WALLET", "LIGHTNING"]);

/** The WALLET_SIGNATURE challenge's knobs (config.ts: LEDGER_OWNERSHIP_SIGNATURE_*). */
export interface OwnershipSettings {
  /** How long a signature challenge can be answered. */
  signatureTtlMs: number;
  /** Invalid signatures a challenge takes before it fails. */
  signatureMaxAttempts: number;
}

/** Sandbox platforms' micro-deposits, fixed so tests and integrators can confirm them (docs/connectors.md). */
export const SANDBOX_MICRO_DEPOSIT_AMOUNTS: readonly [bigint, bigint] = [32n, 45n];

/** Wrong confirmations a challenge takes before it fails (the account becomes UNVERIFIED). */
export const MAX_VERIFY_ATTEMPTS = 3;

/** How long the customer has to confirm: the credits take one to three banking days to show. */
export const CHALLENGE_TTL_MS = 14 * 24 * 3600 * 1000;

/** Grid's ExternalAccountStatus values ownership verification moves an account through. */
const PENDING_STATUS = "PENDING_OWNERSHIP_VERIFICATION";
const FAILED_STATUS = "UNVERIFIED";
const VERIFIED_STATUS = "ACTIVE";

/** Production amounts: two different values from 1 to 99 minor units (a guess is right 1 time in 9702). */
function productionAmounts(): [bigint, bigint] {
  const a = randomInt(1, 100);
  let b = randomInt(1, 99);
  if (b >= a) b += 1;
  return [BigInt(a), BigInt(b)];
}

/** The challenge as the API shows it; never the micro-deposit amounts. */
export interface OwnershipChallengeView {
  challenge: OwnershipChallengeRow;
  deposits: MicroDepositRow[];
}

/**
 * External-account ownership verification by micro-deposits (issue 27). A challenge sends two
 * small credits to the account as real rail instructions, routed like a transfer-out (sandbox
 * platforms: the simulator; production: the connector bound to the currency and rail, so an ACH
 * file carries them). Each credit that COMPLETES is booked from the platform's MICRO_DEPOSIT_EXPENSE
 * system account to its RAIL_CLEARING (balanced; the expense account goes negative by what the
 * verification cost the operator), and reversed if the bank returns it. The customer confirms the
 * two amounts; MAX_VERIFY_ATTEMPTS wrong answers fail the challenge.
 *
 * Spark wallets are verified Grid's way (WALLET_SIGNATURE): the challenge is a message binding the
 * platform, the account, its address, a random nonce and the expiry; the wallet's identity key (the
 * one its address encodes) signs it (spark-signatures.ts). One challenge per account is live: a
 * new one replaces it. Verified or failed, the account moves exactly as micro-deposits move it.
 */
export function createOwnership(deps: {
  store: LedgerStore;
  clock: Clock;
  directory: Directory;
  rails: Pick<RailRouter, "route">;
  log?: Pick<Logger, "info" | "warn">;
  settings: OwnershipSettings;
}) {
  const { store, clock, directory, settings } = deps;

  async function account(scope: { platformId: string; ownerKind: "CUSTOMER" | "PLATFORM"; customerId?: string }, id: string): Promise<ExternalAccountRow> {
    const row = await store.getExternalAccount(scope, id);
    if (!row) throw errors.notFound("ExternalAccount", id);
    return row;
  }

  /** A challenge past its time is EXPIRED (and its account UNVERIFIED), in this transaction. */
  async function expireIfDue(trx: LedgerTx, c: OwnershipChallengeRow, now: Date): Promise<OwnershipChallengeRow> {
    if (c.status !== "PENDING" || c.expires_at > now) return c;
    const expired = await trx.updateOwnershipChallenge(c.id, { status: "EXPIRED", failure_reason: "EXPIRED", updated_at: now });
    await markAccount(trx, c.platform_id, c.external_account_id, FAILED_STATUS, "OWNERSHIP_UNVERIFIED", now);
    return expired;
  }

  async function markAccount(trx: LedgerTx, platformId: string, id: string, status: string, code: string, now: Date): Promise<ExternalAccountRow | undefined> {
    const before = await trx.findExternalAccount(platformId, id);
    if (!before || before.status === status) return before;
    const row = await trx.setExternalAccountStatus(platformId, id, status, now);
    if (row) await trx.emitExternalAccountUpdated(row, now, { code, transactionId: "", fields: ["status"] });
    return row;
  }

  /** A challenge failed by the rail (a credit FAILED, REJECTED or RETURNED): the account is UNVERIFIED. */
  async function failChallenge(trx: LedgerTx, c: OwnershipChallengeRow, reason: string, now: Date): Promise<void> {
    if (c.status !== "PENDING") return;
    await trx.updateOwnershipChallenge(c.id, { status: "FAILED", failure_reason: reason, updated_at: now });
    await markAccount(trx, c.platform_id, c.external_account_id, FAILED_STATUS, "OWNERSHIP_UNVERIFIED", now);
  }

  /** 409 OWNERSHIP_VERIFICATION_NOT_APPLICABLE unless `method` can verify `external`, naming why. */
  function notApplicable(external: ExternalAccountRow, method: string): void {
    const type = external.account_type;
    const refuse = (why: string) => {
      throw errors.conflict("OWNERSHIP_VERIFICATION_NOT_APPLICABLE", why, { method, accountType: type });
    };
    if (method === MICRO_DEPOSITS) {
      if (KEYED_WALLETS.has(type)) refuse(`A ${type} cannot receive micro-deposits; its ownership is verified by ${WALLET_SIGNATURE}`);
      if (!PAYMENT_RAILS[type as AccountType]) {
        refuse(`A ${type} cannot receive micro-deposits; ownership verification by MICRO_DEPOSITS applies to bank accounts (${Object.keys(PAYMENT_RAILS).join(", ")})`);
      }
      return;
    }
    if (method === WALLET_SIGNATURE) {
      if (type === "LIGHTNING") {
        refuse("A LIGHTNING account (a BOLT11 invoice or a lightning address) holds no key of its owner that a signature could be checked against; ownership verification by WALLET_SIGNATURE applies to SPARK_WALLET");
      }
      if (!KEYED_WALLETS.has(type)) {
        refuse(`A ${type} has no wallet key to sign with; ownership verification by WALLET_SIGNATURE applies to SPARK_WALLET${PAYMENT_RAILS[type as AccountType] ? `, and a ${type} is verified by ${MICRO_DEPOSITS}` : ""}`);
      }
      if (!sparkIdentityKey(String(external.account_info.address ?? ""))) {
        refuse("The account's address does not decode to a Spark identity key (bech32m over Spark's SparkAddress), so no signature can be checked against it");
      }
      return;
    }
    refuse(
      method === "LIVENESS"
        ? "Corridor offers no LIVENESS verification (it has no hosted biometric provider); Spark wallets are verified by WALLET_SIGNATURE, bank accounts by MICRO_DEPOSITS"
        : `Ownership cannot be verified by ${method}; Corridor verifies Spark wallets by WALLET_SIGNATURE and bank accounts by MICRO_DEPOSITS`,
    );
  }

  /** The message a wallet signs: the platform, the account, its address, a random nonce and the expiry, one per line. */
  function messageToSign(external: ExternalAccountRow, expiresAt: Date): string {
    return [
      "Corridor ownership verification: I control this wallet.",
      `Platform: ${external.platform_id}`,
      `External account: ${external.id}`,
      `Address: ${String(external.account_info.address ?? "")}`,
      `Nonce: ${randomBytes(16).toString("hex")}`,
      `Expires at: ${expiresAt.toISOString()}`,
    ].join("\n");
  }

  /**
   * A WALLET_SIGNATURE challenge for a Spark wallet: 201 with the message. Grid's semantics: a new
   * challenge replaces the one outstanding (FAILED, REPLACED), so there is one live message per
   * account; an UNVERIFIED account becomes PENDING_OWNERSHIP_VERIFICATION again. Nothing is sent
   * anywhere, so nothing costs money.
   */
  async function startSignatureChallenge(scope: { platformId: string }, external: ExternalAccountRow): Promise<OwnershipChallengeView> {
    return store.transaction(async (trx) => {
      const now = clock.now();
      if (external.customer_id) await trx.requireOpenCustomer(scope.platformId, external.customer_id);
      if (!(await trx.findExternalAccount(scope.platformId, external.id))) throw errors.notFound("ExternalAccount", external.id);
      const latest = await trx.latestOwnershipChallenge(scope.platformId, external.id, true);
      if (latest?.status === "VERIFIED") throw errors.conflict("EXTERNAL_ACCOUNT_ALREADY_VERIFIED", "The account's ownership is already verified", { id: external.id });
      if (latest?.status === "PENDING") await trx.updateOwnershipChallenge(latest.id, { status: "FAILED", failure_reason: "REPLACED", updated_at: now });
      const expiresAt = new Date(now.getTime() + settings.signatureTtlMs);
      const challenge: OwnershipChallengeRow = {
        id: newId("OwnershipChallenge"),
        platform_id: scope.platformId,
        external_account_id: external.id,
        method: WALLET_SIGNATURE,
        status: "PENDING",
        currency: external.currency,
        attempts: 0,
        max_attempts: settings.signatureMaxAttempts,
        failure_reason: "",
        message_to_sign: messageToSign(external, expiresAt),
        expires_at: expiresAt,
        created_at: now,
        updated_at: now,
      };
      await trx.insertOwnershipChallenge(challenge);
      await markAccount(trx, scope.platformId, external.id, PENDING_STATUS, "OWNERSHIP_VERIFICATION_STARTED", now);
      return { challenge, deposits: [] };
    });
  }

  /**
   * The wallet's signature over the live challenge's message. Valid: VERIFIED, the account ACTIVE.
   * Invalid: 400 OWNERSHIP_SIGNATURE_INVALID with the attempts left (committed before the
   * refusal); the last one fails the challenge and the account is UNVERIFIED. Expired: 400
   * OWNERSHIP_CHALLENGE_EXPIRED (Grid answers an expired challenge's signature with a 400), the
   * account UNVERIFIED. None outstanding: 409 OWNERSHIP_CHALLENGE_NOT_FOUND; verified: 409
   * EXTERNAL_ACCOUNT_ALREADY_VERIFIED (a replayed signature changes nothing).
   */
  async function verifySignature(scope: { platformId: string }, external: ExternalAccountRow, signature: string, schemeName: string): Promise<ExternalAccountRow> {
    const scheme = (schemeName || "bip137") as SparkSignatureScheme;
    if (!SPARK_SIGNATURE_SCHEMES.includes(scheme)) {
      throw errors.invalidInput([{ field: "signatureScheme", reason: `a ${external.account_type}'s signature scheme is one of ${SPARK_SIGNATURE_SCHEMES.join(", ")} (default bip137)` }]);
    }
    if (signature.length > 1024) throw errors.invalidInput([{ field: "signature", reason: "must be at most 1024 characters" }]);
    const key = sparkIdentityKey(String(external.account_info.address ?? ""));
    const outcome = await store.transaction(async (trx) => {
      const now = clock.now();
      const latest = await trx.latestOwnershipChallenge(scope.platformId, external.id, true);
      const current = latest ? await expireIfDue(trx, latest, now) : undefined;
      if (current?.status === "VERIFIED") throw errors.conflict("EXTERNAL_ACCOUNT_ALREADY_VERIFIED", "The account's ownership is already verified", { id: external.id });
      if (current?.status === "EXPIRED") return { refusal: "expired" as const, challenge: current };
      if (!current || current.status !== "PENDING" || current.method !== WALLET_SIGNATURE) return { refusal: "none" as const, challenge: current };
      if (key && verifySparkSignature(scheme, current.message_to_sign, signature, key)) {
        await trx.updateOwnershipChallenge(current.id, { status: "VERIFIED", attempts: current.attempts + 1, updated_at: now });
        const row = await markAccount(trx, scope.platformId, external.id, VERIFIED_STATUS, "OWNERSHIP_VERIFIED", now);
        if (!row) throw errors.notFound("ExternalAccount", external.id);
        return { refusal: undefined, row };
      }
      const attempts = current.attempts + 1;
      if (attempts >= current.max_attempts) {
        await trx.updateOwnershipChallenge(current.id, { status: "FAILED", attempts, failure_reason: "ATTEMPTS_EXCEEDED", updated_at: now });
        await markAccount(trx, scope.platformId, external.id, FAILED_STATUS, "OWNERSHIP_UNVERIFIED", now);
      } else {
        await trx.updateOwnershipChallenge(current.id, { attempts, updated_at: now });
      }
      return { refusal: "invalid" as const, remaining: current.max_attempts - attempts };
    });
    if (!outcome.refusal) return outcome.row;
    if (outcome.refusal === "invalid") {
      const left = outcome.remaining;
      throw errors.badRequest(
        "OWNERSHIP_SIGNATURE_INVALID",
        left > 0
          ? `The signature is not the wallet's over the challenge's messageToSign (scheme ${scheme}); ${left} attempt${left === 1 ? "" : "s"} left`
          : `The signature is not the wallet's over the challenge's messageToSign (scheme ${scheme}); the challenge failed and the account is UNVERIFIED: start a new challenge`,
        { id: external.id, signatureScheme: scheme, attemptsRemaining: left },
      );
    }
    if (outcome.refusal === "expired") {
      throw errors.badRequest("OWNERSHIP_CHALLENGE_EXPIRED", "The ownership challenge expired before it was signed; the account is UNVERIFIED: start a new challenge", {
        id: external.id,
        expiresAt: outcome.challenge.expires_at.toISOString(),
      });
    }
    const c = outcome.challenge;
    throw errors.conflict(
      "OWNERSHIP_CHALLENGE_NOT_FOUND",
      !c
        ? "No ownership challenge is outstanding for this account; start one with the challenge endpoint"
        : `The account's last ownership challenge is ${c.status}${c.failure_reason ? ` (${c.failure_reason})` : ""}; start a new challenge`,
      { id: external.id, ...(c ? { challengeStatus: c.status, reason: c.failure_reason } : {}) },
    );
  }

  return {
    /**
     * Starts a challenge: 201 with it. The method defaults to the account's: WALLET_SIGNATURE for a
     * Spark wallet (startSignatureChallenge), MICRO_DEPOSITS for a bank account. A micro-deposit
     * challenge outstanding is answered as is (no new credits: a retried request costs nothing); a
     * verified account, or one the method cannot verify, is a 409; a production platform without a
     * connector for the account's rails a 400 PAYMENT_RAIL_NOT_AVAILABLE, before anything is sent.
     */
    async startOwnershipChallenge(
      scope: { platformId: string; ownerKind: "CUSTOMER" | "PLATFORM"; customerId?: string },
      externalAccountId: string,
      method: string,
    ): Promise<OwnershipChallengeView> {
      const external = await account(scope, externalAccountId);
      const m = method || (CRYPTO_ACCOUNTS.has(external.account_type) ? WALLET_SIGNATURE : MICRO_DEPOSITS);
      notApplicable(external, m);
      if (external.status === VERIFIED_STATUS && (await store.latestOwnershipChallenge(scope.platformId, external.id))?.status === "VERIFIED") {
        throw errors.conflict("EXTERNAL_ACCOUNT_ALREADY_VERIFIED", "The account's ownership is already verified", { id: external.id });
      }
      if (m === WALLET_SIGNATURE) return startSignatureChallenge(scope, external);
      // Routing (and its 400) before the money transaction, as for transfers.
      const route = await deps.rails.route(scope.platformId, external.currency, candidateRails(external.account_info));
      const environment = await directory.environment(scope.platformId);
      return store.transaction(async (trx) => {
        const now = clock.now();
        if (external.customer_id) await trx.requireOpenCustomer(scope.platformId, external.customer_id);
        if (!(await trx.findExternalAccount(scope.platformId, external.id))) throw errors.notFound("ExternalAccount", external.id);
        const latest = await trx.latestOwnershipChallenge(scope.platformId, external.id, true);
        if (latest) {
          const current = await expireIfDue(trx, latest, now);
          if (current.status === "PENDING") return { challenge: current, deposits: await trx.microDepositsOf(current.id) };
          if (current.status === "VERIFIED") throw errors.conflict("EXTERNAL_ACCOUNT_ALREADY_VERIFIED", "The account's ownership is already verified", { id: external.id });
        }
        const challenge: OwnershipChallengeRow = {
          // The kit's id kinds are the public resources'; a challenge is the ledger's own record.
          id: newId("OwnershipChallenge"),
          platform_id: scope.platformId,
          external_account_id: external.id,
          method: MICRO_DEPOSITS,
          status: "PENDING",
          currency: external.currency,
          attempts: 0,
          max_attempts: MAX_VERIFY_ATTEMPTS,
          failure_reason: "",
          message_to_sign: "",
          expires_at: new Date(now.getTime() + CHALLENGE_TTL_MS),
          created_at: now,
          updated_at: now,
        };
        await trx.insertOwnershipChallenge(challenge);
        const amounts = environment === "SANDBOX" ? SANDBOX_MICRO_DEPOSIT_AMOUNTS : productionAmounts();
        const deposits: MicroDepositRow[] = [];
        for (const amount of amounts) {
          const d: MicroDepositRow = {
            transaction_id: newId("Transaction"),
            challenge_id: challenge.id,
            platform_id: scope.platformId,
            amount,
            currency: external.currency,
            connector: route.connector,
            payment_rail: route.paymentRail,
            reference: newReference("TXN"),
            status: "PENDING",
            reason: "",
            created_at: now,
            updated_at: now,
          };
          await trx.insertMicroDeposit(d);
          await trx.emitMicroDeposit(d, external, route, now);
          deposits.push(d);
        }
        await markAccount(trx, scope.platformId, external.id, PENDING_STATUS, "OWNERSHIP_VERIFICATION_STARTED", now);
        // Never the amounts: they are the secret the customer confirms.
        deps.log?.info({ challenge_id: challenge.id, external_account_id: external.id, connector: route.connector, payment_rail: route.paymentRail }, "micro-deposits sent for ownership verification");
        return { challenge, deposits };
      });
    },

    /**
     * The owner's proof: a Spark wallet's signature (verifySignature), or a bank account's two
     * micro-deposit amounts (minor units, either order). Right: the
     * challenge is VERIFIED and the account ACTIVE (its answer). Wrong: 400
     * MICRO_DEPOSIT_AMOUNTS_MISMATCH with the attempts left, the attempt counted (committed before
     * the refusal); the last wrong one fails the challenge (400 MICRO_DEPOSIT_ATTEMPTS_EXCEEDED,
     * account UNVERIFIED). No outstanding challenge (none, expired, failed by the rail or by
     * attempts): 409 OWNERSHIP_CHALLENGE_NOT_FOUND.
     */
    async verifyOwnership(
      scope: { platformId: string; ownerKind: "CUSTOMER" | "PLATFORM"; customerId?: string },
      externalAccountId: string,
      proof: { amounts: readonly bigint[]; signature?: string; signatureScheme?: string },
    ): Promise<ExternalAccountRow> {
      const { amounts } = proof;
      const signature = proof.signature ?? "";
      if (signature && amounts.length > 0) {
        throw errors.invalidInput([{ field: "signature", reason: "send either amounts (MICRO_DEPOSITS) or signature (WALLET_SIGNATURE), not both" }]);
      }
      const external = await account(scope, externalAccountId);
      if (KEYED_WALLETS.has(external.account_type)) {
        if (!signature) throw errors.invalidInput([{ field: "signature", reason: `a ${external.account_type} is verified by WALLET_SIGNATURE: send the signature over the challenge's messageToSign` }]);
        return verifySignature(scope, external, signature, proof.signatureScheme ?? "");
      }
      if (signature || proof.signatureScheme) {
        throw errors.invalidInput([{ field: "signature", reason: `a ${external.account_type} is verified by MICRO_DEPOSITS, not by a signature: send the two amounts` }]);
      }
      if (amounts.length !== 2) throw errors.invalidInput([{ field: "amounts", reason: "must list the two micro-deposit amounts, in minor units" }]);
      const bad = amounts.findIndex((a) => a < 1n || a > 99n);
      if (bad >= 0) throw errors.invalidInput([{ field: `amounts[${bad}]`, reason: "must be an amount from 1 to 99 minor units" }]);
      const outcome = await store.transaction(async (trx) => {
        const now = clock.now();
        const latest = await trx.latestOwnershipChallenge(scope.platformId, external.id, true);
        const current = latest ? await expireIfDue(trx, latest, now) : undefined;
        if (current?.status === "VERIFIED") throw errors.conflict("EXTERNAL_ACCOUNT_ALREADY_VERIFIED", "The account's ownership is already verified", { id: external.id });
        if (!current || current.status !== "PENDING" || current.method !== MICRO_DEPOSITS) {
          // The expiry (if it just happened) commits with this answer.
          return { refusal: "none" as const, challenge: current };
        }
        const deposits = await trx.microDepositsOf(current.id);
        const sent = deposits.map((d) => d.amount).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const given = [...amounts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        if (sent.length === given.length && sent.every((a, i) => a === given[i])) {
          await trx.updateOwnershipChallenge(current.id, { status: "VERIFIED", attempts: current.attempts + 1, updated_at: now });
          const row = await markAccount(trx, scope.platformId, external.id, VERIFIED_STATUS, "OWNERSHIP_VERIFIED", now);
          if (!row) throw errors.notFound("ExternalAccount", external.id);
          return { refusal: undefined, row };
        }
        const attempts = current.attempts + 1;
        if (attempts >= current.max_attempts) {
          await trx.updateOwnershipChallenge(current.id, { status: "FAILED", attempts, failure_reason: "ATTEMPTS_EXCEEDED", updated_at: now });
          await markAccount(trx, scope.platformId, external.id, FAILED_STATUS, "OWNERSHIP_UNVERIFIED", now);
          return { refusal: "exceeded" as const, challenge: current };
        }
        await trx.updateOwnershipChallenge(current.id, { attempts, updated_at: now });
        return { refusal: "mismatch" as const, remaining: current.max_attempts - attempts };
      });
      if (!outcome.refusal) return outcome.row;
      if (outcome.refusal === "mismatch") {
        throw errors.badRequest("MICRO_DEPOSIT_AMOUNTS_MISMATCH", `The amounts do not match the micro-deposits sent; ${outcome.remaining} attempt${outcome.remaining === 1 ? "" : "s"} left`, {
          id: external.id,
          attemptsRemaining: outcome.remaining,
        });
      }
      if (outcome.refusal === "exceeded") {
        throw errors.badRequest("MICRO_DEPOSIT_ATTEMPTS_EXCEEDED", "The amounts do not match and no attempts are left; the account is UNVERIFIED: start a new challenge", {
          id: external.id,
          attemptsRemaining: 0,
        });
      }
      const c = outcome.challenge;
      throw errors.conflict(
        "OWNERSHIP_CHALLENGE_NOT_FOUND",
        !c
          ? "No ownership challenge is outstanding for this account; start one with the challenge endpoint"
          : `The account's last ownership challenge is ${c.status}${c.failure_reason ? ` (${c.failure_reason})` : ""}; start a new challenge`,
        { id: external.id, ...(c ? { challengeStatus: c.status, reason: c.failure_reason } : {}) },
      );
    },

    /**
     * A connector's outcome for a micro-deposit (rail-outcomes consumer, in its inbox transaction);
     * undefined when the transaction id is no micro-deposit's. COMPLETED books the credit
     * (MICRO_DEPOSIT_EXPENSE → RAIL_CLEARING); FAILED or REJECTED fails the challenge; RETURNED
     * after COMPLETED reverses the booking and fails the challenge if it is still outstanding.
     * Only the connector it was routed to speaks for it; repeats and late outcomes change nothing.
     */
    async applyMicroDepositOutcome(inbox: unknown, o: { transactionId: string; status: string; reason: string; connector?: string; environment?: string }): Promise<"applied" | "not-addressed" | undefined> {
      if (!o.transactionId) return undefined;
      const trx = store.within(inbox);
      const d = await trx.microDepositByTransaction(o.transactionId);
      if (!d) return undefined;
      if ((o.connector || "sandbox") !== d.connector) return "not-addressed";
      const now = clock.now();
      const challenge = await trx.getOwnershipChallenge(d.challenge_id, true);
      const book = async (kind: string, sign: 1n | -1n) => {
        const expense = await trx.systemAccountId(d.platform_id, d.currency, SYSTEM_TYPES.microDepositExpense, now);
        const clearing = await trx.systemAccountId(d.platform_id, d.currency, SYSTEM_TYPES.railClearing, now);
        const locked = await trx.lockAccounts(d.platform_id, [expense, clearing]);
        await trx.postEntry(locked, {
          platformId: d.platform_id,
          transactionId: d.transaction_id,
          kind,
          now,
          postings: [
            { accountId: expense, amount: -sign * d.amount },
            { accountId: clearing, amount: sign * d.amount },
          ],
        });
      };
      if (o.status === "COMPLETED" && d.status === "PENDING") {
        await book("MICRO_DEPOSIT", 1n);
        await trx.updateMicroDeposit(d.transaction_id, { status: "COMPLETED", updated_at: now });
      } else if ((o.status === "FAILED" || o.status === "REJECTED" || o.status === "RETURNED") && d.status === "PENDING") {
        await trx.updateMicroDeposit(d.transaction_id, { status: "FAILED", reason: o.reason, updated_at: now });
        if (challenge) await failChallenge(trx, challenge, `MICRO_DEPOSIT_${o.status}${o.reason ? `: ${o.reason}` : ""}`, now);
      } else if (o.status === "RETURNED" && d.status === "COMPLETED") {
        await book("MICRO_DEPOSIT_RETURN", -1n);
        await trx.updateMicroDeposit(d.transaction_id, { status: "RETURNED", reason: o.reason, updated_at: now });
        if (challenge) await failChallenge(trx, challenge, `MICRO_DEPOSIT_RETURNED${o.reason ? `: ${o.reason}` : ""}`, now);
      }
      return "applied";
    },
  };
}

export type Ownership = ReturnType<typeof createOwnership>;
