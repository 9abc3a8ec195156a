import type { CarefulClient } from "./client.js";

/** One of the workload's customers: the accounts its money moves between. */
export interface ChaosCustomer {
  id: string;
  /** Its INTERNAL_FIAT USD account (funded, debited, credited). */
  usd: string;
  /** Its external USD account (suffix 000: transfers succeed; pull-capable for transfer-in). */
  bank: string;
  /** Its external EUR account (suffix 000: quote payouts succeed). */
  payee: string;
}

/** What the platform acknowledged (a 2xx) for one money operation. */
export type Acknowledged =
  | { kind: "fund"; customer: string; amount: number }
  | { kind: "transfer-out" | "transfer-in"; customer: string; amount: number; transactionId: string }
  | { kind: "quote"; customer: string; amount: number; transactionId: string; executed: boolean };

/** A request that got a definitive answer other than success: an acknowledged refusal. */
export interface Refusal {
  customer: string;
  what: string;
  status: number;
  code?: string;
  message?: string;
}

export const FUND = 10_000; // 100.00 USD per cycle
export const OUT = 1_000;
export const IN = 500;
export const QUOTE = 1_000; // locked on the sending side, USD

/**
 * One cycle of a customer's money traffic, each step one Idempotency-Key retried by the careful
 * client: fund the USD account, push 10.00 out to the bank, pull 5.00 back in, quote 10.00 USD to
 * the EUR payee and execute it. Each step waits for the previous one's answer (a real customer's
 * order); the steps never overdraw (each cycle funds more than it spends).
 */
export async function cycle(client: CarefulClient, c: ChaosCustomer, acked: Acknowledged[], refused: Refusal[]): Promise<void> {
  const refuse = (what: string, res: { status: number; body: any }) =>
    refused.push({ customer: c.id, what, status: res.status, code: res.body?.code, message: res.body?.message });

  const funded = await client.write(`/sandbox/internal-accounts/${c.usd}/fund`, { amount: FUND });
  if (funded.status === 200) acked.push({ kind: "fund", customer: c.id, amount: FUND });
  else refuse("fund", funded);

  const out = await client.write("/transfer-out", { source: { accountId: c.usd }, destination: { accountId: c.bank }, amount: OUT });
  if (out.status === 201) acked.push({ kind: "transfer-out", customer: c.id, amount: OUT, transactionId: out.body.id });
  else refuse("transfer-out", out);

  const into = await client.write("/transfer-in", { source: { accountId: c.bank }, destination: { accountId: c.usd }, amount: IN });
  if (into.status === 201) acked.push({ kind: "transfer-in", customer: c.id, amount: IN, transactionId: into.body.id });
  else refuse("transfer-in", into);

  const quote = await client.write("/quotes", {
    source: { sourceType: "ACCOUNT", accountId: c.usd },
    destination: { destinationType: "ACCOUNT", accountId: c.payee },
    lockedCurrencySide: "SENDING",
    lockedCurrencyAmount: QUOTE,
  });
  if (quote.status !== 201) {
    refuse("quote", quote);
    return;
  }
  const ack: Acknowledged = { kind: "quote", customer: c.id, amount: quote.body.totalSendingAmount, transactionId: quote.body.transactionId, executed: false };
  acked.push(ack);
  const executed = await client.write(`/quotes/${quote.body.id}/execute`);
  if (executed.status === 200) ack.executed = true;
  else refuse("execute", executed);
}

/**
 * The customer's USD balance the acknowledged writes imply once their transactions are final:
 * every acknowledged fund, less each COMPLETED transfer-out and executed quote, plus each
 * COMPLETED transfer-in. (The workload's transfers and quotes all go to suffix-000 accounts, so
 * every one of them must complete; the suite checks that separately.)
 */
export function expectedUsdBalance(customer: string, acked: readonly Acknowledged[]): number {
  let sum = 0;
  for (const a of acked) {
    if (a.customer !== customer) continue;
    if (a.kind === "fund" || a.kind === "transfer-in") sum += a.amount;
    else if (a.kind === "transfer-out") sum -= a.amount;
    else if (a.kind === "quote" && a.executed) sum -= a.amount;
  }
  return sum;
}

/** The transactions the acknowledged writes created that must reach a final state. */
export function acknowledgedTransactions(acked: readonly Acknowledged[]): { id: string; kind: string }[] {
  return acked.flatMap((a) => (a.kind === "fund" || (a.kind === "quote" && !a.executed) ? [] : [{ id: a.transactionId, kind: a.kind }]));
}
