import type { PaymentInstruction, Quote } from "./ports.js";

/**
 * A quote as plain JSON (bigints as decimal strings, dates as ISO text) and back: the stored first
 * response of an Idempotency-Key, and the jsonb columns. Lossless for every field.
 */
export function quoteToJson(q: Quote): Record<string, unknown> {
  return {
    ...q,
    createdAt: q.createdAt.toISOString(),
    updatedAt: q.updatedAt.toISOString(),
    expiresAt: q.expiresAt.toISOString(),
    executionStartedAt: q.executionStartedAt?.toISOString(),
    totalSendingAmount: q.totalSendingAmount.toString(),
    totalReceivingAmount: q.totalReceivingAmount.toString(),
    feesIncluded: q.feesIncluded.toString(),
    lockedCurrencyAmount: q.lockedCurrencyAmount.toString(),
    rateDetails: rateDetailsToJson(q.rateDetails),
    paymentInstructions: q.paymentInstructions.map(instructionToJson),
    scaChallenge: q.scaChallenge ? { ...q.scaChallenge, expiresAt: q.scaChallenge.expiresAt.toISOString() } : undefined,
  };
}

export function quoteFromJson(json: unknown): Quote {
  const j = json as Record<string, any>;
  return {
    ...(j as unknown as Quote),
    createdAt: new Date(j.createdAt),
    updatedAt: new Date(j.updatedAt),
    expiresAt: new Date(j.expiresAt),
    executionStartedAt: j.executionStartedAt ? new Date(j.executionStartedAt) : undefined,
    // Answers stored before quotes carried an agent.
    agentId: typeof j.agentId === "string" ? j.agentId : "",
    totalSendingAmount: BigInt(j.totalSendingAmount),
    totalReceivingAmount: BigInt(j.totalReceivingAmount),
    feesIncluded: BigInt(j.feesIncluded),
    lockedCurrencyAmount: BigInt(j.lockedCurrencyAmount),
    rateDetails: rateDetailsFromJson(j.rateDetails),
    paymentInstructions: (j.paymentInstructions ?? []).map(instructionFromJson),
    scaChallenge: j.scaChallenge ? { ...j.scaChallenge, expiresAt: new Date(j.scaChallenge.expiresAt) } : undefined,
  };
}

export const rateDetailsToJson = (r: Quote["rateDetails"]): Record<string, string> => ({
  counterpartyMultiplier: r.counterpartyMultiplier,
  counterpartyFixedFee: r.counterpartyFixedFee.toString(),
  serviceApiMultiplier: r.serviceApiMultiplier,
  serviceApiFixedFee: r.serviceApiFixedFee.toString(),
  serviceApiVariableFeeRate: r.serviceApiVariableFeeRate,
  serviceApiVariableFeeAmount: r.serviceApiVariableFeeAmount.toString(),
});

export const rateDetailsFromJson = (r: Record<string, string>): Quote["rateDetails"] => ({
  counterpartyMultiplier: r.counterpartyMultiplier!,
  counterpartyFixedFee: BigInt(r.counterpartyFixedFee!),
  serviceApiMultiplier: r.serviceApiMultiplier!,
  serviceApiFixedFee: BigInt(r.serviceApiFixedFee!),
  serviceApiVariableFeeRate: r.serviceApiVariableFeeRate!,
  serviceApiVariableFeeAmount: BigInt(r.serviceApiVariableFeeAmount!),
});

export const instructionToJson = (i: PaymentInstruction) => ({ ...i, amount: i.amount.toString() });
export const instructionFromJson = (i: Record<string, any>): PaymentInstruction => ({ ...(i as PaymentInstruction), amount: BigInt(i.amount) });
