// Types of scripts/build.mjs, for the TypeScript tests that import it.
export interface Deployable {
  /** The container argument that runs it (the Helm chart's `args`). */
  name: string;
  /** Its TypeScript entry point, relative to the repository root. */
  entry: string;
}
export function deployables(repoRoot?: string): Deployable[];
/** Builds into `out` unless the build there was made from the tree as it is now (`force` builds anyway). */
export function build(opts?: { out?: string; repoRoot?: string; log?: (line: string) => void; force?: boolean }): Promise<{ out: string; appDir: string; appVersion: string; skipped: boolean }>;
/** The build manifest's file name inside an output folder. */
export const MANIFEST: string;
/** Why the output in `out` is not the build of the tree as it is now, or "" when it is. */
export function staleReason(out: string, repoRoot?: string): string;
/** Records that the output in `out` was built from `inputs` (repository-relative) as they are now. */
export function writeManifest(out: string, repoRoot: string, inputs: string[]): void;
/** Packages loaded only with import() where a mode uses them; the build fails if a deployable imports one statically. */
export const LAZY_PACKAGES: string[];
