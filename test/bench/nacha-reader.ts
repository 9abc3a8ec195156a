// Reads the 100,000-entry NACHA file (fixtures ach/large, gzipped) through the streaming reader
// and reports time and memory: the reader must hold one record and the open batch's totals, so
// its heap stays flat however large the file. Run: node scripts/pnpm.mjs exec tsx test/bench/nacha-reader.ts
// (add --expose-gc through NODE_OPTIONS for steadier heap numbers).
import { createReadStream, statSync } from "node:fs";
import { createGunzip } from "node:zlib";
import { readNacha } from "@corridor/connector-ach-nacha/nacha";
import { achFixture } from "../../connectors/ach-nacha/test/fixtures.js";

const path = achFixture("large", "PPD-200-batches-100000-entries.ach.gz");
const runs = Number(process.argv[2] ?? 3);
const gc = (globalThis as { gc?: () => void }).gc;

async function once() {
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  let peakHeap = heapBefore;
  let peakRss = process.memoryUsage().rss;
  const retained: string[] = [];
  let entries = 0;
  let bytes = 0;
  let debit = 0n;
  let credit = 0n;
  const started = process.hrtime.bigint();
  const source = createReadStream(path).pipe(createGunzip());
  source.on("data", (c: Buffer) => (bytes += c.length));
  for await (const ev of readNacha(source)) {
    if (ev.type === "entry") {
      entries += 1;
      if (entries % 5_000 === 0) {
        const m = process.memoryUsage();
        peakHeap = Math.max(peakHeap, m.heapUsed);
        peakRss = Math.max(peakRss, m.rss);
      }
      // What the reader keeps alive: the heap after a full collection, every 25,000 entries.
      if (gc && entries % 25_000 === 0) {
        gc();
        retained.push(((process.memoryUsage().heapUsed - heapBefore) / 2 ** 20).toFixed(2));
      }
    } else if (ev.type === "fileControl") {
      debit = ev.control.totalDebit;
      credit = ev.control.totalCredit;
    }
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { entries, bytes, debit, credit, ms, retained, heapGrowthMiB: (peakHeap - heapBefore) / 2 ** 20, peakRssMiB: peakRss / 2 ** 20 };
}

console.log(`file: ${path} (${(statSync(path).size / 1024).toFixed(0)} KiB gzipped); node ${process.version}; gc exposed: ${Boolean(gc)}`);
for (let i = 0; i < runs; i++) {
  const r = await once();
  console.log(
    `run ${i + 1}: ${r.entries} entries, ${(r.bytes / 2 ** 20).toFixed(1)} MiB of records, debits ${r.debit} credits ${r.credit} (cents); ` +
      `${r.ms.toFixed(0)} ms = ${Math.round(r.entries / (r.ms / 1000))} entries/s; heap growth at peak ${r.heapGrowthMiB.toFixed(1)} MiB; peak RSS ${r.peakRssMiB.toFixed(0)} MiB` +
      (r.retained.length ? `; retained after GC every 25,000 entries: ${r.retained.join(", ")} MiB (the gc() calls add to the time)` : ""),
  );
}
