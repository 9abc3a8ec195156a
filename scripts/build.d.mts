// Types of scripts/build.mjs, for the TypeScript tests that import it.
export interface Deployable {
  /** The container argument that runs it (the Helm chart's `args`). */
  name: string;
  /** Its TypeScript entry point, relative to the repository root. */
  entry: string;
}
export function deployables(repoRoot?: string): Deployable[];
export function build(opts?: { out?: string; repoRoot?: string; log?: (line: string) => void }): Promise<{ out: string; appDir: string; appVersion: string }>;
/** Packages loaded only with import() where a mode uses them; the build fails if a deployable imports one statically. */
export const LAZY_PACKAGES: string[];
