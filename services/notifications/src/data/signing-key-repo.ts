import type { Db } from "./tables.js";

/**
 * The generated signing key: `candidate` is stored unless a key is already there, and the stored
 * one is answered, so concurrent first uses (replicas starting together) agree on one key.
 */
export async function storedSigningKeyPem(db: Db, candidate: string, now: Date): Promise<string> {
  await db
    .insertInto("deployment_signing_key")
    .values({ id: "current", private_key_pem: candidate, created_at: now })
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
  const row = await db.selectFrom("deployment_signing_key").select("private_key_pem").where("id", "=", "current").executeTakeFirstOrThrow();
  return row.private_key_pem;
}
