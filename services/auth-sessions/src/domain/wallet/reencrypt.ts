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
 * Other secrets sealed under the wallet encryption key (SCA TOTP secrets): the worker moves them
 * too, so "0 left" means the previous key opens nothing any more.
 */
export interface SealedRows {
  notSealedUnder(currentKeyId: string, after: string, limit: number): Promise<{ id: string; associatedData: string; sealed: Uint8Array; keyId: string | null }[]>;
  /** Rewrites the row only if it is still sealed under `fromKeyId`; false otherwise. */
  reseal(id: string, fromKeyId: string | null, again: { sealed: Uint8Array; keyId: string }): Promise<boolean>;
  countByKeyId(): Promise<{ keyId: string | null; rows: number }[]>;
}
export type SealedRowsTransact = <T>(work: (rows: SealedRows) => Promise<T>) => Promise<T>;

/**
 * The wallet-key-reencrypt worker's pass: every wallet key not sealed under the current key (under
 * the previous one, or before key ids) is opened and sealed again under the current key, in
 * batches of `batchSize`, one transaction each. Idempotent and resumable: a row is rewritten only
 * if it is still sealed as it was read, and a pass cut short leaves the rest for the next one.
 * Rows neither key opens are left alone and reported (by key id, never key material).
 */
export function walletKeyReencryption(deps: { transact: WalletTransact; keyring: WalletKeyring; batchSize?: number; others?: SealedRowsTransact[] }) {
  const { keyring } = deps;
  const batchSize = deps.batchSize ?? 100;
  // Wallet keys (associated data: the account id) and every other sealed set, one interface.
  const walletRows: SealedRowsTransact = (work) =>
    deps.transact((store) =>
      work({
        notSealedUnder: async (currentKeyId, after, limit) =>
          (await store.walletKeys.notSealedUnder(currentKeyId, after, limit)).map((r) => ({ id: r.accountId, associatedData: r.accountId, sealed: r.sealed, keyId: r.keyId })),
        reseal: (id, fromKeyId, again) => store.walletKeys.reseal(id, fromKeyId, again),
        countByKeyId: () => store.walletKeys.countByKeyId(),
      }),
    );
  const sets = [walletRows, ...(deps.others ?? [])];
  const countAll = async () => {
    const byKey = new Map<string | null, number>();
    for (const transact of sets) for (const c of await transact((rows) => rows.countByKeyId())) byKey.set(c.keyId, (byKey.get(c.keyId) ?? 0) + c.rows);
    return [...byKey].map(([keyId, rows]) => ({ keyId, rows }));
  };
  return {
    async pass(): Promise<ReencryptPass> {
      const result: ReencryptPass = { resealed: 0, unreadable: {}, left: 0 };
      for (const transact of sets) {
        let after = "";
        for (;;) {
          const batch = await transact(async (store) => {
            const rows = await store.notSealedUnder(keyring.currentId, after, batchSize);
            let resealed = 0;
            const unreadable: string[] = [];
            for (const row of rows) {
              let plain: Uint8Array;
              try {
                plain = keyring.open(row.sealed, row.associatedData, row.keyId);
              } catch {
                unreadable.push(row.keyId ?? "none");
                continue;
              }
              const again = keyring.seal(plain, row.associatedData);
              plain.fill(0);
              if (await store.reseal(row.id, row.keyId, again)) resealed++;
            }
            return { resealed, unreadable, last: rows.at(-1)?.id, size: rows.length };
          });
          result.resealed += batch.resealed;
          for (const id of batch.unreadable) result.unreadable[id] = (result.unreadable[id] ?? 0) + 1;
          if (batch.size < batchSize || batch.last === undefined) break;
          after = batch.last;
        }
      }
      const counts = await countAll();
      result.left = counts.filter((c) => c.keyId !== keyring.currentId).reduce((n, c) => n + c.rows, 0);
      return result;
    },
    /** Rows per key id: what is left under the previous key (or none) before it can be removed. */
    async status(): Promise<{ currentKeyId: string; previousKeyId?: string; rowsByKeyId: Record<string, number> }> {
      const counts = await countAll();
      return {
        currentKeyId: keyring.currentId,
        previousKeyId: keyring.previousId,
        rowsByKeyId: Object.fromEntries(counts.map((c) => [c.keyId ?? "none", c.rows])),
      };
    },
  };
}
