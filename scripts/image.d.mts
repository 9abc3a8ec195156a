// Types of scripts/image.mjs, for the TypeScript tests that import it.
export const LOCAL_BASE: string;
export function appVersion(): string;
export function imageRepository(): string;
export function ensureLocalBase(opts?: { log?: (line: string) => void }): string;
export function buildImage(opts?: {
  base?: string;
  localBase?: boolean;
  tags?: string[];
  skipBuild?: boolean;
  /** Where to build the context (default dist/). */
  out?: string;
  log?: (line: string) => void;
}): Promise<{ tags: string[]; id: string; base: string; sizeBytes: number }>;
