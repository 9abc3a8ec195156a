import type { Kysely, Selectable } from "kysely";
import type { LookupStore, ReceiverLookup, UmaScenario } from "../domain/ports.js";
import type { QuotesFxDatabase, ReceiverLookupsTable } from "./tables.js";

/** Lookups over Kysely; every read is scoped by platform_id. */
export function lookupStore(db: Kysely<QuotesFxDatabase>): LookupStore {
  return {
    async insert(l) {
      await db
        .insertInto("receiver_lookups")
        .values({
          id: l.id,
          platform_id: l.platformId,
          kind: l.kind,
          receiver_uma_address: l.receiverUmaAddress,
          account_id: l.accountId,
          customer_id: l.customerId,
          sender_uma_address: l.senderUmaAddress,
          sending_currency: l.sendingCurrency,
          supported_currencies: JSON.stringify(l.supportedCurrencies.map((o) => ({ ...o, min: o.min.toString(), max: o.max.toString() }))),
          required_payer_data_fields: JSON.stringify(l.requiredPayerDataFields),
          scenario: l.scenario,
          created_at: l.createdAt,
          expires_at: l.expiresAt,
        })
        .execute();
    },
    async get(platformId, id) {
      const row = await db.selectFrom("receiver_lookups").selectAll().where("platform_id", "=", platformId).where("id", "=", id).executeTakeFirst();
      return row ? toLookup(row) : undefined;
    },
  };
}

function toLookup(r: Selectable<ReceiverLookupsTable>): ReceiverLookup {
  return {
    id: r.id,
    platformId: r.platform_id,
    kind: r.kind,
    receiverUmaAddress: r.receiver_uma_address,
    accountId: r.account_id,
    customerId: r.customer_id,
    senderUmaAddress: r.sender_uma_address,
    sendingCurrency: r.sending_currency,
    supportedCurrencies: r.supported_currencies.map((o) => ({ ...o, min: BigInt(o.min), max: BigInt(o.max) })),
    requiredPayerDataFields: r.required_payer_data_fields,
    scenario: r.scenario as UmaScenario | "",
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  };
}
