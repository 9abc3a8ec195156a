import { createHash } from "node:crypto";

/**
 * The sandbox card issuer: what it provisions for a card the ledger asks for
 * (corridor.cards.issuance.v1). Every sandbox card is issued, at once: a VISA whose last four
 * digits and issuer reference are derived from the card id (the same card always gets the same),
 * expiring at the end of the month three years after issue. No PAN exists anywhere.
 */

export interface ProvisionedCard {
  cardId: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  issuerRef: string;
}

/** Cards of these forms are provisioned; any other is left PROCESSING (none exists today). */
export const SANDBOX_CARD_FORMS: ReadonlySet<string> = new Set(["VIRTUAL"]);

/** How many years a sandbox card is valid for. */
export const SANDBOX_CARD_YEARS = 3;

export function provisionCard(cardId: string, issuedAt: Date): ProvisionedCard {
  const digest = createHash("sha256").update(cardId).digest();
  const last4 = String(digest.readUInt32BE(0) % 10000).padStart(4, "0");
  return {
    cardId,
    brand: "VISA",
    last4,
    expMonth: issuedAt.getUTCMonth() + 1,
    expYear: issuedAt.getUTCFullYear() + SANDBOX_CARD_YEARS,
    issuerRef: `sandbox_card_${digest.subarray(4, 12).toString("hex")}`,
  };
}
