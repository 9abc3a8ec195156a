import { decodeKeysetCursor, errors, pageSize, toPage, type FieldError } from "@corridor/kit";
import { findCurrency } from "./currencies.js";
import type { PlatformFacts } from "./ports.js";
import { sandboxUmaProviders, umaNotAvailable, type UmaProviderView } from "./uma.js";

/**
 * GET /uma-providers: sandbox platforms see the sandbox's providers (domain/uma.ts); production
 * platforms have no UMA connector in this deployment (400 PAYMENT_RAIL_NOT_AVAILABLE, as for UMA
 * receiver lookups; docs/connectors.md says what one would provide). Paged by domain.
 */
export function listUmaProviders(facts: PlatformFacts, q: { countryCode: string; currencyCode: string; limit?: number; cursor?: string }) {
  const errs: FieldError[] = [];
  if (q.countryCode && !/^[A-Z]{2}$/.test(q.countryCode)) errs.push({ field: "countryCode", reason: "must be an ISO 3166-1 alpha-2 code" });
  if (q.currencyCode && !findCurrency(q.currencyCode)) errs.push({ field: "currencyCode", reason: `unknown currency ${q.currencyCode}` });
  if (errs.length) throw errors.invalidInput(errs);
  if (facts.environment !== "SANDBOX") throw umaNotAvailable("the UMA provider directory");
  const limit = pageSize(q.limit);
  const after = decodeKeysetCursor(q.cursor, "string");
  const all = sandboxUmaProviders({ countryCode: q.countryCode || undefined, currencyCode: q.currencyCode || undefined }).sort((a, b) => a.domain.localeCompare(b.domain));
  const rest = after ? all.filter((p) => p.domain > after.id) : all;
  return toPage<UmaProviderView>(rest.slice(0, limit + 1), limit, (p) => ({ k: p.domain, id: p.domain }), all.length);
}
