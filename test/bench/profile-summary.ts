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
 * e.g. to see what a process does while idle after it is ready; end-skip-seconds the last ones
 * (bench:cost's alone phase and the stop: `... <dir> 40 0 -50 -9` with a negative skip-seconds
 * keeps the stretch from 50 s to 9 s before each profile's end). The inclusive list (a function
 * and everything it called) names entry points such as a consumer or the outbox relay; async
 * continuations are counted under the function that resumes, not the one that awaited.
 *
 *   node scripts/pnpm.mjs exec tsx test/bench/profile-summary.ts <dir> [top] [skip-seconds] [end-skip-seconds]
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
type ProfileNodeWithParent = ProfileNode & { parent?: number };
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
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
const skipArg = Number(process.argv[4] ?? 0);
const endSkipUs = Math.abs(Number(process.argv[5] ?? 0)) * 1e6;
if (!dir) throw new Error("usage: profile-summary.ts <dir> [top] [skip-seconds] [end-skip-seconds]");
const files = readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith(".cpuprofile"));
for (const file of files) {
  const p = JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile;
  const byId = new Map<number, ProfileNodeWithParent>(p.nodes.map((n) => [n.id, n]));
  for (const n of p.nodes) for (const c of n.children ?? []) byId.get(c)!.parent = n.id;
  const length = p.endTime - p.startTime;
  // A negative skip-seconds counts from the end of the profile.
  const fromUs = skipArg < 0 ? length + skipArg * 1e6 : skipArg * 1e6;
  const toUs = length - endSkipUs;
  const self = new Map<number, number>();
  const inclusive = new Map<string, number>();
  let elapsed = 0;
  for (let i = 0; i < p.samples.length; i++) {
    elapsed += p.timeDeltas[i] ?? 0;
    if (elapsed < fromUs || elapsed > toUs) continue;
    const us = p.timeDeltas[i] ?? 0;
    self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + us);
    const leaf = byId.get(p.samples[i]!)!;
    if (leaf.callFrame.functionName === "(idle)") continue;
    const seen = new Set<string>();
    for (let n: ProfileNodeWithParent | undefined = leaf; n; n = n.parent === undefined ? undefined : byId.get(n.parent)) {
      const name = `${n.callFrame.functionName || "(anonymous)"} ${basename(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
      if (seen.has(name) || !n.callFrame.url) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
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
  console.log("Top functions by inclusive time (Node's own left out):");
  for (const [f, us] of [...inclusive]
    .filter(([f]) => !/ node:|^runMicrotasks|^processTicksAndRejections/.test(f))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    console.log(`  ${pct(us).padStart(7)}  ${f}`);
}
