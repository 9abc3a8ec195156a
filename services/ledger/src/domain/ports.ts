/**
 * What the ledger's domain needs from other services and from storage, as plain TypeScript.
 * Other services are reached over Connect (src/clients/), the event-fed copies and the
 * idempotency keys over Kysely (src/data/); tests pass fakes.
 *
 * The rule the shapes encode: another service is NEVER called while a database transaction is
 * open (in embedded mode every service shares one database session, so such a call would wait for
 * itself). Use cases ask first, then open their money transaction.
 */

export type Environment = "SANDBOX" | "PRODUCTION";

export interface CustomerFacts {
  platformCustomerId: string;
  verificationStatus: string;
  isDeleted: boolean;
}

/** What the ledger asks other services (auth-sessions, customers-kyc); never inside a DB transaction. */
export interface Directory {
  environment(platformId: string): Promise<Environment>;
  /** Throws NOT_FOUND CUSTOMER_NOT_FOUND for an unknown or foreign customer. */
  customer(platformId: string, customerId: string): Promise<CustomerFacts>;
  /**
   * The transaction types (OUTGOING, INCOMING) the platform's configuration enables in this
   * currency, read fresh (a configuration change applies at once); undefined when the currency is
   * not in its supported currencies.
   */
  transactionTypes(platformId: string, currency: string): Promise<string[] | undefined>;
}

/** The ledger's event-fed copies of those facts (src/data/copies.ts); undefined when no event has arrived yet. */
export interface FactCopies {
  environment(platformId: string): Promise<Environment | undefined>;
  customer(platformId: string, customerId: string): Promise<{ platformCustomerId: string; verificationStatus: string | null; isDeleted: boolean } | undefined>;
}

/* ---------- idempotency (decisions §3; the kit's runner and key store) ---------- */

/**
 * How a first answer is stored for replays (the service's public JSON of the resource, written by
 * the handlers' mappers). The domain never sees that encoding; it hands back a stored answer as is.
 */
export interface AnswerCodec<Row> {
  encode(row: Row): unknown;
}

/** A use case's answer under an Idempotency-Key: the fresh row, or the stored answer of the first request. */
export type Answer<Row> = { row: Row; stored?: undefined } | { row?: undefined; stored: unknown };
