import type { CustomerFacts, Directory, Environment, FactCopies } from "./ports.js";

/**
 * The facts the ledger needs on every money movement, from its event-fed copies first
 * (corridor.platforms.v1, corridor.customers.v1), asking the owning service over RPC only when the
 * copy cannot answer:
 * - environment: the copy once a PlatformCreated has arrived (an environment never changes); before
 *   that (an event still on its way, e.g. right after the platform was created) auth-sessions is asked
 *   and the answer remembered.
 * - customer: the copy when it is final for a money movement, i.e. the customer is deleted/closed or
 *   APPROVED; a missing copy, or one that is not APPROVED (an approval may be on its way), is
 *   confirmed with customers-kyc, which also answers NOT_FOUND for unknown or foreign customers.
 * - transactionTypes: asked of the directory every time, since a configuration change must apply
 *   at once; its platform-facts client answers from a copy of the config while the config board
 *   vouches for it (kit clients/config-board.ts), from auth-sessions GetPlatformConfig otherwise.
 */
export function withEventCopies(copies: FactCopies, remote: Directory): Directory {
  const environments = new Map<string, Environment>();
  return {
    async environment(platformId) {
      const known = environments.get(platformId);
      if (known) return known;
      const env = (await copies.environment(platformId)) ?? (await remote.environment(platformId));
      environments.set(platformId, env);
      return env;
    },
    async customer(platformId, customerId): Promise<CustomerFacts> {
      return finalCustomerFacts(await copies.customer(platformId, customerId)) ?? remote.customer(platformId, customerId);
    },
    transactionTypes: (platformId, currency) => remote.transactionTypes(platformId, currency),
  };
}

/** The customer's facts from its copy when the copy is final for a money movement (deleted/closed or APPROVED); undefined when customers-kyc must be asked. */
export function finalCustomerFacts(copy: Awaited<ReturnType<FactCopies["customer"]>>): CustomerFacts | undefined {
  if (copy && (copy.isDeleted || copy.verificationStatus === "APPROVED")) {
    return { platformCustomerId: copy.platformCustomerId, verificationStatus: copy.verificationStatus ?? "UNVERIFIED", isDeleted: copy.isDeleted };
  }
  return undefined;
}
