/**
 * The wait before restart number `restartsInARow + 1` of a process that died: `baseMs` doubled per
 * restart in a row, never above `maxMs` (Kubernetes' CrashLoopBackOff shape, with our numbers).
 */
export function restartDelayMs(restartsInARow: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(restartsInARow, 30));
}
