/** Polls `check` every 100 ms until it answers true, failing after `ms` with the last error it threw (the systems under test settle asynchronously). */
export async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms${last ? ` (${String(last)})` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
