import type { WalletKeyring } from "./at-rest.js";
import type { WalletTransact } from "./ports.js";

export interface ReencryptPass {
  /** Rows moved to the current key in this pass. */
  resealed: number;
  /** Rows left that neither configured key opens, by key id ("none": sealed before key ids). */
  unreadable: Record<string, number>;
  /** Rows not sealed under the current key after the pass (0: the previous key can be removed). */
  left: number;
}

/**
 * The wallet-key-reencrypt worker's pass: every wallet key not sealed under the current key (under
 * the previous one, or before key ids) is opened and sealed again under the current key, in
 * batches of `batchSize`, one transaction each. Idempotent and resumable: a row is rewritten only
 * if it is still sealed as it was read, and a pass cut short leaves the rest for the next one.
 * Rows neither key opens are left alone and reported (by key id, never key material).
 */
export function walletKeyReencryption(deps: { transact: WalletTransact; keyring: WalletKeyring; batchSize?: number }) {
  const { transact, keyring } = deps;
  const batchSize = deps.batchSize ?? 100;
  return {
    async pass(): Promise<ReencryptPass> {
      const result: ReencryptPass = { resealed: 0, unreadable: {}, left: 0 };
      let after = "";
      for (;;) {
        const batch = await transact(async (store) => {
          const rows = await store.walletKeys.notSealedUnder(keyring.currentId, after, batchSize);
          let resealed = 0;
          const unreadable: string[] = [];
          for (const row of rows) {
            let plain: Uint8Array;
            try {
              plain = keyring.open(row.sealed, row.accountId, row.keyId);
            } catch {
              unreadable.push(row.keyId ?? "none");
              continue;
            }
            const again = keyring.seal(plain, row.accountId);
            plain.fill(0);
            if (await store.walletKeys.reseal(row.accountId, row.keyId, again)) resealed++;
          }
          return { resealed, unreadable, last: rows.at(-1)?.accountId, size: rows.length };
        });
        result.resealed += batch.resealed;
        for (const id of batch.unreadable) result.unreadable[id] = (result.unreadable[id] ?? 0) + 1;
        if (batch.size < batchSize || batch.last === undefined) break;
        after = batch.last;
      }
      const counts = await transact((store) => store.walletKeys.countByKeyId());
      result.left = counts.filter((c) => c.keyId !== keyring.currentId).reduce((n, c) => n + c.rows, 0);
      return result;
    },
    /** Rows per key id: what is left under the previous key (or none) before it can be removed. */
    async status(): Promise<{ currentKeyId: string; previousKeyId?: string; rowsByKeyId: Record<string, number> }> {
      const counts = await transact((store) => store.walletKeys.countByKeyId());
      return {
        currentKeyId: keyring.currentId,
        previousKeyId: keyring.previousId,
        rowsByKeyId: Object.fromEntries(counts.map((c) => [c.keyId ?? "none", c.rows])),
      };
    },
  };
}
