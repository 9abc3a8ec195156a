import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cruise, type ICruiseResult, type IViolation } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** The folders the house rules cover. */
export const ruleRoots = ["services", "gateway/src", "packages/kit/src", "embedded/src"];

/**
 * Runs dependency-cruiser with the repository's .dependency-cruiser.cjs over `roots` of `baseDir`
 * (the repository, or a temp tree with a planted violation); answers the violations.
 */
export async function houseRuleViolations(baseDir = repoRoot, roots = ruleRoots): Promise<IViolation[]> {
  const options = await extractDepcruiseOptions(join(repoRoot, ".dependency-cruiser.cjs"));
  const tsConfigFile = join(baseDir, "tsconfig.json");
  const hasTsConfig = existsSync(tsConfigFile);
  const cwd = process.cwd();
  // dependency-cruiser resolves and reports paths relative to the working directory.
  process.chdir(baseDir);
  try {
    const result = await cruise(
      roots.filter((r) => existsSync(join(baseDir, r))),
      { ...options, tsConfig: hasTsConfig ? { fileName: tsConfigFile } : undefined, outputType: "json" },
      undefined,
      { tsConfig: hasTsConfig ? extractTSConfig(tsConfigFile) : undefined },
    );
    const output = typeof result.output === "string" ? (JSON.parse(result.output) as ICruiseResult) : result.output;
    return output.summary.violations;
  } finally {
    process.chdir(cwd);
  }
}

export const describeViolation = (v: IViolation) => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (cycle ${v.cycle.map((c) => (typeof c === "string" ? c : c.name)).join(" → ")})` : ""}`;
