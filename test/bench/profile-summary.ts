import { readFileSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";

/**
 * Summarises V8 CPU profiles (`node --cpu-prof`, or `BENCH_CPU_PROFILE=<dir> npm run bench:compare`):
 * for each profile, the share of sampled time spent in each package (self time of the functions
 * whose script lies in node_modules/<package>, in Corridor's own code, in Node's internals, or
 * idle/GC), and the top functions by self time.
 *
 *   node scripts/pnpm.mjs exec tsx test/bench/profile-summary.ts <dir-with-.cpuprofile-files> [top] [skip-seconds]
 *
 * skip-seconds leaves out the first samples of each profile (start-up: module loading, migrations),
 * e.g. to see what a process does while idle after it is ready.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function bucketOf(url: string, fn: string): string {
  if (!url) return fn === "(idle)" ? "(idle)" : fn === "(garbage collector)" ? "(gc)" : fn === "(program)" ? "(program)" : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  return "corridor";
}

const dir = process.argv[2];
const top = Number(process.argv[3] ?? 12);
const skipUs = Number(process.argv[4] ?? 0) * 1e6;
if (!dir) throw new Error("usage: profile-summary.ts <dir> [top]");
const files = readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith(".cpuprofile"));
for (const file of files) {
  const p = JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let elapsed = 0;
  for (let i = 0; i < p.samples.length; i++) {
    elapsed += p.timeDeltas[i] ?? 0;
    if (elapsed < skipUs) continue;
    self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  let total = 0;
  let busy = 0;
  const buckets = new Map<string, number>();
  const fns = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const b = bucketOf(n.callFrame.url, n.callFrame.functionName);
    total += us;
    if (b !== "(idle)") busy += us;
    buckets.set(b, (buckets.get(b) ?? 0) + us);
    if (b !== "(idle)") {
      const name = `${n.callFrame.functionName || "(anonymous)"} ${basename(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
      fns.set(name, (fns.get(name) ?? 0) + us);
    }
  }
  const pct = (us: number) => `${((us / Math.max(busy, 1)) * 100).toFixed(1)} %`;
  console.log(`\n## ${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy`);
  console.log("By package (share of busy time):");
  for (const [b, us] of [...buckets].filter(([b]) => b !== "(idle)").sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us).padStart(7)}  ${b}`);
  console.log("Top functions by self time:");
  for (const [f, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us).padStart(7)}  ${f}`);
}
